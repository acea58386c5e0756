import type { Kysely } from 'kysely';
import type { ListingKind } from '../domain/listing.js';
import type { Database } from '../store/schema.js';
import { keysetPages } from '../lib/keyset-pages.js';
import { runGivingTurns } from '../lib/stepwise.js';
import { ColumnsBuilder } from './columns-builder.js';
import { ListingsWithDelta, type SearchableListings } from './delta-listings.js';
import type { IndexedListings } from './indexed-listings.js';
import { INDEXED_ROW_COLUMNS, type IndexedRow } from './listing-columns.js';
import { DELTA_LIMIT } from './search-index-state.js';

/** Listings whose amenities are read a statement (the ids are its parameters). */
const AMENITY_IDS = 500;

/** A listing written since the index's build, as its delta holds it: its row, and its amenities when it is active. */
export interface WrittenListing {
  row: IndexedRow & { kind: string; status: string };
  amenities: { listing_id: string; amenity: string }[];
}

/** The listings written since a build, by id, as last read (of any kind or status). */
export type WrittenListings = ReadonlyMap<string, WrittenListing>;

/**
 * `held` with the listings written after data version `since` (`listings.data_version`, migration 031) read from the
 * store and merged in by id, a later row replacing the one held, with the amenities of those active; `read` is how many
 * rows were read. Null, without reading further, once more than {@link DELTA_LIMIT} listings would be held.
 */
export async function readWritten(
  db: Kysely<Database>,
  held: WrittenListings,
  since: number,
): Promise<{ listings: WrittenListings; read: number } | null> {
  const listings = new Map(held);
  // In keyset pages by (data_version, id), which the index on (data_version, id) serves in that order (migration 034;
  // by id alone, SQLite scanned the whole table in the primary key's order for a few rows written), stopping once past
  // the limit: that tells that there are too many, without a count of them first. The first key, (since + 1, ''),
  // comes before every row written after `since` (a version is an integer, an id never empty).
  const pages = keysetPages(
    [since + 1, ''] as [number, string],
    ([version, id], size) =>
      db
        .selectFrom('listings')
        .select([...INDEXED_ROW_COLUMNS, 'kind', 'status', 'data_version'])
        .where('data_version', '>', since)
        .where((eb) => eb(eb.refTuple('data_version', 'id'), '>', eb.tuple(version, id)))
        .orderBy('data_version')
        .orderBy('id')
        .limit(size)
        .execute() as Promise<(WrittenListing['row'] & { data_version: number })[]>,
    (row): [number, string] => [Number(row.data_version), row.id as string],
  );
  // A row written again while the pages are read is read twice, the later one kept.
  const active = new Set<string>();
  let read = 0;
  for await (const page of pages) {
    read += page.length;
    for (const row of page) {
      listings.set(row.id as string, { row, amenities: [] });
      if (row.status === 'ACTIVE') active.add(row.id as string);
    }
    if (listings.size > DELTA_LIMIT) return null;
  }
  const activeIds = [...active];
  for (let i = 0; i < activeIds.length; i += AMENITY_IDS) {
    const amenities = await db
      .selectFrom('listing_amenities')
      .select(['listing_id', 'amenity'])
      .where('listing_id', 'in', activeIds.slice(i, i + AMENITY_IDS))
      .orderBy('listing_id')
      .orderBy('amenity')
      .execute();
    for (const amenity of amenities) listings.get(amenity.listing_id)?.amenities.push(amenity);
  }
  return { listings, read };
}

/**
 * Each kind's built columns with the delta of `written` ({@link ListingsWithDelta}): those listings taken out of the
 * built columns, and the active ones in columns of their own, made in steps with turns between them.
 */
export async function withWritten(
  columns: ReadonlyMap<ListingKind, IndexedListings>,
  written: WrittenListings,
): Promise<Map<ListingKind, SearchableListings>> {
  const ids = [...written.keys()];
  const recent = [...written.values()].filter((listing) => listing.row.status === 'ACTIVE');
  const amenities = recent.flatMap((listing) => listing.amenities);
  const kinds = new Map<ListingKind, SearchableListings>();
  for (const [kind, built] of columns) {
    const builder = new ColumnsBuilder(0);
    builder.add(recent.filter((listing) => listing.row.kind === kind).map((listing) => listing.row));
    builder.addAmenities(amenities);
    kinds.set(kind, ListingsWithDelta.of(built, ids, await runGivingTurns(builder.finishing())));
  }
  return kinds;
}
