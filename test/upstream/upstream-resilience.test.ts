import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/app.js';
import { get } from '../helpers/http.js';
import { useRuntimesPerTest } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// How the service treats a busy or failing upstream: interactive lookups first, a bounded queue, no
// refresh storms while the breaker is open, state changes logged once, and health a balancer can act on.
const runtime = useRuntimesPerTest({ withoutRentHop: true });

/** Names the root field of a GraphQL query the local upstream received. */
const rootField = (query: string) => /\{\s*(?:\w+\s*:\s*)?(\w+)/.exec(query)?.[1];

describe('upstream queue', () => {
  it('a lookup a caller waits for goes before queued background crawls', async () => {
    const rt = await runtime({ UPSTREAM_CONCURRENCY: '1' });
    const key = await rt.key('pro');
    await rt.store.db.deleteFrom('listings').where('id', '=', '1545').execute();
    const release = rt.upstream!.pause();
    const seenBefore = rt.upstream!.queries.length;
    // Three background crawls: one request in flight (held), two waiting.
    const crawls = [rt.syncer.syncScope('rental', 300), rt.syncer.syncScope('rental', 200), rt.syncer.syncScope('rental', 100)];
    await waitFor(() => rt.client.queued() === 2, 'two crawl pages queued');
    const lookup = get(rt.app, '/v1/property/1545', key);
    await waitFor(() => rt.client.queued() === 3, 'the lookup queued');
    release();
    const answer = await lookup;
    expect(answer.status).toBe(200);
    await Promise.all(crawls);
    const order = rt.upstream!.queries.slice(seenBefore).map(rootField);
    // The held crawl page first, then the lookup, before the crawl pages that were queued before it.
    expect(order[0]).toBe('searchRentals');
    expect(order[1]).toBe('rentalByListingId');
  });

  it('when the queue is full, a lookup is refused at once: 503 UPSTREAM_BUSY with Retry-After, nothing stored changes', async () => {
    const rt = await runtime({ UPSTREAM_CONCURRENCY: '1', UPSTREAM_MAX_QUEUED: '2' });
    const key = await rt.key('pro');
    const release = rt.upstream!.pause();
    const crawls = [rt.syncer.syncScope('rental', 300), rt.syncer.syncScope('rental', 200), rt.syncer.syncScope('rental', 100)];
    await waitFor(() => rt.client.queued() === 2, 'two crawl pages queued');
    const before = await rt.listings.count();
    const res = await get(rt.app, '/v1/property/999999999', key);
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('UPSTREAM_BUSY');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(await rt.listings.count()).toBe(before);
    release();
    await Promise.all(crawls);
  });
});

describe('a request that waits for the upstream', () => {
  it('is answered 504 UPSTREAM_TIMEOUT with Retry-After at REQUEST_DEADLINE_SECONDS; the lookup goes on, joined by the next call, which finds it done', async () => {
    const rt = await runtime({ REQUEST_DEADLINE_SECONDS: '0.5' });
    const key = await rt.key('pro');
    await rt.store.db.deleteFrom('listings').where('id', '=', '1545').execute();
    const release = rt.upstream!.pause();
    const seenBefore = rt.upstream!.queries.length;
    const started = Date.now();
    const first = await get(rt.app, '/v1/property/1545', key);
    // Bounded by the deadline, not by the upstream's timeout (UPSTREAM_TIMEOUT_SECONDS, 15 s, three attempts, two kinds).
    expect(Date.now() - started).toBeLessThan(10_000);
    expect({ status: first.status, code: first.body.code, retryAfter: first.headers['retry-after'] }).toEqual({
      status: 504,
      code: 'UPSTREAM_TIMEOUT',
      retryAfter: '5',
    });
    // Asked again while the lookup is held: it joins the same lookup, which asked the upstream once.
    const arrived = rt.upstream!.requestCount();
    expect((await get(rt.app, '/v1/property/1545', key)).status).toBe(504);
    expect(rt.upstream!.requestCount()).toBe(arrived);
    release();
    await waitFor(async () => (await rt.listings.findById('1545')) !== undefined, 'the lookup stored the listing in the background');
    const next = await get(rt.app, '/v1/property/1545', key);
    expect(next.status).toBe(200);
    expect(next.body.data.id).toBe('1545');
    expect(rt.upstream!.queries.slice(seenBefore).some((q) => rootField(q) === 'rentalByListingId' && q.includes('1545'))).toBe(true);
  });
});

describe('an open breaker', () => {
  it('starts no refresh, answers stored data as stale, and is logged once', async () => {
    let text = '';
    const sink = new Writable({
      write: (chunk, _enc, done) => {
        text += chunk.toString();
        done();
      },
    });
    let now = Date.now();
    const rt = await runtime(
      { UPSTREAM_BREAKER_THRESHOLD: '2', UPSTREAM_BREAKER_HALF_OPEN_SECONDS: '3600', UPSTREAM_MAX_ATTEMPTS: '1' },
      { clock: () => new Date(now), logger: createLogger('info', sink) },
    );
    const key = await rt.key('business');
    rt.upstream!.faults.errorRate = 1;
    now += 2 * 3_600_000;
    // Stale searches start refreshes until the breaker opens.
    for (let i = 0; i < 20 && rt.client.circuitState() !== 'open'; i++) {
      await get(rt.app, '/v1/search/rentals?perPage=1', key);
      await rt.coordinator.idle();
    }
    expect(rt.client.circuitState()).toBe('open');
    const upstreamBefore = rt.upstream!.requestCount();
    const warnings = () => text.split('\n').filter((line) => /"level":(40|50)/.test(line)).length;
    const warningsBefore = warnings();
    for (let i = 0; i < 200; i++) {
      const res = await get(rt.app, `/v1/search/${i % 2 ? 'sales' : 'rentals'}?perPage=1`, key);
      expect(res.status).toBe(200);
      expect(res.body.meta).toMatchObject({ source: 'stale', refreshTriggered: false });
    }
    await rt.coordinator.idle();
    expect(rt.upstream!.requestCount()).toBe(upstreamBefore);
    expect(warnings()).toBe(warningsBefore);
    expect(text.match(/upstream circuit opened/g)?.length).toBe(1);
    const health = await get(rt.app, '/v1/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', upstream: { circuit: 'open' } });
  });
});

