import { buildingClassDescription } from '../reference/building-classes.js';
import { presentRecordedSale } from '../presenters/recorded-sale.js';
import type { CityPolygons } from '../reference/city-polygons.js';
import { addressKey, type AddressQuery, type RecordedSaleRow } from '../domain/city-records.js';
import { BOROUGHS } from '../domain/area.js';
import { recordedSalesByMonth } from '../domain/market.js';
import { withRecordedSales } from '../domain/building.js';
import { COMPARABLE_RADII, similarity, type ComparableFacts } from '../domain/comparables.js';
import { distanceMeters } from '../domain/great-circle.js';
import type { GeoPoint } from '../wire/common.js';
import type { Freshness } from '../freshness/policy.js';
import type { ScopeFreshness } from '../freshness/scopes.js';
import type { CityRecordsRepository } from '../store/city-records-repository.js';
import type { RecordedSaleSearch } from '../store/recorded-sale-filters.js';
import { OPEN_DATA_KEY, RECORDED_SALES_SCOPE } from '../store/scopes-repository.js';
import type { Building } from '../wire/building.js';
import type { RecordedSale, RecordedSalesMonth } from '../wire/recorded-sale.js';

export interface CityRecordsDeps {
  records: CityRecordsRepository;
  /** Judges the open data scopes by their last successful sync (shared with the listings' reads). */
  scopeFreshness: ScopeFreshness;
  /** The open data sync: whether it may run now (its breaker), and a run of it (the scopes that failed). */
  openData: { canRefresh(): boolean; syncAll(): Promise<string[]> };
  /** Looked up by a building's position; built on first use (the files take a moment to read). */
  polygons: () => CityPolygons;
  /** Seconds within which open data is `cached` (`OPEN_DATA_FRESHNESS_SECONDS`). */
  freshnessSeconds: number;
}

/** Where a building's city fact came from: the listings site, PLUTO's tax lot, its latest recorded sale, or a city polygon. */
export type FactSource = 'listings site' | 'tax lot' | 'recorded sale' | 'polygon';

/**
 * The city facts {@link cityFactsOf} fills in, each with its sources in the order they are tried: the first that
 * knows a value gives it. The listings site's values win, then PLUTO's tax lot, then the building's latest recorded
 * sale that knows them; the districts are PLUTO's columns, else the polygon holding the building's position.
 */
export const CITY_FACT_SOURCES = {
  yearBuilt: ['listings site', 'tax lot', 'recorded sale'],
  unitCount: ['listings site', 'tax lot', 'recorded sale'],
  floorCount: ['listings site', 'tax lot'],
  buildingClass: ['tax lot', 'recorded sale'],
  communityDistrict: ['tax lot', 'polygon'],
  councilDistrict: ['polygon'],
  policePrecinct: ['tax lot', 'polygon'],
  schoolDistrict: ['polygon'],
  hurricaneEvacuationZone: ['polygon'],
} as const satisfies Record<string, readonly FactSource[]>;
export type CityFact = keyof typeof CITY_FACT_SOURCES;
export type CityFactSources = Record<CityFact, FactSource | null>;

/** The value of `fact` from the first of its sources ({@link CITY_FACT_SOURCES}) that knows one, and that source; null and no source when none does. */
function firstKnown<T>(
  fact: CityFact,
  values: Partial<Record<FactSource, T | null | undefined>>,
): { value: T | null; source: FactSource | null } {
  for (const source of CITY_FACT_SOURCES[fact] as readonly FactSource[]) {
    const value = values[source];
    if (value !== null && value !== undefined) return { value, source };
  }
  return { value: null, source: null };
}

/**
 * The building with the city's facts filled in, and where each came from: its recorded sales in the sale inventory's
 * historical figures ({@link withRecordedSales}); `nycData` and, where the listing site gives none, `floorCount`,
 * `yearBuilt` and `unitCount` (residential units), from the PLUTO tax lot at its address and ZIP code, else (year
 * built, units and building class) from its latest recorded sale that knows them; `councilDistrict`, `schoolDistrict`
 * and `hurricaneEvacuationZone` from its position (or its lot's) by point in polygon, and `communityDistrict` and
 * `policePrecinct` too where no lot matches. A building with neither a matching lot nor a position keeps `nycData`
 * null. Unknown facts stay null.
 */
