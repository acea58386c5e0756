import fc from 'fast-check';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drawnRuns } from '../helpers/drawn-runs.js';
import { openApiFuzzer } from '../helpers/fuzz.js';
import { get } from '../helpers/http.js';
import { addSubscription } from '../../src/notify/webhook-admin.js';
import { ListingsRepository } from '../../src/store/listings-repository.js';
import { MARKET_STATEMENTS_AT_ONCE, MarketRepository } from '../../src/store/market-repository.js';
import { marketFiguresByRank } from '../../src/domain/market.js';
import { copyRows } from '../../src/store/postgres-copy.js';
import { LISTING_CHANGE_RULES } from '../../src/sync/listing-changes.js';
import { SyntheticListingsRepository } from '../../src/store/synthetic-listings-repository.js';
import { seedListings } from '../../src/sync/seed.js';
import { startReceiver } from '../helpers/receiver.js';
import { rentalRows, saleRows } from '../helpers/source-rows.js';
import { postgresWithLog } from '../helpers/statement-log.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';
import { checkIndexAnswersAsStore, checkIndexWithDeltaAnswersAsStore } from '../helpers/index-equivalence.js';
import { OPTIMIZATIONS_OFF, expectSameAnswers, probes } from '../helpers/optimization-equivalence.js';
import { waitFor } from '../helpers/wait.js';
import { DATASETS } from '../../src/upstream/soda-client.js';

