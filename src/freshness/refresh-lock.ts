import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** A lock that keeps one refresh per key running across every instance of the service. */
export interface RefreshLock {
  /** Takes the lock for `ttlMs`; resolves with its release, or null when another instance holds it. */
  acquire(key: string): Promise<(() => Promise<void>) | null>;
  /** Whether any instance holds the lock of `key`. */
  isHeld(key: string): Promise<boolean>;
}

const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** Resolves when `redis` is ready, or after `ms` milliseconds, whichever comes first. */
async function readyWithin(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready' || redis.status === 'end') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

/**
 * {@link RefreshLock} in Redis: `SET key token NX PX ttl`, released only by its holder. While Redis is still
 * connecting (an instance that has just started), taking the lock waits for it, up to `connectWaitMs`; while Redis
 * cannot answer after that, every instance proceeds on its own (single flight stays per instance) rather than
 * letting data go unrefreshed.
 */
export class RedisRefreshLock implements RefreshLock {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
    private readonly ttlMs = 10 * 60_000,
    private readonly connectWaitMs = 5_000,
  ) {}

  async acquire(key: string): Promise<(() => Promise<void>) | null> {
    const name = `${this.prefix}refresh-lock:${key}`;
    const token = randomUUID();
    await readyWithin(this.redis, this.connectWaitMs);
    try {
      if ((await this.redis.set(name, token, 'PX', this.ttlMs, 'NX')) !== 'OK') return null;
    } catch (error) {
      this.logger.warn({ key, err: (error as Error).message }, 'refresh lock unavailable; refreshing without it');
      return async () => undefined;
    }
    return async () => {
      await this.redis.eval(RELEASE, 1, name, token).catch(() => undefined);
    };
  }

  async isHeld(key: string): Promise<boolean> {
    try {
      return (await this.redis.exists(`${this.prefix}refresh-lock:${key}`)) === 1;
    } catch {
      return false;
    }
  }
}
