import { type AreaTree, BOROUGHS, buildAreas, type Area } from '../domain/area.js';
import type { Building } from '../wire/building.js';
import type { HydratedFacts, ListingKind, ListingRecord } from '../domain/listing.js';
import type { GeoPoint } from '../wire/common.js';
import { toApiAreaId } from './borough-ids.js';
import type {
  SiteArea,
  UpstreamBuildingDetail,
  UpstreamEdge,
  UpstreamGeoPoint,
  UpstreamListingDetail,
  UpstreamSearchNode,
} from './types.js';

/** The site's areas -> API areas: borough ids swapped, non-NYC areas dropped, levels set, the site's slugs and outlines kept. */
export function mapAreas(rows: SiteArea[]): Area[] {
  return buildAreas(
    rows
      .filter((r) => typeof r?.numericId === 'number' && typeof r.name === 'string')
      .map((r) => ({
        id: toApiAreaId(r.numericId),
        name: r.name,
        parentId: r.parentId === null || r.parentId === undefined ? null : toApiAreaId(r.parentId),
        slug: typeof r.id === 'string' && r.id ? r.id : undefined,
        outline: r.geometry?.encodedBoundary ?? null,
      })),
  );
}

/** The nodes of a search answer's edges, once each (edges without a node, such as promoted repeats the client did not select, are skipped). */
export function uniqueNodes(edges: (UpstreamEdge | null)[] | null | undefined): UpstreamSearchNode[] {
  const seen = new Set<string>();
  const out: UpstreamSearchNode[] = [];
  for (const edge of edges ?? []) {
    const node = edge?.node;
    if (!node || node.id === null || node.id === undefined) continue;
    const id = String(node.id);
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(node);
  }
  return out;
}

function geo(point: UpstreamGeoPoint | null | undefined): GeoPoint | null {
  if (!point || typeof point.latitude !== 'number' || typeof point.longitude !== 'number') return null;
  if (point.latitude === 0 && point.longitude === 0) return null;
  return { latitude: point.latitude, longitude: point.longitude };
}

/** City of a borough as a postal address writes it: Manhattan is "New York". */
export function boroughCity(boroughId: number | null): string | null {
  if (boroughId === null) return null;
  return boroughId === 100 ? 'New York' : (BOROUGHS[boroughId] ?? null);
}