// The same service on the machine's real PostgreSQL (127.0.0.1:5432, database test), in a schema of
// its own, must answer exactly as on the embedded SQLite.
const SERVER = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `nyc_listings_test_${process.pid}_${Date.now()}`;
const PG_FUZZ_RUNS = drawnRuns(600, 'FUZZ_PG_RUNS');
let admin: pg.Client;
let url: string;
/** Webhook delivery quick enough for a test, to loopback receivers. */
const WEBHOOKS = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_SECONDS: '0.05',
  CHANGES_STREAM_POLL_SECONDS: '0.05',
  WEBHOOK_CONCURRENCY: '4',
};
let onPg: TestRuntime;
let onSqlite: TestRuntime;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  url = `${SERVER}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  // Quotas raised out of the way of the fuzz run below.
  // Both over the site data without the RentHop rentals: a first sync of the whole city on PostgreSQL takes
  // minutes, and the comparison needs the same listings on both sides.
  onPg = await startTestRuntime(
    {
      DATABASE_URL: url,
      ...WEBHOOKS,
      ...Object.fromEntries(['FREE', 'STARTER', 'PRO', 'BUSINESS'].map((p) => [`QUOTA_${p}_PER_MONTH`, '100000000'])),
    },
    { withoutRentHop: true },
  );
  // A first sync hydrates details in the background: the comparison needs them all.
  await onPg.coordinator.idle();
  onSqlite = await startTestRuntime({}, { withoutRentHop: true });
  for (const rt of [onPg, onSqlite]) await serveFewRecordedSales(rt);
}, 180_000);

/**
 * The recorded sales the runtime's SODA emulator serves, cut to Manhattan's summer of 2023 and Brooklyn's autumn of
 * 2016 (with every Manhattan tax lot): quick to sync on both stores, however often a request finds them stale.
 */
async function serveFewRecordedSales(rt: TestRuntime): Promise<void> {
  const sales = await rt.soda!.rows(DATASETS.recordedSales);
  sales.splice(
    0,
    sales.length,
    ...sales.filter(
      (r) =>
        (r.borough === '1' && r.sale_date >= '2023-06' && r.sale_date < '2023-09') ||
        (r.borough === '3' && r.sale_date >= '2016-10' && r.sale_date < '2016-12'),
    ),
  );
}

afterAll(async () => {
  await onPg?.close();
  await onSqlite?.close();
  await admin.query(`drop schema if exists ${schema} cascade`);
  await admin.end();
});

const QUERIES = [
  '/v1/search/rentals?areas=300&amenities=DOORMAN&noFee=true&sort=PRICE&sortDir=ASC',
  '/v1/search/rentals?areas=102,200&minBeds=1&maxBeds=2&minBaths=1&sort=LISTED_AT&sortDir=DESC&page=3',
  '/v1/search/rentals?minSqft=800&maxSqft=1200&prewar=false&sort=PRICE_PER_SQFT',
  '/v1/search/rentals?minDaysOnMarket=5&maxDaysOnMarket=30&minTransitScore=70&furnished=false',
  '/v1/search/rentals?minTransitScore=70&sortDir=ASC&page=2',
  '/v1/search/sales?maxMonthlyCost=6000&sort=PRICE_PER_SQFT&sortDir=ASC',
  '/v1/search/sales?maxMonthlyCost=4000&sort=PRICE&page=2',
  '/v1/search/sales?buildingType=CONDO,CO_OP&saleType=RESALE&areas=140&page=2',
  '/v1/search/sales?listedAfter=2026-01-01T00:00:00Z&listedBefore=2026-06-01T00:00:00Z&hasOpenHouse=false&has3dTour=false',
  '/v1/search/sales?prewar=true&minPrice=2000000&sort=RECOMMENDED',
  '/v1/areas?level=1&borough=100',
  '/v1/search/rentals?bbox=-73.99,40.72,-73.95,40.76&minBeds=1&sort=PRICE',
  '/v1/search/sales?near=40.7527,-73.9772&radius=900&sort=DISTANCE&sortDir=ASC',
  '/v1/search/rentals?near=40.7128,-74.006&radius=3000&minBeds=2&page=2&perPage=20',
  '/v1/search/rentals?areas=200&minBeds=2&sort=PRICE_PER_SQFT&sortDir=DESC&page=2',
  '/v1/search/rentals?noFee=false&areas=200&page=2',
  '/v1/search/rentals?noFee=true&minBeds=1&sortDir=ASC&page=3',
  '/v1/search/rentals?amenities=ELEVATOR&sort=PRICE&sortDir=DESC&page=2',
  '/v1/search/rentals?communityDistrict=101,102,103&policePrecinct=1,5,7&sort=PRICE',
  '/v1/search/sales?schoolDistrict=2,3&sort=LISTED_AT&page=2',
  '/v1/search/rentals/clusters?bbox=-74.02,40.65,-73.93,40.8&zoom=12&maxPrice=3000',
  '/v1/search/sales/clusters?bbox=-74.1,40.55,-73.7,40.9&zoom=10&amenities=DOORMAN',
];

/** Market figures (read by rank through the order indexes, migration 018, and `+bedroom_count`). */
const MARKET_QUERIES = [
  '/v1/market?kind=rental',
  '/v1/market?kind=rental&areas=200&bedrooms=2',
  '/v1/market?kind=rental&areas=100,300&bedrooms=0,3',
  '/v1/market?kind=sale&areas=100',
];

describe('PostgreSQL answers as SQLite does', () => {
  it('the first sync on an empty PostgreSQL database loads everything', async () => {
    expect(onPg.store.dialect).toBe('postgres');
    expect(await onPg.listings.count()).toBe(await onSqlite.listings.count());
  });

  it.each(QUERIES)('%s', async (url) => {
    const keyPg = await onPg.key('pro');
    const keySqlite = await onSqlite.key('pro');
    const a = await get(onPg.app, url, keyPg);
    const b = await get(onSqlite.app, url, keySqlite);
    expect(a.status).toBe(200);
    expect(a.body.meta.total).toBe(b.body.meta.total);
    expect(a.body.data.map((i: { id: string | number }) => i.id)).toEqual(b.body.data.map((i: { id: string | number }) => i.id));
    if (url.includes('/clusters')) {
      // A centroid is a mean of floating-point positions, summed in each database's own order: equal to a tenth of a metre.
      const centroidsApart = (x: { latitude: number; longitude: number }, y: { latitude: number; longitude: number }) =>
        Math.max(Math.abs(x.latitude - y.latitude), Math.abs(x.longitude - y.longitude));
      expect(a.body.data.map(({ latitude: _a, longitude: _o, ...rest }: any) => rest)).toEqual(
        b.body.data.map(({ latitude: _a, longitude: _o, ...rest }: any) => rest),
      );
      for (const [i, cell] of a.body.data.entries()) expect(centroidsApart(cell, b.body.data[i])).toBeLessThan(2e-6);
    } else expect(a.body.data).toEqual(b.body.data);
  });

  it.each(MARKET_QUERIES)('%s', async (url) => {
    const a = await get(onPg.app, url, await onPg.key('pro'));
    const b = await get(onSqlite.app, url, await onSqlite.key('pro'));
    expect(a.status).toBe(200);
    expect(a.body.data.activeCount).toBeGreaterThan(0);
    expect(a.body.data).toEqual(b.body.data);
  });

  it(`one request's market figures hold at most ${MARKET_STATEMENTS_AT_ONCE} of the pool's connections at once`, async () => {
    const pool = onPg.store.pool!;
    let borrowed = 0;
    let most = 0;
    // Each statement borrows a connection of the service's pool and gives it back: counted here.
    const { db, statements } = postgresWithLog<any>(async () => {
      const client = await pool.connect();
      most = Math.max(most, ++borrowed);
      return {
        query: client.query.bind(client),
        release: () => {
          borrowed--;
          client.release();
        },
      };
    });
    try {
      const now = new Date();
      const figures = await marketFiguresByRank(new MarketRepository(db).ranked('sale', undefined, undefined), now);
      // The whole city's sales ask for more statements than the bound: a bound that held nothing back fails here.
      expect(statements.length).toBeGreaterThan(MARKET_STATEMENTS_AT_ONCE * 3);
      expect(most).toBeLessThanOrEqual(MARKET_STATEMENTS_AT_ONCE);
      // Still several at once: the bound is not one at a time.
      expect(most).toBeGreaterThan(1);
      expect(figures).toEqual(await marketFiguresByRank(new MarketRepository(onPg.store.db).ranked('sale', undefined, undefined), now));
    } finally {
      await db.destroy();
    }
  });

  it(`fuzzing from the OpenAPI document: ${PG_FUZZ_RUNS} generated requests, no undocumented status, no 5xx, every answer valid`, async () => {
    const statuses = new Map<number, number>();
    const fuzzer = await openApiFuzzer(onPg);
    await fuzzer.fuzz(fuzzer.routes, PG_FUZZ_RUNS, statuses);
    // Not a test of nothing: about a tenth answer 200 (as on SQLite), far more than a fifteenth by chance alone.
    expect(statuses.get(200)).toBeGreaterThan(PG_FUZZ_RUNS / 15);
    console.log(`fuzz (PostgreSQL): ${PG_FUZZ_RUNS} requests; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  }, 300_000);

  it('listing detail, building, keys and quotas work on PostgreSQL', async () => {
    const key = await onPg.key('starter');
    const detail = await get(onPg.app, '/v1/property/8000000', key);
    expect(detail.body.data).toMatchObject({ id: '8000000', price: 315000 });
    expect(detail.body.data.priceHistory[0]).toMatchObject({ event: 'LISTED', price: 315000 });
    expect((await get(onPg.app, `/v1/building/${detail.body.data.buildingId}`, key)).status).toBe(200);
    expect((await get(onPg.app, '/v1/usage', key)).body.data.month.used).toBe(2);
  });

  it("the valuation after the first sync stores each listing's price position on PostgreSQL as on SQLite", async () => {
    const positions = async (rt: TestRuntime) =>
      new Map(
        (
          await rt.store.db.selectFrom('listings').select(['id', 'price_position']).where('status', '=', 'ACTIVE').orderBy('id').execute()
        ).map((r) => [r.id, r.price_position === null ? null : Number(r.price_position)]),
      );
    const [fromPg, fromSqlite] = [await positions(onPg), await positions(onSqlite)];
    expect([...fromPg.values()].filter((p) => p !== null).length).toBeGreaterThan(0.9 * fromPg.size);
    expect(fromPg).toEqual(fromSqlite);
    expect(onPg.valuation.state()).toMatchObject({ failedRuns: 0, lastError: null });
    expect(onPg.valuation.state().runs).toBeGreaterThanOrEqual(1);
  });

  it('the search index gives exactly the ids, order and total of the plain SQL path on PostgreSQL', async () => {
    const tally = await checkIndexAnswersAsStore(onPg, drawnRuns(100, 'INDEX_EQUIVALENCE_RUNS'));
    console.log(`search index (PostgreSQL): ${tally.searches} searches, ${tally.matched} with matches`);
    expect(tally.matched).toBeGreaterThan(tally.searches / 4);
  }, 300_000);

  it('the planner has the statistics of kind, areas and bedrooms together (extended statistics, migration 013)', async () => {
    const defined = await sql<{
      columns: string[];
      kinds: string[];
    }>`select array(select a.attname::text from unnest(s.stxkeys) k join pg_attribute a on a.attrelid = s.stxrelid and a.attnum = k order by a.attname) as columns,
        array(select k::text from unnest(s.stxkind) k order by 1) as kinds
      from pg_statistic_ext s where s.stxname = 'listings_kind_area_beds' and s.stxnamespace = to_regnamespace(${schema})`.execute(
      onPg.store.db,
    );
    expect(defined.rows).toEqual([{ columns: ['area_id', 'bedroom_count', 'kind'], kinds: ['f', 'm'] }]); // f: functional dependencies, m: most common values
  });

  it('a page walked in the order of the price or recommended index tests its bedrooms inside the index (migration 014), by price per square foot its size (015)', async () => {
    const tree = await onPg.reads.areaTree();
    const areaIds = [...tree.withDescendants(200)].join(',');
    const areasAndBedrooms = `kind = 'rental' and status = 'ACTIVE' and area_id in (${areaIds}) and bedroom_count >= 1`;
    type Node = { 'Node Type': string; 'Index Name'?: string; 'Index Cond'?: string; Filter?: string; Plans?: Node[] };
    const scans = (node: Node): Node[] => [...(node['Index Name'] ? [node] : []), ...(node.Plans ?? []).flatMap(scans)];
    for (const [index, where, order, tested, column] of [
      ['listings_price', areasAndBedrooms, 'price, id', /bedroom_count >= 1/, /bedroom_count/],
      [
        'listings_recommended_desc',
        areasAndBedrooms,
        'recommended_score desc, listed_at desc nulls last, id desc',
        /bedroom_count >= 1/,
        /bedroom_count/,
      ],
      [
        'listings_ppsf_desc',
        `kind = 'sale' and status = 'ACTIVE' and sqft >= 500`,
        'price_per_sqft desc nulls last, id desc',
        /sqft >= '?500/,
        /sqft/,
      ],
    ] as const) {
      // In a transaction that forbids a sort: the page must then come from its order's index, whatever
      // the planner would choose on the test's few rows.
      const [scan] = await onPg.store.db.transaction().execute(async (trx) => {
        await sql`set local enable_sort = off`.execute(trx);
        await sql`set local enable_bitmapscan = off`.execute(trx);
        const plan = (
          await sql<{
            'QUERY PLAN': [{ Plan: Node }];
          }>`explain (format json) select * from listings where ${sql.raw(where)} order by ${sql.raw(order)} limit 50`.execute(trx)
        ).rows[0]['QUERY PLAN'][0].Plan;
        return scans(plan);
      });
      expect(scan['Index Name'], JSON.stringify(scan)).toBe(index);
      expect(scan['Index Cond'], JSON.stringify(scan)).toMatch(tested);
      // PostgreSQL 15 keeps a list of areas on a later key column out of an ordered scan's index
      // condition (a filter on the row), so only the bedrooms are tested inside the index here.
      expect(scan.Filter ?? '', JSON.stringify(scan)).not.toMatch(column);
    }
  });

  it('a query text seen twice runs as a named prepared statement, and answers as before', async () => {
    const listing = (
      await onSqlite.store.db.selectFrom('listings').select('id').where('status', '=', 'ACTIVE').orderBy('id').executeTakeFirstOrThrow()
    ).id;
    const expected = await onSqlite.listings.detailById(listing);
    // One pinned connection, so that the statements it prepared can be listed from it.
    const [first, second, prepared] = await onPg.store.db.connection().execute(async (connection) => {
      const repository = new ListingsRepository(connection);
      const one = await repository.detailById(listing);
      // Past the five runs after which PostgreSQL may cache a generic plan.
      for (let i = 0; i < 6; i++) await repository.detailById(listing);
      const two = await repository.detailById(listing);
      const statements = await sql<{
        statement: string;
        generic_plans: number;
        custom_plans: number;
      }>`select statement, generic_plans, custom_plans from pg_prepared_statements where name like 'nyc_listings_%'`.execute(connection);
      return [one, two, statements.rows];
    });
    // The detail's own statement (its amenities' alias): other statements that read listing_amenities (a
    // search with an amenity, say) may have been prepared on this pooled connection by an earlier test.
    const detail = prepared.find((p) => p.statement.includes('"amenity_rows"'));
    expect(detail).toBeDefined();
    expect(Number(detail!.custom_plans) + Number(detail!.generic_plans)).toBeGreaterThanOrEqual(7);
    for (const answer of [first, second]) {
      expect(answer?.amenities).toEqual(expected?.amenities);
      expect(answer?.history).toEqual(expected?.history);
      expect(answer?.row.price).toBe(expected?.row.price);
    }
  });
});

