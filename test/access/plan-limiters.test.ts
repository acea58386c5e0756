import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthOf, PlanLimiters, WINDOW_SECONDS } from '../../src/access/plan-limiters.js';
import { loadConfig, PLANS } from '../../src/config.js';

// Per-minute limits by plan (src/access/plan-limiters.ts), in process and in the machine's Redis.
const config = loadConfig({ RATE_LIMIT_FREE_PER_MINUTE: '3', RATE_LIMIT_STARTER_PER_MINUTE: '5' });

describe('the month of an instant', () => {
  it.each([
    ['2026-11-24T12:00:00.000Z', '2026-11', 6 * 86_400 + 12 * 3_600],
    ['2026-11-30T23:59:59.500Z', '2026-11', 1],
    ['2026-12-01T00:00:00.000Z', '2026-12', 31 * 86_400],
    ['2026-12-31T23:59:59.000Z', '2026-12', 1],
    ['2027-01-01T00:00:00.000Z', '2027-01', 31 * 86_400],
    ['2026-11-30T23:59:58.200Z', '2026-11', 2],
    ['2028-02-28T00:00:00.000Z', '2028-02', 2 * 86_400],
  ])('%s is in %s, with %s s to the next month', (at, month, secondsLeft) => {
    expect(monthOf(new Date(at))).toEqual({ month, day: at.slice(0, 10), secondsLeft });
  });

  it('the remembered month is left when an instant falls before or after it', () => {
    expect(monthOf(new Date('2026-11-15T00:00:00Z')).month).toBe('2026-11');
    expect(monthOf(new Date('2026-10-31T23:59:59Z')).month).toBe('2026-10');
    expect(monthOf(new Date('2026-11-01T00:00:00Z')).month).toBe('2026-11');
  });
});

const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
beforeAll(() => redis.connect());
afterAll(() => redis.disconnect());

describe.each([
  ['in process', null],
  ['in Redis', redis],
] as const)('per-minute limits, %s', (_where, client) => {
  let prefix = '';
  const limiters = () => {
    prefix = `test:${randomUUID()}:`;
    return new PlanLimiters(config, client, prefix);
  };

  it('each plan allows its own number a minute per subject, then refuses with the time to wait', async () => {
    const l = limiters();
    for (let i = 1; i <= 3; i++) expect((await l.consume('free', 'ip:1')).remainingPoints).toBe(3 - i);
    const refused = await l.consume('free', 'ip:1').then(
      () => null,
      (state) => state,
    );
    expect(refused.remainingPoints).toBe(0);
    expect(refused.msBeforeNext).toBeGreaterThan(0);
    expect(refused.msBeforeNext).toBeLessThanOrEqual(WINDOW_SECONDS * 1000);
    // Another subject, and the same subject on another plan, count apart.
    expect((await l.consume('free', 'ip:2')).remainingPoints).toBe(2);
    expect((await l.consume('starter', 'ip:1')).remainingPoints).toBe(4);
    expect(PLANS.length).toBe(4);
    // In Redis the count is Redis's own: another instance's limiter sees it.
    if (client) expect((await new PlanLimiters(config, client, prefix).used('free', 'ip:1')).used).toBe(4);
  });

  it("used reports the minute's count and the seconds to its end; nothing counted is 0 and a whole window", async () => {
    const l = limiters();
    expect(await l.used('starter', 'key:x')).toEqual({ used: 0, resetSeconds: WINDOW_SECONDS });
    await l.consume('starter', 'key:x');
    await l.consume('starter', 'key:x');
    const used = await l.used('starter', 'key:x');
    expect(used.used).toBe(2);
    expect(used.resetSeconds).toBeGreaterThan(0);
    expect(used.resetSeconds).toBeLessThanOrEqual(WINDOW_SECONDS);
  });

  it('a request given back is not counted', async () => {
    const l = limiters();
    await l.consume('free', 'ip:1');
    await l.consume('free', 'ip:1');
    await l.refund('free', 'ip:1');
    expect((await l.used('free', 'ip:1')).used).toBe(1);
  });
});

describe('per-minute limits while Redis is away', () => {
  it('the in-process limiter takes over at once, with the same limits', async () => {
    const away = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const l = new PlanLimiters(config, away, 'test:away:');
    for (let i = 1; i <= 3; i++) await l.consume('free', 'ip:1');
    await expect(l.consume('free', 'ip:1')).rejects.toMatchObject({ remainingPoints: 0 });
    away.disconnect();
  });
});
