import { daysOnMarket, type ListingRecord } from '../domain/listing.js';
import type { ListingDetail, ListingSummary, PriceEvent } from '../wire/listing.js';
import type { ListingRow, SummaryRow } from '../store/listing-rows.js';

/** Presenters: stored rows -> the listing shapes on the wire (spec 2.4, 2.5). */

const bool = (v: number | null): boolean | null => (v === null ? null : v === 1);

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
 * listing has it; `priceHistory` is the mirror's own record of events, oldest first; `valued` is the listing's
 * estimate (dollars) and its price's position against it (percent), null when unknown.
 */
export function rowToDetail(
  row: ListingRow,
  amenities: string[],
  knownAmenities: readonly string[],
  history: PriceEvent[],
  now: Date,
  valued: { estimate: number | null; pricePosition: number | null } = { estimate: null, pricePosition: null },
): ListingDetail {
  const details = JSON.parse(row.details) as Pick<ListingRecord, 'fees' | 'contacts' | 'photos' | 'floorPlanKey'>;
  const names = [...new Set([...knownAmenities, ...amenities])];
  // The summary's fields, then the detail's, added to the summary object: an object literal that spreads
  // the summary first and lists some thirty more properties is several times slower for V8 to build.
  const summary: ListingSummary = rowToSummary(row, now);
  return Object.assign(summary, {
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
    estimate: valued.estimate,
    pricePosition: valued.pricePosition,
  });
}