describe('named statements on PostgreSQL', () => {
  it("searches' reads (readDb) run unnamed, on the same pool, where db names a text seen twice", async () => {
    /** The statements prepared on one pinned connection of `db` after it ran a text of its own three times. */
    const preparedAfterThreeRuns = (db: typeof onPg.store.db, marker: string) =>
      db.connection().execute(async (connection) => {
        for (let i = 0; i < 3; i++)
          expect((await sql.raw<Record<string, number>>(`select 2 as ${marker}`).execute(connection)).rows).toEqual([{ [marker]: 2 }]);
        const statements = await sql<{
          statement: string;
        }>`select statement from pg_prepared_statements where statement like ${`%${marker}%`}`.execute(connection);
        return statements.rows.length;
      });
    expect(onPg.store.readDb).not.toBe(onPg.store.db);
    expect(await preparedAfterThreeRuns(onPg.store.db, 'named_by_db')).toBe(1);
    expect(await preparedAfterThreeRuns(onPg.store.readDb, 'unnamed_by_read_db')).toBe(0);
  });
});

describe('every optimization off, on PostgreSQL', () => {
  it('gives the very bytes of the defaults (named statements, the search index, the answer cache)', async () => {
    // Two more instances on the same schema at one instant: days on market and freshness are counted to it.
    const now = new Date();
    const options = { initialSync: false, withoutRentHop: true, clock: () => now };
    const [fast, plain] = await Promise.all([
      startTestRuntime({ DATABASE_URL: url }, options),
      startTestRuntime({ DATABASE_URL: url, ...OPTIMIZATIONS_OFF }, options),
    ]);
    try {
      await fast.reads.searcher.index?.current();
      expect(plain.reads.searcher.index).toBeNull();
      const list = await probes(fast, { count: 40 });
      const compared = await expectSameAnswers(
        { rt: fast, key: await fast.key('business') },
        { rt: plain, key: await plain.key('business') },
        list,
      );
      expect(compared).toBeGreaterThan(3 * list.length);
    } finally {
      await Promise.all([fast.close(), plain.close()]);
    }
  }, 240_000);
});

