import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { RefreshCoordinator } from '../freshness/coordinator.js';
import { RedisRefreshLock, type RefreshLock } from '../freshness/refresh-lock.js';

/** What instances share: the Redis connection (null without `REDIS_URL`) and the refreshes' coordinator with its lock. */
export interface Coordination {
  redis: Redis | null;
  coordinator: RefreshCoordinator;
  /** Drops the refreshes queued, waits for those running ({@link RefreshCoordinator.close}), then closes the Redis connection. */
  stop: () => Promise<void>;
}

/**
 * Connects to Redis when `REDIS_URL` is set (never making a request wait, see {@link connectRedis}) and builds the
 * coordinator, its refreshes under `lock` when given (the background thread's), else under Redis' lock when set.
 */
export function startCoordination(config: Config, logger: Logger, given?: RefreshLock): Coordination {
  const redis = config.redisUrl ? connectRedis(config.redisUrl, logger) : null;
  const lock = given ?? (redis ? new RedisRefreshLock(redis, config.redisKeyPrefix, logger) : null);
  const coordinator = new RefreshCoordinator(logger, 2, 100, lock);
  return {
    redis,
    coordinator,
    stop: async () => {
      await coordinator.close();
      redis?.disconnect();
    },
  };
}

/**
 * A Redis client that never makes a request wait: no offline queue (commands fail at once while
 * disconnected), short connect and command timeouts, one retry, reconnection in the background.
 * Connection errors are logged once per outage.
 */
function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    connectTimeout: 500,
    commandTimeout: 500,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 250, 5000),
  });
  let down = false;
  redis.on('error', (error: Error) => {
    if (!down) logger.warn({ err: error.message }, 'redis unreachable: rate limits fall back to in-process counters');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info('redis reachable again: shared rate limits resume');
    down = false;
  });
  return redis;
}
