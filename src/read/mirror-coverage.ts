import { BOROUGH_IDS, BOROUGHS } from '../domain/area.js';
import type { Store } from '../store/database.js';
import { AreasRepository } from '../store/areas-repository.js';
import { ListingsRepository } from '../store/listings-repository.js';
import { BuildingSchema, type Building } from '../wire/building.js';
import { ListingDetail } from '../wire/listing.js';
import { FieldCoverage, fieldPaths } from './field-coverage.js';
import { rowToDetail } from '../presenters/listing.js';
import { CITY_FACT_SOURCES, cityFactsOf, type CityFact, type FactSource } from './city-records.js';
import { presentRecordedSale } from '../presenters/recorded-sale.js';
import { CityPolygons } from '../reference/city-polygons.js';
import { CityRecordsRepository } from '../store/city-records-repository.js';
import { RecordedSaleSchema } from '../wire/recorded-sale.js';

/** Column groups of a coverage table: the five boroughs, then every record. */
export const COVERAGE_GROUPS = [...BOROUGH_IDS.map((id) => BOROUGHS[id]), 'all'] as const;

/** Coverage of the mirror's active, mirrored (not synthetic) listings of each kind, of its buildings (and the sources of their city facts) and of its recorded sales. */
export interface MirrorCoverage {
  sale: FieldCoverage;
  rental: FieldCoverage;
  building: FieldCoverage;
  /** One row a city fact and source (`yearBuilt from tax lot`): the share of buildings whose fact that source gave. */
  buildingFactSources: FieldCoverage;
  recordedSale: FieldCoverage;
}

const CITY_FACTS = Object.keys(CITY_FACT_SOURCES) as CityFact[];
const sourcePath = (fact: string, source: FactSource) => `${fact} from ${source}`;

/** The building's fields, `nycData` expanded into its members (each a city fact of its own). */
function buildingPaths(): string[] {
  const nycData = (BuildingSchema.properties.nycData as { anyOf: { properties?: object }[] }).anyOf.find((s) => s.properties)!;
  return fieldPaths(BuildingSchema).flatMap((path) =>
    path === 'nycData' ? [path, ...Object.keys(nycData.properties!).map((m) => `nycData.${m}`)] : [path],
  );
}

/**
 * Reads the whole mirror and counts, for every field of the listing detail (whose first fields are the
 * summary's) and of the building as the API presents them, how many records hold a value, per borough.
 * Listings are presented with their amenities and the mirror's price events; a building's inventories
 * are counted when it is read, so they are always present here; its city facts are filled in as
 * `/v1/building` does, with the polygons of `sharedDataDir`. Recorded sales count by their own borough.
 */
export async function mirrorCoverage(store: Store, sharedDataDir: string, now: Date = new Date()): Promise<MirrorCoverage> {
  const listings = new ListingsRepository(store.db);
  const tree = await new AreasRepository(store.db, 0).tree();
  const amenities = await listings.mirroredAmenities();
  const withHistory = new Set(
    (await store.db.selectFrom('price_history').select('listing_id').distinct().execute()).map((r) => r.listing_id),
  );
  const paths = fieldPaths(ListingDetail);
  const coverage: MirrorCoverage = {
    sale: new FieldCoverage(paths),
    rental: new FieldCoverage(paths),
    building: new FieldCoverage(buildingPaths()),
    buildingFactSources: new FieldCoverage(CITY_FACTS.flatMap((fact) => CITY_FACT_SOURCES[fact].map((source) => sourcePath(fact, source)))),
    recordedSale: new FieldCoverage(fieldPaths(RecordedSaleSchema)),
  };
  const records = new CityRecordsRepository(store.db);
  let polygons: CityPolygons | null = null;
  for (const row of await listings.mirrored()) {
    // A history of one event stands for "there is one": the presenter only needs a non-empty list.
    const history = withHistory.has(row.id) ? [{ date: '', price: 0, event: 'LISTED', pctChange: null }] : [];
    const detail = rowToDetail(row, amenities.get(row.id) ?? [], [], history, now);
    const target = coverage[row.kind as 'sale' | 'rental'];
    target.add(BOROUGHS[row.borough_id ?? -1] ?? 'unknown', detail);
    target.add('all', detail);
  }
  for (const { data } of await store.db.selectFrom('buildings').select('data').execute()) {
    const { building, sources } = await cityFactsOf(
      records,
      () => (polygons ??= new CityPolygons(sharedDataDir)),
      JSON.parse(data) as Building,
    );
    const borough = BOROUGHS[(building.area ? tree.boroughOf(building.area.id) : null) ?? -1] ?? 'unknown';
    const bySource = Object.fromEntries(CITY_FACTS.flatMap((fact) => (sources[fact] ? [[sourcePath(fact, sources[fact]), true]] : [])));
    for (const group of [borough, 'all']) {
      coverage.building.add(group, building);
      coverage.buildingFactSources.add(group, bySource);
    }
  }
  for (const row of await store.db.selectFrom('recorded_sales').selectAll().execute()) {
    const sale = presentRecordedSale(row);
    coverage.recordedSale.add(BOROUGHS[row.borough_id], sale);
    coverage.recordedSale.add('all', sale);
  }
  return coverage;
}

/** The coverage as Markdown: one table for sales, rentals, buildings and recorded sales, shares in whole percent. */
export function coverageMarkdown(coverage: MirrorCoverage): string {
  return [
    "### Sale listings (listing detail: the summary's fields come first, down to `daysOnMarket`)",
    coverage.sale.table(COVERAGE_GROUPS),
    "### Rental listings (listing detail: the summary's fields come first, down to `daysOnMarket`)",
    coverage.rental.table(COVERAGE_GROUPS),
    "### Buildings (with the city's facts, as `/v1/building` shows them)",
    coverage.building.table(COVERAGE_GROUPS),
    "### Buildings: where each city fact came from (the first source that knows it: listings site, PLUTO's tax lot, latest recorded sale, polygon)",
    coverage.buildingFactSources.table(COVERAGE_GROUPS),
    '### Recorded sales',
    coverage.recordedSale.table(COVERAGE_GROUPS),
  ].join('\n\n');
}