describe('NYC Open Data on PostgreSQL', () => {
  it("recorded sales, their figures, sold comparables and buildings' city facts answer as on SQLite, after the same sync", async () => {
    for (const rt of [onPg, onSqlite]) {
      // A request to recorded sales before (the fuzzing above) found them never synced and started a sync: let it
      // end, and start both stores from none.
      await rt.coordinator.idle();
      await rt.store.db.deleteFrom('recorded_sales').execute();
      await rt.store.db.deleteFrom('tax_lots').execute();
      expect(await rt.openData.syncAll()).toEqual([]);
    }
    expect(await onPg.cityRecords.count('recorded_sales')).toBe(await onSqlite.cityRecords.count('recorded_sales'));
    const [keyPg, keySqlite] = [await onPg.key('business'), await onSqlite.key('business')];
    const sale = (await get(onSqlite.app, '/v1/search/sales?areas=100&perPage=1&sort=PRICE&sortDir=ASC', keySqlite)).body.data[0];
    const building = (await get(onSqlite.app, '/v1/recorded-sales?areas=100&perPage=500', keySqlite)).body.data.find(
      (s: any) => s.buildingId,
    ).buildingId;
    for (const url of [
      '/v1/recorded-sales?perPage=50',
      '/v1/recorded-sales?areas=100&sort=salePrice&sortDir=ASC&perPage=40&page=2',
      '/v1/recorded-sales?areas=139&noConsideration=false&sort=pricePerSqft',
      '/v1/recorded-sales?near=40.7484,-73.9857&radius=800&buildingClassCategory=10,13',
      '/v1/recorded-sales?areas=200&minPrice=500000&maxPrice=900000&from=2016-11-01',
      '/v1/recorded-sales?communityDistrict=105,106&schoolDistrict=2&sort=salePrice',
      '/v1/market/recorded-sales?areas=100&from=2023-05&to=2023-09',
      '/v1/market/recorded-sales?areas=200&from=2016-09&to=2016-12',
      `/v1/property/${sale.id}/sold-comparables?limit=5`,
      `/v1/building/${building}`,
    ]) {
      const a = await get(onPg.app, url, keyPg);
      const b = await get(onSqlite.app, url, keySqlite);
      expect(a.status, url).toBe(200);
      const { dataAge: _a, ...metaA } = a.body.meta;
      const { dataAge: _b, ...metaB } = b.body.meta;
      expect(a.body.data, url).toEqual(b.body.data);
      expect(metaA, url).toEqual(metaB);
    }
  }, 120_000);
});