describe('health for a load balancer', () => {
  it("ok while every scope syncs; degraded when a scope's last sync failed; ok again after a success", async () => {
    const rt = await runtime();
    expect((await get(rt.app, '/v1/health')).body.status).toBe('ok');
    rt.upstream!.faults.errorRate = 1;
    await expect(rt.syncer.syncScope('rental', 300)).rejects.toThrow();
    const failing = await get(rt.app, '/v1/health');
    expect(failing.status).toBe(200);
    expect(failing.body.status).toBe('degraded');
    expect(failing.body.upstream.circuit).toBe('closed');
    expect(failing.body.scopes.find((s: { scope: string }) => s.scope === 'rental:300')).toMatchObject({ failing: true });
    rt.upstream!.faults.errorRate = 0;
    await rt.syncer.syncScope('rental', 300);
    expect((await get(rt.app, '/v1/health')).body.status).toBe('ok');
  });

  it('503 unavailable while the mirror holds nothing to serve', async () => {
    const rt = await runtime({}, { fresh: true, initialSync: false });
    const res = await get(rt.app, '/v1/health');
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('unavailable');
    await rt.syncer.syncAll({ hydrate: false });
    expect((await get(rt.app, '/v1/health')).body.status).toBe('ok');
  });
});

describe('a first request on an empty mirror', () => {
  it('concurrent searches share one area sync: the upstream is asked for its areas once', async () => {
    const rt = await runtime({}, { fresh: true, initialSync: false });
    const key = await rt.key('pro');
    const asked = () => rt.upstream!.queries.filter((q) => q.startsWith('query { areas')).length;
    expect(asked()).toBe(0);
    // Held until all five are waiting, so that they overlap whatever the machine's speed.
    const release = rt.upstream!.pause();
    const answers = Promise.all(Array.from({ length: 5 }, () => get(rt.app, '/v1/search/rentals?areas=200&perPage=1', key)));
    await waitFor(() => rt.upstream!.requestCount() >= 1, 'the area sync waiting on the upstream');
    // The other four reach the area tree within a few turns of the event loop (no I/O on their way there);
    // each would send its own areas query, counted on arrival even while held.
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(rt.upstream!.requestCount()).toBe(1);
    release();
    const statuses = (await answers).map((res) => res.status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(asked()).toBe(1);
  });
});
