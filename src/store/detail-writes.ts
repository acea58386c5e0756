import type { Transaction } from 'kysely';
import type { HydratedFacts } from '../domain/listing.js';
import { monthlyCharges } from '../domain/monthly-cost.js';
import { bumpDataVersion, nextDataVersion } from './data-version.js';
import type { ListingRow } from './listing-rows.js';
import { BATCH, planForValues } from './listing-writes.js';
import type { Database } from './schema.js';

/** Columns hydration writes. */
const DETAIL_UPDATES = [
  'listed_at',
  'zip_code',
  'building_id',
  'year_built',
  'pets_allowed',
  'rooms',
  'lease_term',
  'monthly_maintenance',
  'monthly_taxes',
  'monthly_charges',
  'details',
  'detail_fetched_at',
  'needs_detail',
  'detail_failures',
  'detail_error',
  'data_version',
] as const satisfies readonly (keyof ListingRow)[];

/** Writes what hydration found for each listing in transaction `trx` (see {@link ListingsRepository.applyDetails}). */
export async function writeDetails(trx: Transaction<Database>, items: { id: string; facts: HydratedFacts }[], at: string): Promise<void> {
  await planForValues(trx);
  const version = await nextDataVersion(trx);
  for (let i = 0; i < items.length; i += BATCH) {
    const batch = items.slice(i, i + BATCH);
    const ids = batch.map((item) => item.id);
    const stored = new Map((await trx.selectFrom('listings').selectAll().where('id', 'in', ids).execute()).map((r) => [r.id, r]));
    const present = batch.filter((item) => stored.has(item.id));
    if (!present.length) continue;
    const rows = present.map(({ id, facts }) => detailedRow(stored.get(id)!, facts, at, version));
    await trx
      .insertInto('listings')
      .values(rows)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => Object.fromEntries(DETAIL_UPDATES.map((c) => [c, eb.ref(`excluded.${c}`)])) as never),
      )
      .execute();
    await trx
      .deleteFrom('listing_amenities')
      .where(
        'listing_id',
        'in',
        rows.map((r) => r.id),
      )
      .execute();
    const amenityRows = present.flatMap(({ id, facts }) => facts.amenities.map((amenity) => ({ listing_id: id, amenity })));
    if (amenityRows.length) await trx.insertInto('listing_amenities').values(amenityRows).execute();
    await redateListedEvents(trx, present);
  }
  await bumpDataVersion(trx);
}

/** A stored listing's row with what its detail page told (`facts`), fetched at `at` (ISO time, UTC), stamped `version`. */
function detailedRow(row: ListingRow, facts: HydratedFacts, at: string, version: number): ListingRow {
  return {
    ...row,
    listed_at: facts.listedAt ?? row.listed_at,
    zip_code: facts.zipCode ?? row.zip_code,
    building_id: facts.buildingId,
    year_built: facts.yearBuilt,
    pets_allowed: facts.petsAllowed === null ? null : facts.petsAllowed ? 1 : 0,
    rooms: facts.rooms,
    lease_term: facts.leaseTerm,
    monthly_maintenance: facts.monthlyMaintenance,
    monthly_taxes: facts.monthlyTaxes,
    monthly_charges: monthlyCharges({
      maintenance: facts.monthlyMaintenance,
      commonCharges: row.monthly_common_charges,
      taxes: facts.monthlyTaxes,
    }),
    details: JSON.stringify({
      ...(JSON.parse(row.details) as Record<string, unknown>),
      photos: facts.photos,
      floorPlanKey: facts.floorPlanKey,
    }),
    detail_fetched_at: at,
    needs_detail: 0,
    detail_failures: 0,
    detail_error: null,
    data_version: version,
  };
}

/** Dates each listing's latest LISTED event on the day its detail gives, where the crawl had dated it the day it saw it. */
async function redateListedEvents(trx: Transaction<Database>, present: { id: string; facts: HydratedFacts }[]): Promise<void> {
  // The crawl that found a listing dated its LISTED event the day it saw it; the detail knows the real day.
  const listedDay = new Map(present.filter((item) => item.facts.listedAt).map((item) => [item.id, item.facts.listedAt!.slice(0, 10)]));
  if (!listedDay.size) return;
  const latest = new Map<string, Database['price_history']>();
  for (const event of await trx
    .selectFrom('price_history')
    .selectAll()
    .where('event', '=', 'LISTED')
    .where('listing_id', 'in', [...listedDay.keys()])
    .execute()) {
    const seen = latest.get(event.listing_id);
    if (!seen || event.recorded_at > seen.recorded_at) latest.set(event.listing_id, event);
  }
  const redated = [...latest.values()]
    .filter((e) => e.date !== listedDay.get(e.listing_id))
    .map((e) => ({ ...e, date: listedDay.get(e.listing_id)! }));
  if (redated.length) {
    await trx
      .insertInto('price_history')
      .values(redated)
      .onConflict((oc) => oc.columns(['listing_id', 'recorded_at', 'event']).doUpdateSet((eb) => ({ date: eb.ref('excluded.date') })))
      .execute();
  }
}
