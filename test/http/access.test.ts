import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { QuotaMeter } from '../../src/access/quota-meter.js';
import { createLogger } from '../../src/app.js';
import { openStore } from '../../src/store/database.js';
import { QuotaRepository } from '../../src/store/quota-repository.js';
import { get } from '../helpers/http.js';
import { useRuntimesPerTest } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// The access layer's caches: keys resolved from memory (a revoke elsewhere seen within the cache's
// time to live), monthly counts written in batches, and one log line a request at a level by outcome.
const runtime = useRuntimesPerTest({ withoutRentHop: true });

describe('keys from memory', () => {
  it('a key revoked by another instance is refused here within KEY_CACHE_SECONDS', async () => {
    const a = await runtime({ KEY_CACHE_SECONDS: '0.5' });
    const b = await runtime({ DATABASE_URL: a.config.databaseUrl }, { initialSync: false, webhooks: false });
    const key = await a.key('pro');
    expect((await get(a.app, '/v1/usage', key)).status).toBe(200);
    // b looks the key up first, so that its cache holds it: a revoke here must clear that.
    expect((await get(b.app, '/v1/usage', key)).status).toBe(200);
    const id = (await b.keys.list()).at(-1)!.id;
    expect(await b.keys.revoke(id, new Date().toISOString())).toBe(true);
    expect((await get(b.app, '/v1/usage', key)).status).toBe(401); // b revoked it itself: at once, its cached key dropped
    await waitFor(async () => (await get(a.app, '/v1/usage', key)).status === 401, 'the other instance to refuse the revoked key');
  });
});

describe('monthly quota in batches', () => {
  it('counts reach the database within QUOTA_FLUSH_SECONDS, another instance sees them, a 304 is given back', async () => {
    const a = await runtime({ QUOTA_FLUSH_SECONDS: '0.1' });
    const b = await runtime({ DATABASE_URL: a.config.databaseUrl, QUOTA_FLUSH_SECONDS: '0.1' }, { initialSync: false, webhooks: false });
    const key = await a.key('starter');
    const first = await a.app.inject({ url: '/v1/property/1545', headers: { authorization: `Bearer ${key}` } });
    await a.app.inject({
      url: '/v1/property/1545',
      headers: { authorization: `Bearer ${key}`, 'if-none-match': String(first.headers.etag) },
    });
    await get(a.app, '/v1/search/rentals?perPage=1', key);
    const stored = async () => Number((await a.store.db.selectFrom('quota_usage').select('used').executeTakeFirst())?.used ?? 0);
    await waitFor(async () => (await stored()) === 2, 'two counted requests written (the 304 given back)');
    // b has not seen this key yet: it reads the stored month, then counts its own request on top.
    expect((await get(b.app, '/v1/usage', key)).body.data.month.used).toBe(2);
  });
});

describe('request logs', () => {
  it('a quick success is logged at debug, a client error and a slow answer at info', async () => {
    let text = '';
    const sink = new Writable({
      write: (chunk, _enc, done) => {
        text += chunk.toString();
        done();
      },
    });
    // Quick means under SLOW_REQUEST_MS: a minute here, since a fresh runtime's first detail also builds the estimates'
    // comparables, which on a busy machine took past the default second.
    const rt = await runtime({ SLOW_REQUEST_MS: '60000' }, { logger: createLogger('info', sink) });
    const key = await rt.key('pro');
    await get(rt.app, '/v1/property/1545', key);
    expect(text).not.toContain('/v1/property/1545');
    const missing = await get(rt.app, '/v1/property/no-such-listing-anywhere', key);
    const bogus = await get(rt.app, '/v1/search/sales?bogus=1', key);
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'request answered');
    // Each line names its request by the id the answer carries (the request's logger is made when it first logs).
    expect(lines.map((l) => [l.level, l.statusCode, l.url, l.reqId])).toEqual([
      [30, 404, '/v1/property/no-such-listing-anywhere', missing.headers['x-request-id']],
      [30, 400, '/v1/search/sales?bogus=1', bogus.headers['x-request-id']],
    ]);
    expect(missing.headers['x-request-id']).not.toBe(bogus.headers['x-request-id']);
    const slow = await runtime({ SLOW_REQUEST_MS: '0' }, { logger: createLogger('info', sink) });
    await get(slow.app, '/v1/health');
    expect(text).toMatch(/"level":30,.*"url":"\/v1\/health","statusCode":200,"ms":[0-9.]+,"msg":"slow request answered"/);
  });
});

describe('monthly counts written in batches', () => {
  it('a request counted while a flush is being written goes into the next flush, never lost (issue 29: pending -= written)', async () => {
    const store = await openStore(join(mkdtempSync(join(tmpdir(), 'quota-')), 'quota.db'));
    try {
      const repository = new QuotaRepository(store.db);
      // The real repository, its write held until the test lets it go: a request then arrives mid-write.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let writing!: () => void;
      const started = new Promise<void>((resolve) => (writing = resolve));
      const gated = Object.assign(Object.create(repository) as QuotaRepository, {
        addAll: async (items: Parameters<QuotaRepository['addAll']>[0]) => {
          writing();
          await held;
          return repository.addAll(items);
        },
      });
      const meter = new QuotaMeter(gated, 3600, pino({ level: 'silent' }));
      expect(await meter.count('key:a', '2026-11')).toBe(1);
      const first = meter.flush();
      await started;
      expect(await meter.count('key:a', '2026-11')).toBe(2);
      release();
      await first;
      expect(await repository.used('key:a', '2026-11')).toBe(1);
      await meter.flush();
      expect(await repository.used('key:a', '2026-11')).toBe(2);
      expect(await meter.used('key:a', '2026-11')).toBe(2);
    } finally {
      await store.close();
    }
  });
});
