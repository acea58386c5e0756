import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyChanges } from '../../src/access/key-changes.js';
import { waitFor } from '../helpers/wait.js';

// Key changes between instances on the machine's Redis: a change is not missed by an instance that was not subscribed
// when it was published, nor lost by one whose connection was not ready when it made it.
const URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `nyc-listings-key-changes-${process.pid}-${Date.now()}:`;
const logger = pino({ level: 'silent' });
const opened: { close: () => void }[] = [];
const admin = new Redis(URL);

afterAll(() => {
  for (const o of opened) o.close();
  admin.disconnect();
});

/** An instance's Redis connection as the service opens it: no offline queue (commands fail while disconnected). */
function connection(options: { lazyConnect?: boolean } = {}): Redis {
  const redis = new Redis(URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, ...options });
  redis.on('error', () => undefined);
  opened.push({ close: () => redis.disconnect() });
  return redis;
}

/** An instance's key changes, and how many times its listener was called (its key cache cleared). */
function instance(redis = connection()): { changes: KeyChanges; heard: () => number } {
  const changes = new KeyChanges(redis, prefix, logger);
  opened.push(changes);
  let heard = 0;
  changes.listen(() => heard++);
  return { changes, heard: () => heard };
}

/** The Redis client ids of the subscribers named after `prefix`'s channel, from CLIENT LIST. */
async function subscriberIds(): Promise<string[]> {
  const list = (await admin.client('LIST')) as string;
  return list
    .split('\n')
    .filter((line) => line.includes(` name=${prefix}keys-changed `))
    .map((line) => line.match(/^id=(\d+)/)![1]);
}

describe('key changes across instances', () => {
  it('a subscription confirmed, at first and after its connection was cut, counts as a change; a publish is heard', async () => {
    const b = instance();
    await waitFor(() => b.heard() === 1, 'the first subscription confirmed');
    const a = instance();
    await waitFor(() => a.heard() === 1, "the other instance's subscription confirmed");
    a.changes.publish();
    await waitFor(() => b.heard() === 2 && a.heard() === 2, 'the change heard by both');
    // The subscribers' connections cut by the server, with no change published: each drops its keys once subscribed again.
    const ids = await subscriberIds();
    expect(ids).toHaveLength(2);
    for (const id of ids) await admin.client('KILL', 'ID', id);
    await waitFor(() => b.heard() === 3 && a.heard() === 3, 'both subscribed again, and their keys dropped');
    expect(await subscriberIds()).toHaveLength(2);
    a.changes.publish();
    await waitFor(() => b.heard() === 4, 'a change after the reconnection heard');
  });

  it('a change made while the publishing connection is not ready is published once it is', async () => {
    const b = instance();
    await waitFor(() => b.heard() === 1, 'the subscription confirmed');
    const redis = connection({ lazyConnect: true });
    const a = new KeyChanges(redis, prefix, logger);
    expect(redis.status).toBe('wait');
    a.publish();
    a.publish();
    // Without the wait for the connection, the publish fails at once (no offline queue) and B hears nothing.
    await redis.connect();
    await waitFor(() => b.heard() >= 2, 'the change published once connected');
  });
});