export async function cityFactsOf(
  records: CityRecordsRepository,
  polygons: () => CityPolygons,
  building: Building,
): Promise<{ building: Building; sources: CityFactSources }> {
  const [lot, salePrices, sold] = await Promise.all([
    records.findLot(null, addressKey(building.address.street), building.address.zipCode),
    records.salePricesOfBuilding(building.id),
    records.saleFactsOfBuilding(building.id),
  ]);
  const point =
    building.geoCenter ??
    (lot && lot.latitude !== null && lot.longitude !== null ? { latitude: Number(lot.latitude), longitude: Number(lot.longitude) } : null);
  const saleInventory = withRecordedSales(building.saleInventory, salePrices);
  const shapes = point ? polygons() : null;
  const inPolygon = <T>(lookUp: (p: GeoPoint) => T | null) => (point ? lookUp(point) : null);
  const facts = {
    yearBuilt: firstKnown('yearBuilt', {
      'listings site': building.yearBuilt,
      'tax lot': lot?.year_built,
      'recorded sale': sold.yearBuilt,
    }),
    unitCount: firstKnown('unitCount', {
      'listings site': building.unitCount,
      'tax lot': lot?.residential_units,
      'recorded sale': sold.residentialUnits,
    }),
    floorCount: firstKnown('floorCount', { 'listings site': building.floorCount, 'tax lot': lot?.floor_count }),
    buildingClass: firstKnown('buildingClass', { 'tax lot': lot?.building_class, 'recorded sale': sold.buildingClass }),
    communityDistrict: firstKnown('communityDistrict', {
      'tax lot': lot?.community_district,
      polygon: inPolygon((p) => shapes!.communityDistrictAt(p)),
    }),
    councilDistrict: firstKnown('councilDistrict', { polygon: inPolygon((p) => shapes!.councilDistrictAt(p)) }),
    policePrecinct: firstKnown('policePrecinct', {
      'tax lot': lot?.police_precinct,
      polygon: inPolygon((p) => shapes!.policePrecinctAt(p)),
    }),
    schoolDistrict: firstKnown('schoolDistrict', { polygon: inPolygon((p) => shapes!.schoolDistrictAt(p)) }),
    hurricaneEvacuationZone: firstKnown('hurricaneEvacuationZone', { polygon: inPolygon((p) => shapes!.evacuationZoneAt(p)) }),
  };
  const sources = Object.fromEntries(Object.entries(facts).map(([name, fact]) => [name, fact.source])) as CityFactSources;
  const withFacts = { ...building, yearBuilt: facts.yearBuilt.value, unitCount: facts.unitCount.value, saleInventory };
  if (!lot && !point) return { building: withFacts, sources: { ...sources, buildingClass: null } };
  return {
    building: {
      ...withFacts,
      floorCount: facts.floorCount.value,
      nycData: {
        communityDistrict: facts.communityDistrict.value,
        councilDistrict: facts.councilDistrict.value,
        policePrecinct: facts.policePrecinct.value,
        schoolDistrict: facts.schoolDistrict.value,
        buildingClass: facts.buildingClass.value,
        buildingClassDescription: buildingClassDescription(facts.buildingClass.value),
        // PLUTO carries no abatement column; DOF's abatement data is another dataset the service does not mirror.
        hasAbatements: null,
        hurricaneEvacuationZone: facts.hurricaneEvacuationZone.value,
      },
    },
    sources,
  };
}

/** The building with the city's facts filled in ({@link cityFactsOf}, without their sources). */
export async function withCityFacts(records: CityRecordsRepository, polygons: () => CityPolygons, building: Building): Promise<Building> {
  return (await cityFactsOf(records, polygons, building)).building;
}

/** Tax lots of one address this close together (metres) are one place: a building on several lots, a condominium's units. */
export const SAME_PLACE_METRES = 500;

/** Where an address was found: its tax lot (BBL), the lot's address as the city writes it, and its position. */
export interface AddressPlace {
  bbl: string;
  address: string | null;
  geoPoint: GeoPoint;
}

/**
 * Reads of NYC Open Data's records in the mirror with the freshness rule applied: recorded sales, their
 * monthly figures, and a building's tax-lot facts (`nycData`). Stale data is answered and a background
 * sync of the open data started, as for listings.
 */
export class CityRecords {
  constructor(private readonly deps: CityRecordsDeps) {}

  /** Freshness of one open data scope (its last successful sync), starting a sync of all open data when stale. */
  private freshness(scope: string): Promise<Freshness> {
    return this.deps.scopeFreshness.judge(
      [{ scope, refreshKey: OPEN_DATA_KEY, refresh: () => this.deps.openData.syncAll() }],
      this.deps.freshnessSeconds,
      () => this.deps.openData.canRefresh(),
    );
  }

  /** One page of recorded sales matching `search`, the total and freshness. */
  async recordedSales(search: RecordedSaleSearch): Promise<{ items: RecordedSale[]; total: number; freshness: Freshness }> {
    const [found, freshness] = await Promise.all([this.deps.records.search(search), this.freshness(RECORDED_SALES_SCOPE)]);
    return { items: found.rows.map(presentRecordedSale), total: found.total, freshness };
  }

