import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisRefreshLock } from '../../src/freshness/refresh-lock.js';
import { importKeys } from '../../src/keys/key-admin.js';
import { expectProblem, get } from '../helpers/http.js';
import { TEMPLATE_WITHOUT_RENTHOP_DB } from '../helpers/paths.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

const started: TestRuntime[] = [];
afterAll(async () => {
  for (const rt of started) await rt.close();
});
async function runtime(env: Record<string, string> = {}) {
  const rt = await startTestRuntime(env, { realLimits: true, withoutRentHop: true });
  started.push(rt);
  return rt;
}
const prefix = () => `test-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}:`;

describe('per-minute limits', () => {
  it('anonymous: 10 answers, then 429 RATE_LIMIT_EXCEEDED with Retry-After; headers count down', async () => {
    const rt = await runtime();
    for (let i = 1; i <= 10; i++) {
      const res = await get(rt.app, '/v1/search/rentals?perPage=1');
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('10');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(10 - i));
      expect(res.headers['ratelimit-policy']).toBe('"per-minute";q=10;w=60');
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"per-minute";r=${10 - i};t=\\d+$`));
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    }
    const body = await expectProblem(rt.app, '/v1/search/rentals?perPage=1', 429, 'RATE_LIMIT_EXCEEDED');
    const res = await get(rt.app, '/v1/search/sales');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(body.retryAfter).toBeGreaterThan(0);
    // Another client is not affected, and neither is a key.
    const other = await rt.app.inject({ url: '/v1/search/rentals', remoteAddress: '127.0.0.2' });
    expect(other.statusCode).toBe(200);
    expect((await get(rt.app, '/v1/search/rentals', await rt.key('starter'))).status).toBe(200);
  });

  it('each plan gets exactly its limit (starter 30, pro 60, business 120)', async () => {
    const rt = await runtime();
    for (const [plan, limit] of [
      ['starter', 30],
      ['pro', 60],
      ['business', 120],
    ] as const) {
      const key = await rt.key(plan);
      const statuses = [];
      for (let i = 0; i < limit + 2; i++) statuses.push((await get(rt.app, '/v1/areas?level=0', key)).status);
      expect(statuses.filter((s) => s === 200).length, plan).toBe(limit);
      expect(statuses.slice(limit)).toEqual([429, 429]);
    }
  });
});

describe('client IP of anonymous callers', () => {
  const burst = async (rt: TestRuntime, forwardedFor: string) => {
    const statuses = [];
    for (let i = 0; i < 11; i++) {
      statuses.push(
        (await rt.app.inject({ url: '/v1/search/rentals?perPage=1', headers: { 'x-forwarded-for': forwardedFor } })).statusCode,
      );
    }
    return statuses.filter((s) => s === 200).length;
  };

  it('X-Forwarded-For is honoured only with TRUST_PROXY', async () => {
    const trusting = await runtime({ TRUST_PROXY: 'true' });
    expect(await burst(trusting, '203.0.113.7')).toBe(10);
    expect(await burst(trusting, '203.0.113.8')).toBe(10);
    const plain = await runtime();
    expect(await burst(plain, '203.0.113.7')).toBe(10);
    expect(await burst(plain, '203.0.113.8')).toBe(0);
  });
});

describe('monthly quota', () => {
  it('429 QUOTA_EXCEEDED after the quota, and a restart does not reset the month', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quota-'));
    const db = join(dir, 'mirror.db');
    copyFileSync(TEMPLATE_WITHOUT_RENTHOP_DB, db);
    const env = { DATABASE_URL: db, QUOTA_FREE_PER_MONTH: '5' };
    const first = await startTestRuntime(env, { realLimits: true, withoutRentHop: true });
    const key = await first.key('free');
    for (let i = 0; i < 5; i++) expect((await get(first.app, '/v1/search/rentals?perPage=1', key)).status).toBe(200);
    const body = await expectProblem(first.app, '/v1/search/rentals', 429, 'QUOTA_EXCEEDED', key);
    expect(body.retryAfter).toBeGreaterThan(0);
    await first.close();
    const second = await startTestRuntime(env, { realLimits: true, withoutRentHop: true });
    started.push(second);
    await expectProblem(second.app, '/v1/search/rentals', 429, 'QUOTA_EXCEEDED', key);
    expect((await get(second.app, '/v1/usage', key)).body.data.month).toMatchObject({ used: 5, remaining: 0 });
  });

  it('the quota is per calendar month in UTC: refused until the month ends, with Retry-After to that second, then counted afresh', async () => {
    let now = Date.parse('2026-11-30T23:59:50Z');
    const rt = await startTestRuntime(
      { QUOTA_FREE_PER_MONTH: '2' },
      { realLimits: true, withoutRentHop: true, clock: () => new Date(now) },
    );
    started.push(rt);
    const key = await rt.key('free');
    for (let i = 0; i < 2; i++) expect((await get(rt.app, '/v1/areas?level=0', key)).status).toBe(200);
    const refused = await expectProblem(rt.app, '/v1/areas?level=0', 429, 'QUOTA_EXCEEDED', key);
    expect(refused.retryAfter).toBe(10);
    now += 4_000;
    expect((await get(rt.app, '/v1/usage', key)).body.data.month).toMatchObject({
      month: '2026-11',
      used: 2,
      remaining: 0,
      resetSeconds: 6,
    });
    now = Date.parse('2026-12-01T00:00:05Z');
    expect((await get(rt.app, '/v1/areas?level=0', key)).status).toBe(200);
    expect((await get(rt.app, '/v1/usage', key)).body.data.month).toMatchObject({ month: '2026-12', used: 1, remaining: 1 });
  });
});

describe('limits shared through Redis', () => {
  it('two instances sharing one Redis allow exactly the limit together', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shared-'));
    const db = join(dir, 'mirror.db');
    copyFileSync(TEMPLATE_WITHOUT_RENTHOP_DB, db);
    const env = { DATABASE_URL: db, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: prefix() };
    const a = await runtime(env);
    const b = await runtime(env);
    await waitReady(a);
    await waitReady(b);
    const key = await a.key('starter');
    const statuses = [];
    for (let i = 0; i < 40; i++) statuses.push((await get(i % 2 ? b.app : a.app, '/v1/areas?level=0', key)).status);
    expect(statuses.filter((s) => s === 200).length).toBe(30);
    // Anonymous callers too: 10 in all across both instances.
    const anon = [];
    for (let i = 0; i < 14; i++) anon.push((await get(i % 2 ? b.app : a.app, '/v1/search/rentals?perPage=1')).status);
    expect(anon.filter((s) => s === 200).length).toBe(10);
  });

  it('one key imported into two databases is counted once: instances sharing Redis count per key digest', async () => {
    const redisPrefix = prefix();
    const instances: TestRuntime[] = [];
    for (let i = 0; i < 2; i++) {
      const db = join(mkdtempSync(join(tmpdir(), 'digest-')), 'mirror.db');
      copyFileSync(TEMPLATE_WITHOUT_RENTHOP_DB, db);
      instances.push(await runtime({ DATABASE_URL: db, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: redisPrefix }));
    }
    const key = 'SERVICE_3e2c5f4b-0a7d-4c6e-8f5b-8d9e0f1a2b3c';
    for (const rt of instances) {
      await waitReady(rt);
      await importKeys(rt.keys, rt.config, 'keys.json', JSON.stringify([{ key, plan: 'starter' }]));
    }
    const ids = await Promise.all(instances.map(async (rt) => (await rt.keys.list()).at(-1)!.id));
    expect(ids[0]).not.toBe(ids[1]);
    const statuses = [];
    for (let i = 0; i < 40; i++) statuses.push((await get(instances[i % 2].app, '/v1/areas?level=0', key)).status);
    expect(statuses.filter((s) => s === 200).length).toBe(30);
  });

  it('with Redis on a closed port, requests never wait for it and limits hold in-process', async () => {
    const rt = await runtime({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}`, REDIS_KEY_PREFIX: prefix() });
    const statuses = [];
    for (let i = 0; i < 12; i++) {
      statuses.push((await get(rt.app, '/v1/search/rentals?perPage=1')).status);
      // Answered while Redis was never reachable: nothing waited for a connection.
      expect(rt.redis!.status).not.toBe('ready');
    }
    expect(statuses.filter((s) => s === 200).length).toBe(10);
  });

  it('Redis stopped mid-test: every answer comes without waiting for it', async () => {
    const port = await closedPort();
    const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    try {
      const rt = await runtime({ REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_KEY_PREFIX: prefix() });
      await waitReady(rt);
      const key = await rt.key('pro');
      for (let i = 0; i < 5; i++) expect((await get(rt.app, '/v1/areas?level=0', key)).status).toBe(200);
      expect(rt.redis!.status).toBe('ready');
      await stop(redis);
      await waitFor(() => rt.redis!.status !== 'ready', 'the client to notice Redis is gone');
      for (let i = 0; i < 20; i++) {
        const res = await get(rt.app, '/v1/areas?level=0', key);
        expect(res.status).toBe(200);
        // Answered while Redis was down: the request did not wait for it to come back.
        expect(rt.redis!.status).not.toBe('ready');
      }
    } finally {
      redis.kill('SIGKILL');
    }
  });
});

