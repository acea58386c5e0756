import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * Tells every instance sharing a Redis that keys changed (a plan, a status, a rotation, a revoke), over a Redis
 * channel, so that each drops the keys it holds in memory at once rather than after `KEY_CACHE_SECONDS`. A message lost
 * while Redis is away costs only that wait. The subscription has a connection of its own (Redis's rule for a
 * subscriber), which queues its SUBSCRIBE until connected and subscribes again after a reconnection.
 */
export class KeyChanges {
  private readonly channel: string;
  private subscriber: Redis | null = null;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    private readonly logger: Logger,
  ) {
    this.channel = `${keyPrefix}keys-changed`;
  }

  /** Tells the other instances (and this one) that keys changed. Never waits nor throws: a failure is logged. */
  publish(): void {
    this.redis.publish(this.channel, '1').catch((error: Error) => {
      this.logger.warn({ err: error.message }, 'key change not published: other instances see it within KEY_CACHE_SECONDS');
    });
  }

  /** Calls `listener` whenever any instance publishes a change. */
  listen(listener: () => void): void {
    this.subscriber ??= this.redis.duplicate({ enableOfflineQueue: true, lazyConnect: false });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (channel: string) => {
      if (channel === this.channel) listener();
    });
    this.subscriber.subscribe(this.channel).catch((error: Error) => this.logger.warn({ err: error.message }, 'key changes not heard'));
  }

  close(): void {
    this.subscriber?.disconnect();
  }
}
