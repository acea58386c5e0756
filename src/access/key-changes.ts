import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * Tells every instance sharing a Redis that keys changed (a plan, a status, a rotation, a revoke), over a Redis
 * channel, so that each drops the keys it holds in memory at once rather than after `KEY_CACHE_SECONDS`.
 *
 * No change is missed for long. A change published while this instance was not subscribed (it had just started, or
 * its subscriber's connection was away) never reaches it; so each time the subscription is confirmed, the first
 * and after every reconnection, the listener is called as for a change. A publish while the shared connection is
 * not ready (it queues no command, so that no request waits for Redis) waits for it to be, rather than being lost. The subscription
 * has a connection of its own (Redis's rule for a subscriber), named after its channel (`<REDIS_KEY_PREFIX>keys-changed`) in `CLIENT LIST`.
 */
export class KeyChanges {
  private readonly channel: string;
  private subscriber: Redis | null = null;
  private publishWhenReady = false;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    private readonly logger: Logger,
  ) {
    this.channel = `${keyPrefix}keys-changed`;
  }

  /** Tells the other instances (and this one) that keys changed. Never waits nor throws: a failure is logged. */
  publish(): void {
    if (this.redis.status !== 'ready') {
      // Several changes before the connection is back are one message: each listener drops everything it holds.
      if (!this.publishWhenReady) this.redis.once('ready', () => this.publishQueued());
      this.publishWhenReady = true;
      return;
    }
    this.redis.publish(this.channel, '1').catch((error: Error) => {
      this.logger.warn({ err: error.message }, 'key change not published: other instances see it within KEY_CACHE_SECONDS');
    });
  }

  /**
   * Calls `listener` whenever any instance publishes a change, and each time the subscription is confirmed (a change
   * may have been published while it was not).
   */
  listen(listener: () => void): void {
    // Subscribed by hand at each connection, not by ioredis' own resubscription, so that the listener runs once the
    // server has confirmed it: a change published after that is heard.
    this.subscriber ??= this.redis.duplicate({ enableOfflineQueue: true, autoResubscribe: false, connectionName: this.channel });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (channel: string) => {
      if (channel === this.channel) listener();
    });
    const subscribe = () =>
      this.subscriber
        ?.subscribe(this.channel)
        .then(() => listener())
        .catch((error: Error) => this.logger.warn({ err: error.message }, 'key changes not heard'));
    this.subscriber.on('ready', subscribe);
    if (this.subscriber.status === 'ready') void subscribe();
  }

  close(): void {
    this.subscriber?.disconnect();
    this.subscriber = null;
  }

  private publishQueued(): void {
    this.publishWhenReady = false;
    this.publish();
  }
}
