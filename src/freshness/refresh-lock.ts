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

/**
 * {@link RefreshLock} in Redis: `SET key token NX PX ttl`, released only by its holder. While Redis
 * cannot answer, every instance proceeds on its own (single flight stays per instance) rather than
 * letting data go unrefreshed.
 */
export class RedisRefreshLock implements RefreshLock {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
    private readonly ttlMs = 10 * 60_000,
  ) {}

  async acquire(key: string): Promise<(() => Promise<void>) | null> {
    const name = `${this.prefix}refresh-lock:${key}`;
    const token = randomUUID();
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