describe("a sync's write transactions on PostgreSQL", () => {
  it('plan every run for its values: no cached generic plan, however often they run on one connection', async () => {
    const plans = await onPg.store.db.connection().execute(async (connection) => {
      const repository = new ListingsRepository(connection);
      // Past the five runs after which PostgreSQL would otherwise cache a generic plan for the transaction's
      // named statements (here the change log's lock, which every apply takes).
      for (let i = 0; i < 8; i++)
        await repository.apply(
          [],
          () => ({
            transitScore: null,
            recommendedScore: 0,
            districts: { communityDistrict: null, policePrecinct: null, schoolDistrict: null },
          }),
          LISTING_CHANGE_RULES,
          new Date().toISOString(),
        );
      const rows = await sql<{
        generic_plans: number;
        custom_plans: number;
      }>`select generic_plans, custom_plans from pg_prepared_statements where statement like '%pg_advisory_xact_lock%'`.execute(connection);
      return rows.rows;
    });
    expect(plans).toHaveLength(1);
    expect(Number(plans[0].generic_plans)).toBe(0);
    expect(Number(plans[0].custom_plans)).toBeGreaterThanOrEqual(6);
  });
});

describe('seed on PostgreSQL', () => {
  it("COPY in its text format stores any text, number and null as given (the seed's bulk load)", async () => {
    const client = await onPg.store.pool!.connect();
    try {
      await client.query('create temporary table copied (n integer, t text, x double precision, b bigint)');
      // Any text PostgreSQL can hold (no NUL), weighted toward COPY's special characters.
      const text = fc
        .oneof(fc.string({ unit: 'binary' }), fc.stringMatching(/^[\\\t\n\rN. a-z]{0,12}$/), fc.constantFrom('\\N', '\\', '\\.', '', 'N'))
        .map((t) => t.replace(/\0/g, ''));
      const row = fc.tuple(fc.option(text), fc.option(fc.double({ noNaN: true, noDefaultInfinity: true })), fc.option(fc.integer()));
      await fc.assert(
        fc.asyncProperty(fc.array(row, { maxLength: 20 }), async (rows) => {
          await client.query('truncate copied');
          expect(
            await copyRows(
              client,
              'copied',
              ['n', 't', 'x', 'b'],
              rows.map(([t, x, b], n) => [n, t, x, b]),
            ),
          ).toBe(rows.length);
          const back = (
            await client.query<{ t: string | null; x: number | null; b: number | null }>('select t, x, b from copied order by n')
          ).rows;
          expect(back.map((r) => [r.t, r.x === null ? null : Number(r.x), r.b === null ? null : Number(r.b)])).toEqual(
            rows.map(([t, x, b]) => [t, x === null ? null : Object.is(x, -0) ? 0 : x, b]),
          );
        }),
        { numRuns: 150, seed: 2016 },
      );
    } finally {
      await client.query('drop table if exists copied');
      client.release();
    }
  });

  it('adds the synthetic listings with every index built again, found by the searches; removing them restores the mirror', async () => {
    const indexes = async () =>
      (
        await sql<{
          indexdef: string;
        }>`select indexdef from pg_indexes where schemaname = current_schema() and tablename = 'listings' order by indexname`.execute(
          onPg.store.db,
        )
      ).rows.map((r) => r.indexdef);
    const before = { indexes: await indexes(), listings: await onPg.listings.count() };
    expect(before.indexes.length).toBeGreaterThan(10);
    const version = await onPg.listings.dataVersion();
    const seeded = await seedListings(onPg.store, before.listings + 300, 7);
    expect(seeded).toMatchObject({ added: 300, total: before.listings + 300 });
    // The removal of earlier synthetic listings and the load each count as a write that changed listings.
    expect(await onPg.listings.dataVersion()).toBe(version + 2);
    expect(await indexes()).toEqual(before.indexes);
    // Copied in (COPY's text format) as SQLite stores them by INSERT: the same rule and seed derive the same
    // rows, but for when each mirror's sync saw and hydrated the listings they derive from.
    await seedListings(onSqlite.store, before.listings + 300, 7);
    const stored = async (rt: TestRuntime) => ({
      listings: (await rt.store.db.selectFrom('listings').selectAll().where('synthetic', '=', 1).orderBy('id').execute()).map(
        ({ first_seen_at: _seen, detail_fetched_at: _fetched, ...row }) => JSON.parse(JSON.stringify(row)) as Record<string, unknown>,
      ),
      amenities: await rt.store.db
        .selectFrom('listing_amenities')
        .select(['listing_id', 'amenity'])
        .where('listing_id', 'in', (eb) => eb.selectFrom('listings').select('id').where('synthetic', '=', 1))
        .orderBy('listing_id')
        .orderBy('amenity')
        .execute(),
    });
    const [copied, inserted] = [await stored(onPg), await stored(onSqlite)];
    expect(copied.listings).toHaveLength(300);
    expect(copied.amenities.length).toBeGreaterThan(0);
    expect(copied).toEqual(inserted);
    // Seeding again replaces them: the same rows, the indexes as they were.
    expect(await seedListings(onPg.store, before.listings + 300, 7)).toMatchObject({
      removed: 300,
      added: 300,
      total: before.listings + 300,
    });
    expect(await indexes()).toEqual(before.indexes);
    expect(await stored(onPg)).toEqual(copied);
    expect(await new SyntheticListingsRepository(onSqlite.store.db).deleteSynthetic()).toBe(300);
    const synthetic = await onPg.store.db
      .selectFrom('listings')
      .select(['id', 'kind', 'price'])
      .where('synthetic', '=', 1)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const key = await onPg.key('business');
    const found = await get(
      onPg.app,
      `/v1/search/${synthetic.kind === 'rental' ? 'rentals' : 'sales'}?minPrice=${synthetic.price}&maxPrice=${synthetic.price}&perPage=500`,
      key,
    );
    expect(found.body.data.map((l: { id: string }) => l.id)).toContain(synthetic.id);
    expect(await new SyntheticListingsRepository(onPg.store.db).deleteSynthetic()).toBe(300);
    expect(await onPg.listings.count()).toBe(before.listings);
  });
});

