import type { Selectable } from 'kysely';
import type { ListingRecord } from '../domain/listing.js';
import { pricePerSqft } from '../domain/listing.js';
import { monthlyCharges } from '../domain/monthly-cost.js';
import type { Districts } from '../domain/city-districts.js';
import { districtColumns, type ListingsTable } from './schema.js';

export type ListingRow = Selectable<ListingsTable>;

/**
 * A listing's row with when a crawl last saw it (`listing_sightings`, migration 033): null for a listing no crawl saw
 * (a synthetic one).
 */
export type SeenListingRow = ListingRow & { last_seen_at: string | null };

/** The columns a listing summary needs (searches read only these). */
export const SUMMARY_COLUMNS = [
  'id',
  'street',
  'unit',
  'city',
  'state',
  'zip_code',
  'price',
  'bedroom_count',
  'full_bathroom_count',
  'half_bathroom_count',
  'building_type',
  'area_name',
  'status',
  'latitude',
  'longitude',
  'lead_photo_key',
  'source_group_label',
  'url_path',
  'tier',
  'listed_at',
] as const satisfies readonly (keyof ListingRow)[];
export type SummaryRow = Pick<ListingRow, (typeof SUMMARY_COLUMNS)[number]>;

const flag = (v: boolean | null): number | null => (v === null ? null : v ? 1 : 0);

/** Values the service derives for a listing when it stores it. */
export interface Derived {
  transitScore: number | null;
  recommendedScore: number;
  /** The districts holding the listing's position (the city's polygons). */
  districts: Districts;
}

/**
 * A row as a crawl reads it from a search node: everything but the price position, which the valuation writes
 * (estimate/valuation.ts), and the row's version, which the write sets (store/data-version.ts).
 */
export type CrawledRow = Omit<ListingRow, 'price_position' | 'data_version'>;

/**
 * A listing record from a search node -> a `listings` row (its first_seen_at kept by the upsert when stored), waiting
 * for its details (hydration fills them). When a crawl saw it is written apart (`listing_sightings`).
 */
export function recordToRow(r: ListingRecord, derived: Derived, seenAt: string): CrawledRow {
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    synthetic: 0,
    area_id: r.areaId,
    borough_id: r.boroughId,
    area_name: r.areaName,
    street: r.address.street,
    unit: r.address.unit,
    city: r.address.city,
    state: r.address.state,
    zip_code: r.address.zipCode,
    price: r.price,
    bedroom_count: r.bedroomCount,
    full_bathroom_count: r.fullBathroomCount,
    half_bathroom_count: r.halfBathroomCount,
    building_type: r.buildingType,
    latitude: r.geoPoint?.latitude ?? null,
    longitude: r.geoPoint?.longitude ?? null,
    lead_photo_key: r.leadPhotoKey,
    source_group_label: r.sourceGroupLabel,
    url_path: r.urlPath,
    tier: r.tier,
    listed_at: r.listedAt,
    net_effective: r.netEffective,
    months_free: r.monthsFree,
    sqft: r.sqft,
    price_per_sqft: pricePerSqft(r.price, r.sqft),
    rooms: r.rooms,
    lease_term: r.leaseTerm,
    furnished: flag(r.furnished),
    available_at: r.availableAt,
    sale_type: r.saleType,
    no_fee: flag(r.noFee),
    pets_allowed: flag(r.petsAllowed),
    has_3d_tour: flag(r.has3dTour),
    has_video: flag(r.hasVideo),
    open_house_start: r.openHouseStart,
    open_house_end: r.openHouseEnd,
    monthly_taxes: r.monthlyTaxes,
    monthly_maintenance: r.monthlyMaintenance,
    monthly_common_charges: r.monthlyCommonCharges,
    monthly_charges: monthlyCharges({ maintenance: r.monthlyMaintenance, commonCharges: r.monthlyCommonCharges, taxes: r.monthlyTaxes }),
    year_built: r.yearBuilt,
    building_id: r.buildingId,
    building_slug: r.buildingSlug,
    transit_score: derived.transitScore,
    recommended_score: derived.recommendedScore,
    ...districtColumns(derived.districts),
    details: JSON.stringify({
      fees: r.fees,
      contacts: r.contacts,
      photos: r.photos,
      floorPlanKey: r.floorPlanKey,
      upstreamPriceHistory: r.upstreamPriceHistory,
    }),
    first_seen_at: seenAt,
    detail_fetched_at: null,
    delisted_at: null,
    needs_detail: 1,
    detail_failures: 0,
    detail_error: null,
  };
}