async function waitReady(rt: TestRuntime) {
  await waitFor(() => rt.redis!.status === 'ready', 'Redis connection ready');
}

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('refreshes across instances', () => {
  it('a refresh lock asked for while Redis is still connecting waits for the connection, then holds across instances', async () => {
    const name = prefix();
    const clients = [0, 1].map(() => new Redis('redis://127.0.0.1:6379', { enableOfflineQueue: false, lazyConnect: true }));
    try {
      const [one, two] = clients.map((redis) => new RedisRefreshLock(redis, name, pino({ level: 'silent' })));
      for (const redis of clients) void redis.connect();
      expect(clients.map((redis) => redis.status)).not.toContain('ready');
      const release = await one.acquire('rental:300');
      expect(release).not.toBeNull();
      expect(await clients[0].exists(`${name}refresh-lock:rental:300`)).toBe(1);
      // Not a lock of this instance alone: the other is refused until it is released.
      expect(await two.acquire('rental:300')).toBeNull();
      await release!();
      const again = await two.acquire('rental:300');
      expect(again).not.toBeNull();
      await again!();
    } finally {
      for (const redis of clients) redis.disconnect();
    }
  });

  it('two instances sharing Redis start one refresh of a stale scope between them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-'));
    const db = join(dir, 'mirror.db');
    copyFileSync(TEMPLATE_WITHOUT_RENTHOP_DB, db);
    let now = Date.now();
    const env = {
      DATABASE_URL: db,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: prefix(),
      RATE_LIMIT_BUSINESS_PER_MINUTE: '1000',
    };
    const options = { realLimits: true, withoutRentHop: true, clock: () => new Date(now) };
    const a = await startTestRuntime(env, options);
    const b = await startTestRuntime(env, options);
    started.push(a, b);
    await waitReady(a);
    await waitReady(b);
    // Hold both upstreams, so the first refresh is still running when the second instance is asked.
    const releaseA = a.upstream!.pause();
    const releaseB = b.upstream!.pause();
    const key = await a.key('business');
    now += 2 * 3_600_000;
    const before = a.upstream!.requestCount() + b.upstream!.requestCount();
    const first = await get(a.app, '/v1/search/rentals?areas=300&perPage=1', key);
    expect(first.body.meta).toMatchObject({ source: 'stale', refreshTriggered: true });
    await waitFor(() => a.coordinator.isRunningAnywhere('rental:300'), 'the refresh lock taken in Redis');
    await waitFor(() => a.upstream!.requestCount() + b.upstream!.requestCount() > before, 'the refresh asking the upstream');
    const second = await get(b.app, '/v1/search/rentals?areas=300&perPage=1', key);
    expect(second.body.meta).toMatchObject({ source: 'refreshing', refreshTriggered: false });
    releaseA();
    releaseB();
    await a.coordinator.idle();
    await b.coordinator.idle();
    expect(a.upstream!.requestCount() + b.upstream!.requestCount() - before).toBe(1); // Queens rentals of the sample fit one page of 500
  });
});