// Which index the planner takes depends on the table's size: these run with the mirror grown to the whole
// city's count of listings (58,466) by synthetic ones derived from it, and removed after.
describe('the planner at the size of the whole city', () => {
  beforeAll(async () => {
    await seedListings(onPg.store, rentalRows().length + saleRows().length, 2016);
    await sql`analyze listings`.execute(onPg.store.db);
  });
  afterAll(async () => {
    await new SyntheticListingsRepository(onPg.store.db).deleteSynthetic();
    await sql`analyze listings`.execute(onPg.store.db);
  });

  it('the statistics of the flags together tell the planner that no sale has no fee (migration 017)', async () => {
    type Node = { 'Plan Rows': number; Plans?: Node[] };
    const count = sql.raw(`select count(*) from listings where kind = 'sale' and status = 'ACTIVE' and no_fee = 1`);
    const estimate = async (db: typeof onPg.store.db) => {
      const plan = (await sql<{ 'QUERY PLAN': [{ Plan: Node }] }>`explain (format json) ${count}`.execute(db)).rows[0]['QUERY PLAN'][0]
        .Plan;
      return plan.Plans![0]['Plan Rows'];
    };
    // The sample's sales have no fee field at all; its rentals have, so the flag alone is common.
    expect(rentalRows().some((r) => r.no_fee === '1')).toBe(true);
    expect(
      Number(
        (await sql<{ n: string }>`select count(*) as n from listings where kind = 'sale' and no_fee = 1`.execute(onPg.store.db)).rows[0].n,
      ),
    ).toBe(0);
    // With them the planner expects (at most) one row; which plan it then takes depends on the table's size
    // and costs (on this data it may walk the order's index, which stops at once).
    const withStatistics = await estimate(onPg.store.db);
    expect(withStatistics).toBeLessThanOrEqual(1);
    // Without them it multiplies the shares of the kind and the flag, and expects sales with no fee.
    await onPg.store.db
      .transaction()
      .execute(async (trx) => {
        await sql`drop statistics listings_kind_flags`.execute(trx);
        await sql`analyze listings`.execute(trx);
        expect(await estimate(trx)).toBeGreaterThan(10 * Math.max(1, withStatistics));
        throw new Error('rolled back'); // the statistics and the analysis are undone with the transaction
      })
      .catch((error: Error) => expect(error.message).toBe('rolled back'));
  });

  it('the hydration backlog, of both kinds or one, is found through its partial index (migration 016)', async () => {
    const client = await onPg.store.pool!.connect();
    // One connection in a transaction that is rolled back: the backlog marked here never reaches the service.
    const { db, statements } = postgresWithLog<any>(async () => ({ query: client.query.bind(client), release: () => undefined }));
    try {
      await client.query('begin');
      await client.query(
        `update listings set needs_detail = 1 where id in (select id from listings where status = 'ACTIVE' order by md5(id) limit 300)`,
      );
      await client.query('analyze listings');
      const repository = new ListingsRepository(db);
      const waiting = (
        await client.query<{ id: string; kind: string }>(
          `select id, kind from listings where needs_detail = 1 and status = 'ACTIVE' order by first_seen_at, id`,
        )
      ).rows;
      expect(await repository.backlog(50)).toEqual(waiting.slice(0, 50));
      expect(await repository.backlog(50, 'rental')).toEqual(waiting.filter((r) => r.kind === 'rental').slice(0, 50));
      expect(statements.length).toBe(2);
      for (const statement of statements) {
        const plan = (await client.query(`explain ${statement.sql}`, statement.parameters as unknown[])).rows
          .map((r) => r['QUERY PLAN'])
          .join('\n');
        // Read through the partial index of the listings waiting; a few hundred of them may then be sorted.
        expect(plan, statement.sql).toContain('listings_backlog');
      }
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});

describe('two instances on one PostgreSQL database', () => {
  it('deliver each event once per subscription (claims with FOR UPDATE SKIP LOCKED)', async () => {
    // A second instance on the same schema, with its own local upstream whose market moves a day.
    const second = await startTestRuntime(
      { DATABASE_URL: url, ...WEBHOOKS },
      { initialSync: false, manualMarketClock: true, withoutRentHop: true },
    );
    const receiver = await startReceiver(() => 200);
    try {
      await second.key('business');
      const keyId = (await second.keys.list()).at(-1)!.id;
      const deps = {
        webhooks: second.webhooks,
        keys: second.keys,
        changes: second.changes,
        config: second.config,
        clock: () => new Date(),
      };
      const subscriptions = await Promise.all(
        ['listing.price_changed', 'listing.status_changed'].map((type) =>
          addSubscription(deps, { keyId, url: `${receiver.url}/${type}`, events: [type], filter: 'kind=rental' }),
        ),
      );
      const start = Math.min(...subscriptions.map((s) => Number(s.subscription.cursor)));
      second.marketClock!.advance(24 * 3_600_000);
      await second.syncer.syncScope('rental', 100);
      const events = await second.changes.page(start, 100_000, {
        kind: 'rental',
        types: ['listing.price_changed', 'listing.status_changed'],
      });
      expect(events.length).toBeGreaterThan(10);
      const deliveries = async () =>
        (await second.webhooks.deliveries({ limit: 100_000 })).filter((d) =>
          subscriptions.some((s) => s.subscription.id === d.subscription_id),
        );
      await waitFor(async () => {
        const ds = await deliveries();
        return ds.length === events.length && ds.every((d) => d.status === 'delivered');
      }, 'every event delivered by one of the two instances');
      const ids = receiver.requests.map((r) => String(r.headers['webhook-id']));
      expect(new Set(ids).size).toBe(events.length);
      expect(ids.length).toBe(events.length); // none twice
      expect((await deliveries()).every((d) => d.attempts === 1)).toBe(true);
      for (const r of receiver.requests) expect(r.path).toBe(`/${JSON.parse(r.body).type}`);
      console.log(
        `two instances on PostgreSQL: ${events.length} events, ${receiver.requests.length} deliveries, ${new Set(ids).size} distinct webhook-ids; ` +
          `attempts by instance: ${onPg.dispatcher.attempted} and ${second.dispatcher.attempted}`,
      );
    } finally {
      await receiver.close();
      await second.close();
    }
  }, 120_000);
});

describe('the search index with a delta on PostgreSQL', () => {
  it('with a delta of the listings another instance wrote after the market moved, gives exactly what the plain SQL path gives', async () => {
    // Another instance on the same schema, its own local upstream's market moved two days: its crawls, hydration and
    // valuation write through the real writers, each stamping its rows (migration 031).
    const other = await startTestRuntime({ DATABASE_URL: url }, { initialSync: false, manualMarketClock: true, withoutRentHop: true });
    try {
      const tally = await checkIndexWithDeltaAnswersAsStore(onPg, other, drawnRuns(100, 'INDEX_EQUIVALENCE_RUNS') / 2);
      console.log(
        `search index with a delta (PostgreSQL): ${tally.delta} listings written, ${tally.searches} searches, ${tally.matched} with matches`,
      );
    } finally {
      await other.close();
    }
  }, 300_000);
});
