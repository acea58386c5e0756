import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { get } from '../helpers/http.js';
import { useRuntimesPerTest, type TestRuntime } from '../helpers/runtime.js';
import { rentalRows, saleRows } from '../helpers/source-rows.js';
import { waitFor } from '../helpers/wait.js';

// The mirror against a local upstream that behaves as the real site is known to (upstream-api.md):
// a result cap, fields that vanish, bot blocks, details only through detail queries.
// Without the RentHop rentals: these are tests of mechanics, and crawling Manhattan's 45,000 rentals again and again takes most of a minute.
const runtime = useRuntimesPerTest({ withoutRentHop: true });
const HOUR = 3_600_000;

/** Active listings of one kind in one upstream borough, as the local upstream holds them: id -> price. */
function upstreamActive(rt: TestRuntime, kind: 'sale' | 'rental', upstreamBorough: number): Map<string, number> {
  return new Map(rt.upstream!.market.search(kind, { areas: [upstreamBorough] }).map((l) => [l.node.id, l.node.price] as [string, number]));
}
async function mirrorActive(rt: TestRuntime, kind: 'sale' | 'rental', boroughId: number): Promise<Map<string, number>> {
  const rows = await rt.store.db
    .selectFrom('listings')
    .select(['id', 'price'])
    .where('kind', '=', kind)
    .where('borough_id', '=', boroughId)
    .where('status', '=', 'ACTIVE')
    .execute();
  return new Map(rows.map((r) => [r.id, Number(r.price)]));
}

describe('the local upstream answers as the real site is known to', () => {
  it('enum values: literals in the query text work; JSON strings in variables are refused with the quoted error', async () => {
    const rt = await runtime();
    const post = async (body: unknown) => {
      const res = await request(rt.upstream!.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.statusCode, body: (await res.body.json()) as any };
    };
    const literal = await post({
      query: 'query { searchRentals(input: {page: 1, perPage: 2, sorting: {attribute: PRICE, direction: ASCENDING}}) { totalCount } }',
    });
    expect(literal.status).toBe(200);
    expect(literal.body.data.searchRentals.totalCount).toBeGreaterThan(4000);
    const variables = await post({
      query: 'query Q($input: SearchRentalsInput!) { searchRentals(input: $input) { totalCount } }',
      variables: { input: { page: 1, perPage: 2, sorting: { attribute: 'PRICE', direction: 'ASCENDING' } } },
    });
    expect(variables.status).toBe(400);
    expect(variables.body.errors[0].message).toBe(
      'found JSON string for GraphQL type SortingAttributeInput! (VALIDATION_INVALID_TYPE_VARIABLE)',
    );
    const unknown = await post({ query: 'query { searchRentals(input: {page: 1}) { totalCount pageInfo { hasNextPage } } }' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].message).toBe('Cannot query field "pageInfo" on type "RentalSearchResult".');
    const extension = await post({ query: 'query { rentalByListingId(id: "1545") { listedAt } }' });
    expect(extension.body.errors[0].message).toMatch(/Cannot query field "listedAt"/);
  });

  it('validates each query against the fields it answers now, though it remembers shapes it found valid', async () => {
    const rt = await runtime({}, { recordUpstreamQueries: false });
    const post = async (query: string) => {
      const res = await request(rt.upstream!.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      return { status: res.statusCode, body: (await res.body.json()) as any };
    };
    const [a, b] = rt.siteData.listings.filter((l) => l.kind === 'rental' && l.node.status === 'ACTIVE').map((l) => l.node.id);
    const detail = (id: string) => `query { l0: rentalByListingId(id: "${id}") { id description } }`;
    // One shape, two ids: each answered with its own listing.
    expect((await post(detail(a))).body.data.l0.id).toBe(a);
    expect((await post(detail(b))).body.data.l0.id).toBe(b);
    // The site stops answering a field: the shape validated before is refused now, then valid again.
    rt.upstream!.removeFields(['RentalListing.description']);
    const dropped = await post(detail(a));
    expect(dropped.status).toBe(400);
    expect(dropped.body.errors[0]).toEqual({
      message: 'Cannot query field "description" on type "RentalListing".',
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
    rt.upstream!.removeFields([]);
    expect((await post(detail(b))).status).toBe(200);
    // A refusal is never remembered: the same shape with an unknown field is refused each time, with its own message.
    for (const field of ['pageInfo', 'pageInfo', 'cursor']) {
      const refused = await post(`query { l0: rentalByListingId(id: "${a}") { id ${field} } }`);
      expect(refused.status).toBe(400);
      expect(refused.body.errors[0].message).toBe(`Cannot query field "${field}" on type "RentalListing".`);
    }
    // Not recording (the service's default): the query texts are not kept, though the requests are counted.
    expect(rt.upstream!.queries).toEqual([]);
    expect(rt.upstream!.requestCount()).toBeGreaterThanOrEqual(7);
  });

  it('a search reaches at most the cap: pages past it are empty while totalCount stays true', async () => {
    const rt = await runtime({ LOCAL_UPSTREAM_RESULT_CAP: '1000' });
    const page = async (n: number) => {
      const res = await request(rt.upstream!.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: `query { searchSales(input: {page: ${n}, perPage: 500}) { totalCount edges { ... on OrganicSaleEdge { node { id } } } } }`,
        }),
      });
      return ((await res.body.json()) as any).data.searchSales;
    };
    const [second, third] = [await page(2), await page(3)];
    expect(second.edges.filter((e: any) => e.node).length).toBe(500);
    expect(third.edges).toEqual([]);
    expect(third.totalCount).toBe(saleRows().length);
    expect(saleRows().length).toBeGreaterThan(1000);
  });
});

