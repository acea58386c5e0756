import { brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { AreasRepository } from '../../src/store/areas-repository.js';
import { get } from '../helpers/http.js';
import { useRuntimesPerTest } from '../helpers/runtime.js';
import { waitForIndex } from '../helpers/search-index.js';
import { waitFor } from '../helpers/wait.js';

// The read caches (docs/decisions.md, "Read caches"): a write in this process shows at once, one by another
// instance on the same database within READ_CACHE_SECONDS.
const runtime = useRuntimesPerTest({ withoutRentHop: true });
const DAY = 24 * 3_600_000;

describe('read caches', () => {
  it('a sync here shows in the next search at once; a sync by another instance within READ_CACHE_SECONDS', async () => {
    let now = Date.now();
    // Two runtimes in one process share its one thread: a write of one waits synchronously (SQLite's busy timeout) on
    // a transaction the other holds open between two of its batches, and that transaction cannot go on meanwhile. So
    // this instance's background writes are off (webhooks, schedules, NYC Open Data, quota flushes), or done (its
    // hydration and valuation, waited for below) before the other instance syncs; two processes do not wait so.
    const a = await runtime(
      { READ_CACHE_SECONDS: '0.5', QUOTA_FLUSH_SECONDS: '3600' },
      { clock: () => new Date(now), manualMarketClock: true, webhooks: false, scheduler: false, initialOpenDataSync: false },
    );
    const b = await runtime(
      { DATABASE_URL: a.config.databaseUrl, READ_CACHE_SECONDS: '0.5' },
      { initialSync: false, webhooks: false, clock: () => new Date(now), manualMarketClock: true },
    );
    const key = await a.key('pro');
    const url = '/v1/search/rentals?areas=100&perPage=5';
    const stored = async () =>
      Number(
        (
          await a.store.db
            .selectFrom('listings')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('kind', '=', 'rental')
            .where('status', '=', 'ACTIVE')
            .where('borough_id', '=', 100)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect((await get(a.app, url, key)).body.meta.total).toBe(await stored());
    // From here the search index answers, and must notice both writes below.
    await waitForIndex(a);

    // This instance's own sync: the very next answer has the new total.
    a.marketClock!.advance(DAY);
    now += DAY;
    await a.syncer.syncScope('rental', 100);
    expect((await get(a.app, url, key)).body.meta.total).toBe(await stored());

    // Another instance's sync on the same database: seen once the cached answer has expired.
    const before = (await get(a.app, url, key)).body.meta.total;
    await waitForIndex(a, 'the search index built again');
    await waitFor(() => !a.syncer.hydrationProgress().running && !a.valuation.state().running, "this instance's background writes done");
    b.marketClock!.advance(3 * DAY);
    now += DAY;
    await b.syncer.syncScope('rental', 100);
    const after = await stored();
    expect(after).not.toBe(before);
    await waitFor(
      async () => (await get(a.app, url, key)).body.meta.total === after,
      "the other instance's sync in this instance's answers",
    );
  }, 120_000);

  it('the area tree: an area another instance stored is known to searches within READ_CACHE_SECONDS', async () => {
    const a = await runtime({ READ_CACHE_SECONDS: '0.5' });
    const key = await a.key('pro');
    const url = '/v1/search/rentals?areas=9999999';
    const unknown = await get(a.app, url, key);
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0]).toMatchObject({ name: 'areas', message: expect.stringContaining('9999999') });
    // Another instance's areas sync (its own repository, as its own process has): a neighbourhood under Brooklyn,
    // in the database only, with the area list's counter moved as its replacement of the list moves it.
    const elsewhere = new AreasRepository(a.store.db);
    await elsewhere.replaceAll([
      ...(await elsewhere.list()),
      { id: 9999999, name: 'Test Yard', level: 2, parentId: 200, slug: 'test-yard', outline: null },
    ]);
    await waitFor(async () => (await get(a.app, url, key)).status === 200, "the new area known to this instance's searches");
    const known = await get(a.app, url, key);
    expect(known.body.meta.total).toBe(0);
  }, 120_000);

  it('the area tree: an area this instance syncs is known to searches at once, however long READ_CACHE_SECONDS', async () => {
    const a = await runtime({ READ_CACHE_SECONDS: '600' });
    const key = await a.key('pro');
    const url = '/v1/search/rentals?areas=9999998';
    expect((await get(a.app, url, key)).status).toBe(400);
    // The site lists one more neighbourhood under Brooklyn (upstream numbering: Brooklyn is 300).
    a.upstream!.market.areas.push({ id: 'test-yard', name: 'Test Yard', numericId: 9999998, parentId: 300, geometry: null });
    await a.syncer.syncAreas();
    const known = await get(a.app, url, key);
    expect(known.status).toBe(200);
    expect(known.body.meta.total).toBe(0);
  });

  it("the answer cache: a request asked again reuses the answer from its second ask on (counted and limited as any), for READ_CACHE_SECONDS at most, never past the data's freshness", async () => {
    let now = Date.now();
    const a = await runtime(
      { READ_CACHE_SECONDS: '600', FRESHNESS_PROPERTY_SECONDS: '100000', RATE_LIMIT_PRO_PER_MINUTE: '60' },
      { clock: () => new Date(now), realLimits: true },
    );
    const key = await a.key('pro');
    const url = '/v1/property/1545';
    // The listing's data age, asked by another URL (an answer of its own), sets the clock for what follows.
    const first = await get(a.app, `${url}?fields=id`, key);
    expect(first.body.meta.source).toBe('cached');
    now = Date.parse(first.body.meta.dataAge) + 10_000;
    const asked = await get(a.app, url, key);
    const price = asked.body.data.price;
    // Writes this process did not make (as another instance's would be). An answer asked once is not
    // kept (admission), so the second ask sees the first write; from then on it is kept and reused.
    await a.store.db
      .updateTable('listings')
      .set({ price: price + 1 })
      .where('id', '=', '1545')
      .execute();
    const fresh = await get(a.app, url, key);
    expect(fresh.body.data.price).toBe(price + 1);
    await a.store.db
      .updateTable('listings')
      .set({ price: price + 2 })
      .where('id', '=', '1545')
      .execute();
    const again = await get(a.app, url, key);
    expect(again.body).toEqual(fresh.body);
    expect(again.headers.etag).toBe(fresh.headers.etag);
    expect(again.headers['last-modified']).toBe(fresh.headers['last-modified']);
    expect(Number(again.headers['x-ratelimit-remaining'])).toBe(Number(fresh.headers['x-ratelimit-remaining']) - 1);
    // A reused answer is compressed as a computed one (this one, larger than compression's syncThreshold, each time),
    // and still answers If-None-Match with 304.
    const search = '/v1/search/rentals?areas=300&perPage=50';
    const plain = await get(a.app, search, key);
    const hits = async () => (await a.metrics.answerCache.get()).values.find((v) => v.labels.outcome === 'hit')?.value ?? 0;
    const hitsBefore = await hits();
    for (let i = 0; i < 3; i++) {
      const br = await a.app.inject({ url: search, headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'br' } });
      expect(br.headers['content-encoding']).toBe('br');
      expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString())).toEqual(plain.body);
    }
    expect(await hits()).toBe(hitsBefore + 1);
    const notModified = await a.app.inject({
      url,
      headers: { authorization: `Bearer ${key}`, 'if-none-match': String(fresh.headers.etag) },
    });
    expect(notModified.statusCode).toBe(304);
    // Past READ_CACHE_SECONDS the route runs again and sees the write.
    now += 601_000;
    const later = await get(a.app, url, key);
    expect(later.body.data.price).toBe(price + 2);
    expect(later.headers.etag).not.toBe(fresh.headers.etag);
    // Once the data is older than its threshold, no reused 'cached' answer: the route judges it stale.
    now = Date.parse(first.body.meta.dataAge) + 100_001_000;
    expect((await get(a.app, url, key)).body.meta.source).not.toBe('cached');
    // The limits count reused answers too: the minute's 60 end in 429 whatever the cache holds.
    const statuses = [];
    for (let i = 0; i < 60; i++) statuses.push((await get(a.app, url, key)).status);
    expect(statuses.at(-1)).toBe(429);
  }, 120_000);
  it('the answer cache: answers past READ_CACHE_SECONDS are dropped, and the bytes it holds are in the metrics', async () => {
    let now = Date.now();
    const a = await runtime({ READ_CACHE_SECONDS: '0.5', RATE_LIMIT_PRO_PER_MINUTE: '1000' }, { clock: () => new Date(now) });
    const key = await a.key('pro');
    const held = async () => (await a.metrics.answerCacheBytes.get()).values[0]?.value ?? 0;
    const url = '/v1/search/rentals?areas=300&perPage=50';
    // Kept from the second ask (admission): its bytes and a kilobyte for its key and meta.
    await get(a.app, url, key);
    const kept = await get(a.app, url, key);
    expect(await held()).toBe(Buffer.byteLength(JSON.stringify(kept.body)) + 1000);
    // Past its time, on this instance's clock, the next sweep drops it without anyone asking for it again.
    now += 1_000;
    await waitFor(async () => (await held()) === 0, 'the answer past its time dropped');
  }, 120_000);

  it('the answer cache: identical requests that arrive while an admitted answer is computed wait for it (single flight), each counted', async () => {
    const a = await runtime({ READ_CACHE_SECONDS: '600', RATE_LIMIT_PRO_PER_MINUTE: '1000' });
    const key = await a.key('pro');
    const url = '/v1/search/rentals?areas=300&perPage=50';
    let computed = 0;
    const search = a.reads.search.bind(a.reads);
    a.reads.search = (...args: Parameters<typeof search>) => {
      computed++;
      return search(...args);
    };
    // Asked once: not admitted, so not kept; asked again by ten at once: computed once, the rest wait for it.
    const first = await get(a.app, url, key);
    expect(computed).toBe(1);
    const answers = await Promise.all(Array.from({ length: 10 }, () => get(a.app, url, key)));
    expect(computed, 'computations of ten identical requests at once').toBe(2);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(first.body);
      expect(answer.headers.etag).toBe(first.headers.etag);
    }
    // Each was counted: the minute's remaining requests went down by one per answer.
    const remaining = answers.map((answer) => Number(answer.headers['x-ratelimit-remaining'])).sort((x, y) => y - x);
    expect(remaining).toEqual(Array.from({ length: 10 }, (_, i) => remaining[0] - i));
    // Another caller plan's request is another answer: computed, not taken from this flight.
    const business = await a.key('business');
    expect((await get(a.app, url, business)).status).toBe(200);
    expect(computed).toBe(3);
  }, 120_000);

  it('the answer cache: when the answer the others wait for is not kept (its data stale), each waiting request computes its own', async () => {
    let now = Date.now();
    const a = await runtime(
      { READ_CACHE_SECONDS: '600', FRESHNESS_PROPERTY_SECONDS: '100000', RATE_LIMIT_PRO_PER_MINUTE: '1000' },
      { clock: () => new Date(now) },
    );
    const key = await a.key('pro');
    const url = '/v1/property/1545';
    // Asked once (not admitted); then the listing's data turns stale, so no answer of it is kept.
    const first = await get(a.app, url, key);
    expect(first.body.meta.source).toBe('cached');
    now = Date.parse(first.body.meta.dataAge) + 100_001_000;
    let computed = 0;
    const listing = a.reads.listing.bind(a.reads);
    a.reads.listing = (...args: Parameters<typeof listing>) => {
      computed++;
      return listing(...args);
    };
    const answers = await Promise.all(Array.from({ length: 10 }, () => get(a.app, url, key)));
    // The first judged the data stale and started a refresh: its answer was not kept, so the nine that
    // waited for it ran the route themselves.
    expect(answers[0].body.meta).toMatchObject({ source: expect.not.stringMatching(/^cached$/), refreshTriggered: true });
    expect(computed, 'computations of ten identical requests whose answer is not kept').toBe(10);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.data.id).toBe('1545');
    }
  }, 120_000);
  it('the answer cache: requests whose headers differ are answered apart, however their values read when joined', async () => {
    const a = await runtime({ READ_CACHE_SECONDS: '600', RATE_LIMIT_PRO_PER_MINUTE: '1000' });
    const key = await a.key('pro');
    const url = '/v1/search/rentals?areas=300&perPage=5';
    const ask = (headers: Record<string, string>) => a.app.inject({ url, headers: { authorization: `Bearer ${key}`, ...headers } });
    // `gzipx` is no encoding anyone knows, so brotli is chosen; asked twice, that answer is kept as written (it is
    // under compression's syncThreshold).
    for (let i = 0; i < 2; i++) expect((await ask({ 'accept-encoding': 'br, gzipx' })).headers['content-encoding']).toBe('br');
    // A client that asks for no compression gets none, though its two headers end in the same letters.
    const plain = await ask({ 'accept-encoding': 'br, gzip', 'x-no-compression': '1' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.json().meta.total).toBeGreaterThan(0);
  }, 120_000);
});