/** The building slug inside an urlPath of the form `/building/<slug>/...`, else null. */
export function buildingSlugFromUrlPath(urlPath: string | null | undefined): string | null {
  const match = /^\/building\/([^/?#]+)/.exec(urlPath ?? '');
  return match ? decodeURIComponent(match[1]) : null;
}

/** Context of a mapping: the area tree, the borough of the crawled scope, and the clock (UTC). */
export interface MapContext {
  areas: AreaTree;
  scopeBoroughId?: number | null;
  now: Date;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

/**
 * One search node -> the mirror's record, with every fact only a detail gives (listing date, amenities,
 * building, zip code, charges) unknown: hydration fills them. Returns null for a node without an id or
 * a price. Area: the area named `areaName` in the crawled borough, else the borough.
 * `livingAreaSize: 0` means unknown.
 */
export function mapSearchNode(node: UpstreamSearchNode, kind: ListingKind, ctx: MapContext): ListingRecord | null {
  const price = num(node.price);
  if (node.id === null || node.id === undefined || price === null) return null;
  const areaName = str(node.areaName);
  let areaId: number | null = areaName ? (ctx.areas.findByName(areaName, ctx.scopeBoroughId ?? undefined)?.id ?? null) : null;
  if (areaId === null) areaId = ctx.scopeBoroughId ?? null;
  const boroughId = areaId === null ? null : ctx.areas.boroughOf(areaId);
  const size = num(node.livingAreaSize);
  const urlPath = str(node.urlPath);
  return {
    id: String(node.id),
    kind,
    status: str(node.status) ?? 'ACTIVE',
    areaId,
    boroughId,
    areaName: areaName ?? (areaId === null ? null : (ctx.areas.get(areaId)?.name ?? null)),
    address: { street: str(node.street), unit: str(node.unit), city: boroughCity(boroughId), state: 'NY', zipCode: null },
    price,
    bedroomCount: num(node.bedroomCount),
    fullBathroomCount: num(node.fullBathroomCount),
    halfBathroomCount: num(node.halfBathroomCount),
    buildingType: str(node.buildingType),
    geoPoint: geo(node.geoPoint),
    leadPhotoKey: str(node.leadMedia?.photo?.key),
    sourceGroupLabel: str(node.sourceGroupLabel),
    urlPath,
    tier: str(node.tier),
    listedAt: null,
    netEffective: num(node.netEffectivePrice),
    monthsFree: num(node.monthsFree),
    sqft: size !== null && size > 0 ? size : null,
    rooms: null,
    leaseTerm: null,
    furnished: bool(node.furnished),
    availableAt: str(node.availableAt),
    saleType: null,
    noFee: bool(node.noFee),
    petsAllowed: null,
    amenities: [],
    has3dTour: bool(node.hasTour3d),
    hasVideo: bool(node.hasVideos),
    openHouseStart: str(node.upcomingOpenHouse?.startTime),
    openHouseEnd: str(node.upcomingOpenHouse?.endTime),
    monthlyTaxes: null,
    monthlyMaintenance: null,
    monthlyCommonCharges: null,
    yearBuilt: null,
    buildingId: null,
    buildingSlug: buildingSlugFromUrlPath(urlPath),
    fees: [],
    contacts: [],
    photos: [],
    floorPlanKey: null,
    upstreamPriceHistory: [],
  };
}

/** What hydration reads of a listing's building: as the site answers it, or as the mirror stored it. */
type BuildingFacts = {
  yearBuilt?: number | null;
  policies?: { petPolicy?: { catsAllowed?: boolean | null; dogsAllowed?: boolean | null } | null } | null;
};

/** A listing detail (and its building, when known) -> the facts hydration adds to the record. */
export function mapDetail(detail: UpstreamListingDetail, building: BuildingFacts | null | undefined): HydratedFacts {
  const details = detail.propertyDetails;
  const keys = (list: ({ key?: string | null } | null)[] | null | undefined) =>
    (list ?? []).map((p) => str(p?.key)).filter((k): k is string => k !== null);
  const openHouse = (detail.upcomingOpenHouses ?? []).find((o) => o && str(o.startTime));
  const pets = building?.policies?.petPolicy;
  const amenities = details?.amenities?.list;
  return {
    status: str(detail.status),
    listedAt: str(detail.createdAt),
    amenities: [...new Set((Array.isArray(amenities) ? amenities : []).filter((a): a is string => typeof a === 'string'))].sort(),
    buildingId: detail.buildingId === null || detail.buildingId === undefined ? null : String(detail.buildingId),
    zipCode: str(details?.address?.zipCode),
    rooms: num(details?.roomCount),
    leaseTerm: num(detail.pricing?.leaseTermMonths),
    availableAt: str(detail.availableAt),
    monthlyMaintenance: num(detail.pricing?.maintenanceFee),
    monthlyTaxes: num(detail.pricing?.taxes),
    photos: keys(detail.media?.photos),
    floorPlanKey: keys(detail.media?.floorPlans)[0] ?? null,
    openHouseStart: str(openHouse?.startTime),
    openHouseEnd: str(openHouse?.endTime),
    petsAllowed:
      pets && (typeof pets.catsAllowed === 'boolean' || typeof pets.dogsAllowed === 'boolean')
        ? !!(pets.catsAllowed || pets.dogsAllowed)
        : null,
    yearBuilt: num(building?.yearBuilt),
  };
}

/**
 * A building answer -> API building. What the site's building answer lacks comes from the mirror: the
 * slug (from a listing's URL), the position (a listing's) and the building amenities (the listing's).
 * Inventories are counted from the mirror's listings when the building is read.
 */
export function mapBuildingDetail(
  b: UpstreamBuildingDetail,
  ctx: {
    areas: AreaTree;
    boroughId: number | null;
    slug: string | null;
    geoCenter: GeoPoint | null;
    amenities: { list: string[]; doormanTypes: string[]; parkingTypes: string[]; storageTypes: string[] };
  },
): Building {
  const areaName = str(b.area?.name);
  const area = areaName ? ctx.areas.findByName(areaName, ctx.boroughId ?? undefined) : undefined;
  const name = str(b.name);
  const id = String(b.id);
  const pets = b.policies?.petPolicy;
  return {
    id,
    name,
    slug: ctx.slug ?? id,
    type: str(b.type),
    status: str(b.status),
    yearBuilt: num(b.yearBuilt),
    floorCount: null,
    unitCount: num(b.residentialUnitCount),
    address: {
      street: str(b.address?.street),
      unit: null,
      city: str(b.address?.city),
      state: str(b.address?.state),
      zipCode: str(b.address?.zipCode),
    },
    geoCenter: ctx.geoCenter,
    area: area
      ? {
          id: area.id,
          name: area.name,
          slug: area.slug,
          breadcrumbs: ctx.areas.ancestry(area.id).map((a) => ({ name: a.name, url: `/v1/search/sales?areas=${a.id}` })),
        }
      : null,
    amenities: ctx.amenities,
    policies: {
      list: (b.policies?.list ?? []).filter((p): p is string => typeof p === 'string'),
      petPolicy: pets ? { catsAllowed: bool(pets.catsAllowed), dogsAllowed: bool(pets.dogsAllowed) } : null,
    },
    additionalDetails: { developer: null, architect: null, interiors: null, manager: null, owner: null, website: null },
    nycData: null,
    photos: (b.media?.photos ?? []).map((p) => str(p?.key)).filter((k): k is string => k !== null),
    rentalInventory: { activeCount: 0, byBedroom: [] },
    saleInventory: { activeCount: 0, byBedroom: [] },
  };
}

/**
 * A search node made of a listing's detail (`price` in dollars, the detail's own), for a listing the mirror learns of
 * by its id rather than from a crawl; its area's name comes from its building (null when unknown).
 */
export function searchNodeOfDetail(
  id: string,
  kind: ListingKind,
  price: number,
  detail: UpstreamListingDetail,
  areaName: string | null,
): UpstreamSearchNode {
  const facts = detail.propertyDetails;
  return {
    ...{ id, price, status: detail.status, areaName },
    bedroomCount: facts?.bedroomCount,
    fullBathroomCount: facts?.fullBathroomCount,
    halfBathroomCount: facts?.halfBathroomCount,
    livingAreaSize: facts?.livingAreaSize,
    street: facts?.address?.street,
    unit: facts?.address?.unit,
    urlPath: `/${kind}/${id}`,
    noFee: detail.pricing?.noFee,
  };
}