describe('crawling past the cap', () => {
  it('cap 100: Manhattan sales (over a thousand) are split into parts, and the mirror equals the upstream, before and after a market day', async () => {
    let now = Date.now();
    const rt = await runtime(
      { LOCAL_UPSTREAM_RESULT_CAP: '100', UPSTREAM_RESULT_CAP: '100' },
      { clock: () => new Date(now), manualMarketClock: true },
    );
    const report = async () => (await get(rt.app, '/v1/health')).body.scopes.find((s: { scope: string }) => s.scope === 'sale:100');
    await rt.syncer.syncScope('sale', 100, { hydrate: false });
    expect(await mirrorActive(rt, 'sale', 100)).toEqual(upstreamActive(rt, 'sale', 100));
    const first = await report();
    expect(first.parts).toBeGreaterThan(11);
    expect(first.complete).toBe(true);
    now += 24 * HOUR;
    rt.marketClock!.advance(24 * HOUR);
    await rt.syncer.syncScope('sale', 100, { hydrate: false });
    expect(rt.marketClock!.events.filter((e) => e.kind === 'sale').length).toBeGreaterThan(50);
    const after = upstreamActive(rt, 'sale', 100);
    expect(await mirrorActive(rt, 'sale', 100)).toEqual(after);
    console.log(
      `cap 100: sale:100 crawled in ${(await report()).parts} parts (${(await report()).splits} splits), ${after.size} active listings equal`,
    );
  }, 240_000);
});

describe('drift: a field the site stops answering', () => {
  it('is dropped, recorded once in /v1/health, and the crawl and hydration complete without it', async () => {
    let now = Date.now();
    const rt = await runtime({}, { clock: () => new Date(now), manualMarketClock: true });
    rt.upstream!.removeFields(['RentalSearchNode.hasTour3d', 'RentalListing.description']);
    now += 24 * HOUR;
    rt.marketClock!.advance(24 * HOUR);
    await rt.syncer.syncScope('rental', 300);
    expect(await mirrorActive(rt, 'rental', 300)).toEqual(upstreamActive(rt, 'rental', 400));
    await rt.syncer.syncScope('rental', 200);
    const health = (await get(rt.app, '/v1/health')).body;
    expect(health.upstream.droppedFields.sort()).toEqual(['RentalListing.description', 'RentalSearchNode.hasTour3d']);
    expect(health.status).toBe('ok');
    expect(health.hydration.backlog).toBe(0);
    // Each field was sent once (and rejected), never again: the latest search and detail queries lack it.
    const queries = rt.upstream!.queries;
    expect(queries.filter((q) => q.includes('hasTour3d')).length).toBe(1);
    expect(queries.filter((q) => q.includes('description')).length).toBe(1);
    expect(queries.filter((q) => q.includes('searchRentals')).at(-1)).not.toContain('hasTour3d');
    expect(queries.filter((q) => q.includes('rentalByListingId')).at(-1)).not.toContain('description');
  });
});

