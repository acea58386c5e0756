import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AreaTree } from '../../src/domain/area.js';
import type { ListingRecord } from '../../src/domain/listing.js';
import { openStore, type Store } from '../../src/store/database.js';
import { ListingsRepository } from '../../src/store/listings-repository.js';
import { listingDeriver } from '../../src/sync/derived-figures.js';
import { LISTING_CHANGE_RULES } from '../../src/sync/listing-changes.js';
import { mapAreas, mapSearchNode, uniqueNodes } from '../../src/upstream/mappers.js';
import type { SiteArea, UpstreamSearchAnswer } from '../../src/upstream/types.js';
import { SHARED_DATA } from '../helpers/paths.js';

// A crawl is staged in the store page by page (src/store/crawl-staging.ts, migration 036) so that a sync holds one page
// in memory, not a scope: the staged rows must keep what the crawl saw last, belong to their crawl only, and not
// outlive a crawl that failed. Run on a new SQLite file and on the machine's PostgreSQL, in a schema of its own.

/** The records of the upstream search fixture's rentals (Brooklyn), as a crawl maps them. */
function fixtureRecords(): ListingRecord[] {
  const answer = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'upstream', 'search-rentals.json'), 'utf8')) as {
    data: { searchRentals: UpstreamSearchAnswer };
  };
  const tree = new AreaTree(mapAreas(JSON.parse(readFileSync(join(SHARED_DATA, 'streeteasy-areas', 'areas.json'), 'utf8')) as SiteArea[]));
  const now = new Date('2026-11-22T12:00:00Z');
  return uniqueNodes(answer.data.searchRentals.edges).map(
    (node) => mapSearchNode(node, 'rental', { areas: tree, scopeBoroughId: 200, now })!,
  );
}

const SERVER = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `nyc_listings_staging_${process.pid}_${Date.now()}`;
let admin: pg.Client;
const stores: Record<string, Store> = {};

beforeAll(async () => {
  stores.sqlite = await openStore(join(mkdtempSync(join(tmpdir(), 'staging-')), 'mirror.db'));
  admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  stores.postgres = await openStore(`${SERVER}?options=${encodeURIComponent(`-c search_path=${schema}`)}`);
}, 60_000);

afterAll(async () => {
  for (const store of Object.values(stores)) await store.close();
  await admin?.query(`drop schema if exists ${schema} cascade`);
  await admin?.end();
});

/** Every staged row: crawl, listing and the record's price. */
async function staged(store: Store): Promise<{ crawl: string; id: string; price: number }[]> {
  const rows = await store.db
    .selectFrom('crawl_staging')
    .select(['crawl_id', 'listing_id', 'record'])
    .orderBy('crawl_id')
    .orderBy('listing_id')
    .execute();
  return rows.map((r) => ({ crawl: r.crawl_id, id: r.listing_id, price: (JSON.parse(r.record) as ListingRecord).price }));
}

describe.each(['sqlite', 'postgres'])('a crawl staged in the store (%s)', (name) => {
  const records = fixtureRecords();

  it('keeps what a crawl saw last of each listing, counts each once, and clears one crawl without touching another', async () => {
    expect(records.length).toBeGreaterThanOrEqual(3);
    const store = stores[name];
    const staging = new ListingsRepository(store.db).staging;
    const [first, other] = [staging.sink('crawl-a'), staging.sink('crawl-b')];
    await first.put(records);
    const repriced = { ...records[0], price: records[0].price + 100 };
    // The same listing twice in one page, then again in a later page: the last one stands.
    await first.put([{ ...records[0], price: 1 }, repriced]);
    await other.put(records.slice(1, 2));
    expect(await staging.count('crawl-a')).toBe(records.length);
    expect(await staging.count('crawl-b')).toBe(1);
    const expected = [
      ...records.map((r) => ({ crawl: 'crawl-a', id: r.id, price: r.id === repriced.id ? repriced.price : r.price })),
      { crawl: 'crawl-b', id: records[1].id, price: records[1].price },
    ].sort((a, b) => (a.crawl + a.id < b.crawl + b.id ? -1 : 1));
    expect(await staged(store)).toEqual(expected);
    await first.clear();
    expect(await staged(store)).toEqual(expected.filter((r) => r.crawl === 'crawl-b'));
    await staging.discard('crawl-b');
    expect(await staged(store)).toEqual([]);
  });

  it('discards what crawls left staged over six hours ago, and nothing newer', async () => {
    const store = stores[name];
    const staging = new ListingsRepository(store.db).staging;
    await staging.sink('recent').put(records.slice(0, 1));
    const old = new Date(Date.now() - 6 * 3_600_000 - 60_000).toISOString();
    await store.db
      .insertInto('crawl_staging')
      .values(records.map((r) => ({ crawl_id: 'died', listing_id: r.id, record: JSON.stringify(r), staged_at: old })))
      .execute();
    expect(await staging.discardLeftovers()).toBe(records.length);
    expect((await staged(store)).map((r) => r.crawl)).toEqual(['recent']);
    await staging.discard('recent');
  });

  it('writes a staged crawl as the same records given at once, and leaves nothing staged', async () => {
    const store = stores[name];
    const listings = new ListingsRepository(store.db);
    const sink = listings.staging.sink('crawl-c');
    // Two pages, as a crawl puts them.
    await sink.put(records.slice(0, 2));
    await sink.put(records.slice(2));
    // No stations and no districts: what the write derives is not the subject here.
    const derive = listingDeriver([], () => ({ communityDistrict: null, policePrecinct: null, schoolDistrict: null }));
    const result = await listings.applyStaged('crawl-c', derive, LISTING_CHANGE_RULES, '2026-11-22T12:00:00.000Z');
    expect(result).toMatchObject({ inserted: records.length, updated: 0, delisted: 0 });
    const stored = await store.db.selectFrom('listings').select(['id', 'price']).orderBy('id').execute();
    expect(stored.map((r) => ({ id: r.id, price: Number(r.price) }))).toEqual(
      records.map((r) => ({ id: r.id, price: r.price })).sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    expect(await staged(store)).toEqual([]);
  });
});
