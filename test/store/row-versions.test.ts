import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDEXED_ROW_COLUMNS } from '../../src/search/listing-columns.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';

// Each listing's row version (migration 031), which the search index reads its delta from (docs/search-index.md): every
// listing a writer changes in a column the index reads, its status or its amenities carries a version above the one
// read before the write, so that an index built before it finds the listing as `data_version > V`. Each real writer on
// its own: the crawl (no hydration), the hydration of its backlog, the valuation. A writer that wrote a row without its
// version would leave an index answering with the row as it was.

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({ READ_CACHE_SECONDS: '0' }, { manualMarketClock: true, withoutRentHop: true });
}, 120_000);
afterAll(async () => rt?.close());

/** Every listing as the index reads it, with its status, amenities and row version, by id. */
async function listings(): Promise<Map<string, { state: string; version: number }>> {
  const rows = await rt.store.db
    .selectFrom('listings')
    .select([...INDEXED_ROW_COLUMNS, 'status', 'kind', 'data_version'])
    .execute();
  const amenities = new Map<string, string[]>();
  for (const { listing_id, amenity } of await rt.store.db.selectFrom('listing_amenities').select(['listing_id', 'amenity']).execute())
    amenities.set(listing_id, [...(amenities.get(listing_id) ?? []), amenity]);
  return new Map(
    rows.map(({ data_version, ...row }) => [
      row.id as string,
      { state: JSON.stringify([row, (amenities.get(row.id as string) ?? []).sort()]), version: Number(data_version) },
    ]),
  );
}

/** Runs `write` and checks that every listing it changed (or added) carries a version above the one before; returns how many it changed. */
async function changedBy(write: () => Promise<unknown>): Promise<number> {
  const before = await listings();
  const version = await rt.listings.dataVersion();
  await write();
  const after = await listings();
  const changed = [...after].filter(([id, now]) => before.get(id)?.state !== now.state);
  const unstamped = changed.filter(([, now]) => now.version <= version).map(([id]) => id);
  expect(unstamped, 'listings changed without a row version above the one before the write').toEqual([]);
  // Each stamped with a version the store has reached: none above it.
  const reached = await rt.listings.dataVersion();
  expect(changed.every(([, now]) => now.version <= reached)).toBe(true);
  return changed.length;
}

describe("listings' row versions", () => {
  it('a crawl after the market moved stamps every listing it added, changed or took off the market', async () => {
    rt.marketClock!.advance(2 * 24 * 3_600_000);
    const changed = await changedBy(async () => expect(await rt.syncer.syncAll({ hydrate: false })).toEqual([]));
    expect(changed).toBeGreaterThan(0);
  }, 120_000);

  it('the hydration of the backlog stamps every listing whose details it wrote', async () => {
    expect(await rt.syncer.backlog()).toBeGreaterThan(0);
    const changed = await changedBy(() => rt.syncer.hydrateBacklog(Infinity));
    expect(changed).toBeGreaterThan(0);
  }, 120_000);

  it('the valuation stamps every listing whose price position it wrote', async () => {
    const changed = await changedBy(() => rt.valuation.run());
    expect(changed).toBeGreaterThan(0);
  }, 120_000);
});