describe('a 403 bot block', () => {
  it('during a crawl: backs off without asking again, changes nothing stored, and the next allowed crawl catches up', async () => {
    let now = Date.now();
    const rt = await runtime(
      { UPSTREAM_BLOCK_BACKOFF_SECONDS: '1', UPSTREAM_BREAKER_THRESHOLD: '100' },
      { clock: () => new Date(now), manualMarketClock: true },
    );
    const snapshot = async () =>
      JSON.stringify(
        await rt.store.db
          .selectFrom('listings')
          .leftJoin('listing_sightings', 'listing_sightings.listing_id', 'listings.id')
          .select(['id', 'status', 'price', 'last_seen_at'])
          .orderBy('id')
          .execute(),
      );
    now += 24 * HOUR;
    rt.marketClock!.advance(24 * HOUR);
    const before = await snapshot();
    rt.upstream!.faults.blockRate = 1;
    await expect(rt.syncer.syncScope('rental', 100)).rejects.toThrow(/403|bot block/);
    const asked = rt.upstream!.requestCount();
    await expect(rt.syncer.syncScope('rental', 200)).rejects.toThrow(/bot block/);
    expect(rt.upstream!.requestCount()).toBe(asked); // waited out, not asked again
    expect(await snapshot()).toBe(before);
    const blocked = (await get(rt.app, '/v1/health')).body;
    expect(blocked.upstream.blockedUntil).not.toBeNull();
    expect(blocked.status).toBe('degraded');
    rt.upstream!.faults.blockRate = 0;
    await waitFor(async () => (await get(rt.app, '/v1/health')).body.upstream.blockedUntil === null, 'the block to be waited out');
    await rt.syncer.syncScope('rental', 100);
    expect(await mirrorActive(rt, 'rental', 100)).toEqual(upstreamActive(rt, 'rental', 100));
  });
});

describe('hydration', () => {
  it('amenities and listing dates reach the mirror only through the details; then the filters equal the source rows', async () => {
    // Without the RentHop rentals: hydrating 54,000 rentals here would take most of a minute.
    const rt = await runtime({}, { fresh: true, initialSync: false, withoutRentHop: true });
    const key = await rt.key('pro');
    await rt.syncer.syncAll({ hydrate: false });
    const total = async (query: string) => (await get(rt.app, `/v1/search/rentals?${query}&perPage=1`, key)).body.meta.total as number;
    const rows = rentalRows().filter((r) => r.source === 'streeteasy');
    const sales = saleRows().length;
    expect(await total('areas=300')).toBe(rows.filter((r) => r.borough === 'Queens').length);
    expect(await total('amenities=DOORMAN')).toBe(0);
    expect(await total('minDaysOnMarket=0')).toBe(0);
    const health = (await get(rt.app, '/v1/health')).body;
    expect(health.hydration).toMatchObject({
      backlog: rows.length + sales,
      parked: 0,
      hydrated: 0,
      running: false,
      failedBatches: 0,
      lastError: null,
    });
    // A lookup hydrates its listing while the caller waits.
    const one = await get(rt.app, '/v1/property/2011', key);
    expect(one.body.data.listedAt).not.toBeNull();
    expect(
      one.body.data.amenities
        .filter((a: { available: boolean }) => a.available)
        .map((a: { name: string }) => a.name)
        .sort(),
    ).toEqual(
      ['DOORMAN', 'ELEVATOR', 'GYM', 'DISHWASHER', 'WASHER_DRYER', 'PATIO', 'ROOF_DECK']
        .filter((name) => {
          const column = {
            DOORMAN: 'has_doorman',
            ELEVATOR: 'has_elevator',
            GYM: 'has_gym',
            DISHWASHER: 'has_dishwasher',
            WASHER_DRYER: 'has_washer_dryer',
            PATIO: 'has_patio',
            ROOF_DECK: 'has_roofdeck',
          }[name]!;
          return rows.find((r) => r.rental_id === '2011')![column] === '1';
        })
        .sort(),
    );
    const started = Date.now();
    const running = rt.syncer.hydrateBacklog(Infinity, 'rental');
    expect((await get(rt.app, '/v1/health')).body.hydration.running).toBe(true);
    const hydrated = await running;
    console.log(`hydration: ${hydrated} rentals in ${Date.now() - started} ms`);
    expect(hydrated).toBe(rows.length - 1); // 2011 was hydrated by the lookup
    expect((await get(rt.app, '/v1/health')).body.hydration).toMatchObject({
      backlog: sales,
      parked: 0,
      hydrated: rows.length,
      running: false,
      failedBatches: 0,
    });
    expect(await total('amenities=DOORMAN')).toBe(rows.filter((r) => r.has_doorman === '1').length);
    expect(await total('amenities=DOORMAN,GYM')).toBe(rows.filter((r) => r.has_doorman === '1' && r.has_gym === '1').length);
    expect(await total('minDaysOnMarket=0')).toBe(rows.length);
  }, 180_000);
});
