import type { Selectable } from 'kysely';
import { daysOnMarket, type ListingDetail, type ListingRecord, type ListingSummary, type PriceEvent } from '../domain/listing.js';
import { pricePerSqft } from '../domain/listing.js';
import type { ListingsTable } from './schema.js';

export type ListingRow = Selectable<ListingsTable>;

/** The columns a listing summary needs (searches read only these). */
export const SUMMARY_COLUMNS = [
  'id', 'street', 'unit', 'city', 'state', 'zip_code', 'price', 'bedroom_count', 'full_bathroom_count', 'half_bathroom_count',
  'building_type', 'area_name', 'status', 'latitude', 'longitude', 'lead_photo_key', 'source_group_label', 'url_path', 'tier', 'listed_at',
] as const satisfies readonly (keyof ListingRow)[];
export type SummaryRow = Pick<ListingRow, (typeof SUMMARY_COLUMNS)[number]>;

const flag = (v: boolean | null): number | null => (v === null ? null : v ? 1 : 0);
const bool = (v: number | null): boolean | null => (v === null ? null : v === 1);

/** Values the service derives for a listing when it stores it. */
export interface Derived {
  transitScore: number | null;
  recommendedScore: number;
}

/** A listing record -> a `listings` row (without first_seen_at, which the upsert keeps). */
export function recordToRow(r: ListingRecord, derived: Derived, seenAt: string, detailFetchedAt: string | null): ListingRow {
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
    monthly_charges: (r.monthlyTaxes ?? 0) + (r.monthlyMaintenance ?? 0) + (r.monthlyCommonCharges ?? 0),
    year_built: r.yearBuilt,
    building_id: r.buildingId,
    building_slug: r.buildingSlug,
    transit_score: derived.transitScore,
    recommended_score: derived.recommendedScore,
    details: JSON.stringify({
      fees: r.fees,
      contacts: r.contacts,
      photos: r.photos,
      floorPlanKey: r.floorPlanKey,
      upstreamPriceHistory: r.upstreamPriceHistory,
    }),
    first_seen_at: seenAt,
    last_seen_at: seenAt,
    detail_fetched_at: detailFetchedAt,
    delisted_at: null,
    needs_detail: detailFetchedAt ? 0 : 1,
  };
}

/** A row -> the summary on the wire (spec 2.4); days on market are counted to `now`; `distance` (metres) when the search had a point. */
export function rowToSummary(row: SummaryRow & { distance?: number | null }, now: Date): ListingSummary {
  return {
    ...(row.distance === undefined || row.distance === null ? {} : { distance: Number(row.distance) }),
    id: row.id,
    address: { street: row.street, unit: row.unit, city: row.city, state: row.state, zipCode: row.zip_code },
    price: Number(row.price),
    bedroomCount: row.bedroom_count,
    fullBathroomCount: row.full_bathroom_count,
    halfBathroomCount: row.half_bathroom_count,
    buildingType: row.building_type,
    areaName: row.area_name,
    status: row.status,
    geoPoint: row.latitude === null || row.longitude === null ? null : { latitude: row.latitude, longitude: row.longitude },
    leadPhotoKey: row.lead_photo_key,
    sourceGroupLabel: row.source_group_label,
    urlPath: row.url_path,
    tier: row.tier,
    daysOnMarket: daysOnMarket(row.listed_at, now),
  };
}

/**
 * A row -> the detail on the wire (spec 2.5). `amenities` lists every known amenity with whether this
 * listing has it; `priceHistory` is the mirror's own record of events, oldest first.
 */
export function rowToDetail(row: ListingRow, amenities: string[], knownAmenities: readonly string[], history: PriceEvent[], now: Date): ListingDetail {
  const details = JSON.parse(row.details) as Pick<ListingRecord, 'fees' | 'contacts' | 'photos' | 'floorPlanKey'>;
  const names = [...new Set([...knownAmenities, ...amenities])];
  return {
    ...rowToSummary(row, now),
    areaId: row.area_id,
    buildingId: row.building_id,
    listedAt: row.listed_at,
    transitScore: row.transit_score,
    netEffective: row.net_effective,
    monthsFree: row.months_free,
    sqft: row.sqft,
    pricePerSqft: row.price_per_sqft,
    rooms: row.rooms,
    leaseTerm: row.lease_term,
    furnished: bool(row.furnished),
    availableAt: row.available_at,
    saleType: row.sale_type,
    noFee: bool(row.no_fee),
    petsAllowed: bool(row.pets_allowed),
    amenities: names.map((name) => ({ name, available: amenities.includes(name) })),
    fees: details.fees ?? [],
    contacts: details.contacts ?? [],
    photos: details.photos ?? [],
    floorPlanKey: details.floorPlanKey ?? null,
    has3dTour: bool(row.has_3d_tour),
    hasVideo: bool(row.has_video),
    priceHistory: history,
  };
}
