import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';

// Every cache keyed by parts of a request, proven part by part (docs/performance.md, the key of each cache): two
// requests that differ in one part only, one after the other, each get their own answer, the answer a runtime without
// the cache gives. A key that lost any part would give the second request the first one's answer, and fail here.
let cached: TestRuntime;
let plain: TestRuntime;
const keys: Record<string, { cached: string; plain: string }> = {};

beforeAll(async () => {
  // Answers are kept for the whole file: nothing expires between the two requests of a pair.
  cached = await startTestRuntime({ READ_CACHE_SECONDS: '600', KEY_CACHE_SECONDS: '600' }, { withoutRentHop: true });
  plain = await startTestRuntime({ ANSWER_CACHE_MB: '0', READ_CACHE_SECONDS: '0', KEY_CACHE_SECONDS: '0' }, { withoutRentHop: true });
  for (const plan of ['starter', 'pro'] as const) keys[plan] = { cached: await cached.key(plan), plain: await plain.key(plan) };
});
afterAll(async () => {
  await cached?.close();
  await plain?.close();
});

interface Asked {
  url: string;
  plan?: 'starter' | 'pro';
  headers?: Record<string, string>;
}

/** An answer as a client reads it: status, media type, encoding, and the body decoded and parsed. */
function read(res: LightMyRequestResponse) {
  const encoding = res.headers['content-encoding'];
  const raw = encoding === 'br' ? brotliDecompressSync(res.rawPayload) : encoding === 'gzip' ? gunzipSync(res.rawPayload) : res.rawPayload;
  const type = String(res.headers['content-type']);
  return {
    status: res.statusCode,
    type,
    encoding: encoding ?? null,
    body: type.includes('json') ? JSON.parse(raw.toString()) : raw.toString(),
  };
}

const ask = async (rt: TestRuntime, which: 'cached' | 'plain', asked: Asked) =>
  read(
    await rt.app.inject({
      url: asked.url,
      headers: { ...(asked.plan ? { authorization: `Bearer ${keys[asked.plan][which]}` } : {}), ...asked.headers },
    }),
  );

/** Asks `a` until the answer cache keeps it, then `b`: each must get the answer a runtime without the cache gives. */
async function pair(a: Asked, b: Asked): Promise<void> {
  const [expectedA, expectedB] = [await ask(plain, 'plain', a), await ask(plain, 'plain', b)];
  // The pair is one the key must tell apart: their answers differ.
  expect(expectedB).not.toEqual(expectedA);
  const hits = async () => (await cached.metrics.answerCache.get()).values.find((v) => v.labels.outcome === 'hit')?.value ?? 0;
  for (let i = 0; i < 2; i++) expect(await ask(cached, 'cached', a)).toEqual(expectedA);
  const before = await hits();
  expect(await ask(cached, 'cached', a)).toEqual(expectedA);
  // A's answer is kept (the third ask was a hit): B, asked now, would be given it by a key without the part.
  expect(await hits()).toBe(before + 1);
  expect(await ask(cached, 'cached', b)).toEqual(expectedB);
}

describe("the answer cache's key, part by part", () => {
  it('the URL', () => pair({ url: '/v1/search/rentals?areas=300&perPage=4' }, { url: '/v1/search/rentals?areas=300&perPage=3' }));

  it("the caller's plan (the page size it caps)", () =>
    pair(
      { url: '/v1/search/rentals?areas=200&perPage=60', plan: 'starter' },
      { url: '/v1/search/rentals?areas=200&perPage=60', plan: 'pro' },
    ));

  it('Accept (the format of a search)', () =>
    pair(
      { url: '/v1/search/sales?areas=100&perPage=2', headers: { accept: 'application/json' } },
      { url: '/v1/search/sales?areas=100&perPage=2', headers: { accept: 'application/geo+json' } },
    ));

  it('Accept-Encoding', () =>
    pair(
      { url: '/v1/search/rentals?areas=100&perPage=20', headers: { 'accept-encoding': 'gzip' } },
      { url: '/v1/search/rentals?areas=100&perPage=20', headers: { 'accept-encoding': 'br' } },
    ));

  it('X-No-Compression', () =>
    pair(
      { url: '/v1/search/rentals?areas=200&perPage=21', headers: { 'accept-encoding': 'br' } },
      { url: '/v1/search/rentals?areas=200&perPage=21', headers: { 'accept-encoding': 'br', 'x-no-compression': '1' } },
    ));

  it("this process's writes to the mirror", async () => {
    const url = '/v1/property/1545';
    for (let i = 0; i < 3; i++) await ask(cached, 'cached', { url, plan: 'pro' });
    const price = (await ask(cached, 'cached', { url, plan: 'pro' })).body.data.price as number;
    // Written behind this process's back (as by another instance): the kept answer is still given.
    await cached.store.db
      .updateTable('listings')
      .set({ price: price + 7 })
      .where('id', '=', '1545')
      .execute();
    expect((await ask(cached, 'cached', { url, plan: 'pro' })).body.data.price).toBe(price);
    // A write this process makes (a scope's sync moves its write counts): the next ask is answered afresh.
    await cached.syncer.syncScope('rental', 500);
    expect((await ask(cached, 'cached', { url, plan: 'pro' })).body.data.price).toBe(price + 7);
  });
});

describe('the key cache and the digest of an Authorization value', () => {
  it('two keys, one after the other, are each their own: plan and month counted apart', async () => {
    const usage = async (plan: 'starter' | 'pro') => (await ask(cached, 'cached', { url: '/v1/usage', plan })).body.data;
    await ask(cached, 'cached', { url: '/v1/areas?level=0', plan: 'starter' });
    const [starter, pro] = [await usage('starter'), await usage('pro')];
    expect([starter.plan, pro.plan]).toEqual(['starter', 'pro']);
    await ask(cached, 'cached', { url: '/v1/areas?level=0', plan: 'pro' });
    await ask(cached, 'cached', { url: '/v1/areas?level=0', plan: 'pro' });
    expect((await usage('starter')).month.used).toBe(starter.month.used);
    expect((await usage('pro')).month.used).toBe(pro.month.used + 2);
  });
});

describe("the area lists' key, part by part", () => {
  it.each([
    ['the level', { level: 0 }, { level: 1 }],
    ['the borough', { level: 2, borough: 100 }, { level: 2, borough: 200 }],
  ])('%s', async (_part, a, b) => {
    // Read through the read service: the answer cache would stand in front of the area lists' memo.
    const [keptA, keptB] = [(await cached.reads.areas(a)).areas, (await cached.reads.areas(b)).areas];
    expect(keptA).not.toEqual(keptB);
    expect(keptA).toEqual((await plain.reads.areas(a)).areas);
    expect(keptB).toEqual((await plain.reads.areas(b)).areas);
  });
});