  /** Monthly figures of recorded sales in boroughs or areas (none: the city), months `from` to `to` (`YYYY-MM`). */
  async monthly(
    filter: { boroughIds?: number[]; areaIds?: number[] },
    from: string,
    to: string,
  ): Promise<{ months: RecordedSalesMonth[]; freshness: Freshness }> {
    const lastDay = new Date(Date.UTC(Number(to.slice(0, 4)), Number(to.slice(5, 7)), 0)).toISOString().slice(0, 10);
    const [sales, freshness] = await Promise.all([
      this.deps.records.salesForFigures({ ...filter, from: `${from}-01`, to: lastDay }),
      this.freshness(RECORDED_SALES_SCOPE),
    ]);
    return { months: recordedSalesByMonth(sales, from, to), freshness };
  }

  /**
   * Where a street address is, from the city's tax lots in the mirror (PLUTO, NYC Open Data): the lots at its
   * {@link addressKey}, within its ZIP code or borough when given. `unknown` when none has a position; `ambiguous`
   * (with the places, `Brooklyn 11201`) when they lie more than {@link SAME_PLACE_METRES} apart, as `100 Broadway`
   * in Manhattan and in Brooklyn; else the first lot by BBL. Not a geocoder: an address no lot carries is unknown.
   */
  async placeOfAddress(query: AddressQuery): Promise<{ found: AddressPlace } | { unknown: true } | { ambiguous: string[] }> {
    const lots = (await this.deps.records.lotsAtAddress(query.key)).filter(
      (lot) =>
        lot.latitude !== null &&
        lot.longitude !== null &&
        (query.zipCode === null || lot.zip_code === query.zipCode) &&
        (query.boroughId === null || lot.borough_id === query.boroughId),
    );
    if (!lots.length) return { unknown: true };
    const points = lots.map((lot) => ({ latitude: lot.latitude as number, longitude: lot.longitude as number }));
    if (points.some((point) => distanceMeters(points[0], point) > SAME_PLACE_METRES)) {
      return { ambiguous: [...new Set(lots.map((lot) => `${BOROUGHS[lot.borough_id]} ${lot.zip_code ?? ''}`.trim()))] };
    }
    return { found: { bbl: lots[0].bbl, address: lots[0].address, geoPoint: points[0] } };
  }

  /** The building with the city's facts filled in ({@link withCityFacts}). */
  withCityFacts(building: Building): Promise<Building> {
    return withCityFacts(this.deps.records, this.deps.polygons, building);
  }

  /**
   * Recorded sales with consideration near a sale listing (`subject`: its position, price in dollars, size in
   * square feet, bedrooms and baths), most similar first by the comparables' {@link similarity} (a recorded
   * sale has no bedrooms or baths: those parts count 0.5), dated `from` on when given. The radius widens
   * through {@link COMPARABLE_RADII} until `limit` are found; distances are great-circle metres.
   */
  async soldComparables(
    subject: GeoPoint & ComparableFacts,
    limit: number,
    from?: string,
  ): Promise<{ items: { recordedSale: RecordedSale; distance: number; similarity: number }[]; radius: number; freshness: Freshness }> {
    const freshness = await this.freshness(RECORDED_SALES_SCOPE);
    let radius: number = COMPARABLE_RADII[0];
    let found: RecordedSaleRow[] = [];
    for (radius of COMPARABLE_RADII) {
      // The flat box of the search holds the great-circle disc (its error is far under a metre at these radii).
      ({ rows: found } = await this.deps.records.search({
        near: { latitude: subject.latitude, longitude: subject.longitude, radius },
        noConsideration: false,
        from,
        sort: 'saleDate',
        descending: true,
        page: 1,
        perPage: 2000,
      }));
      if (found.length >= limit) break;
    }
    const items = found
      .map((row) => {
        const sale = presentRecordedSale(row);
        const distance = Math.round(distanceMeters(subject, sale.geoPoint!));
        return {
          recordedSale: sale,
          distance,
          similarity: similarity(
            subject,
            { price: sale.salePrice!, bedroomCount: null, fullBathroomCount: null, sqft: sale.grossSquareFeet },
            distance,
            radius,
          ),
        };
      })
      .filter((c) => c.distance <= radius)
      .sort(
        (a, b) =>
          b.similarity - a.similarity ||
          b.recordedSale.saleDate.localeCompare(a.recordedSale.saleDate) ||
          (a.recordedSale.id < b.recordedSale.id ? -1 : 1),
      )
      .slice(0, limit);
    return { items, radius, freshness };
  }

  /** Freshness of the recorded sales (an answer that reads none still says how old they are). */
  recordedSalesFreshness(): Promise<Freshness> {
    return this.freshness(RECORDED_SALES_SCOPE);
  }
}
