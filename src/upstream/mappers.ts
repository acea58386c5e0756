import { AreaTree, BOROUGHS, buildAreas, type Area } from '../domain/area.js';
import type { Building, Inventory } from '../domain/building.js';
import type { GeoPoint, ListingKind, ListingRecord } from '../domain/listing.js';
import { toApiAreaId } from './borough-ids.js';
import type { UpstreamArea, UpstreamBuilding, UpstreamEdge, UpstreamGeoPoint, UpstreamInventory, UpstreamListingNode } from './types.js';

const DAY_MS = 86_400_000;

/** Upstream area rows -> API areas (borough ids swapped, non-NYC rows dropped, levels and slugs set). */
export function mapAreas(rows: UpstreamArea[]): Area[] {
  return buildAreas(
    rows.map((r) => ({ id: toApiAreaId(r.id), name: r.name, parentId: r.parentId === null ? null : toApiAreaId(r.parentId) })),
  );
}

/**
 * Search edges -> unique nodes: featured and sponsored edges repeat organic ones, so the first edge
 * of each id wins.
 */
export function uniqueNodes(edges: UpstreamEdge[]): UpstreamListingNode[] {
  const seen = new Set<string>();
  const out: UpstreamListingNode[] = [];
  for (const edge of edges) {
    const id = String(edge.node.id);
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(edge.node);
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
  return boroughId === 100 ? 'New York' : BOROUGHS[boroughId] ?? null;
}

/** The building slug inside an urlPath of the form `/building/<slug>/<unit>`, else null. */
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

/**
 * One upstream listing node -> the mirror's record. Returns null for a listing outside New York State
 * (the site's "nyc" search also returns New Jersey). Area: the extension `areaId` when given, else the
 * area named `areaName`, else the crawled borough. `livingAreaSize: 0` means unknown. The listing date
 * is the extension `listedAt`, else `now - daysOnMarket` days, else unknown.
 */
export function mapListingNode(node: UpstreamListingNode, kind: ListingKind, ctx: MapContext): ListingRecord | null {
  if (node.state && node.state !== 'NY') return null;
  let areaId: number | null = null;
  if (typeof node.areaId === 'number') areaId = toApiAreaId(node.areaId);
  else if (node.areaName) areaId = ctx.areas.findByName(node.areaName)?.id ?? null;
  if (areaId === null || !ctx.areas.get(areaId)) areaId = ctx.scopeBoroughId ?? null;
  const boroughId = areaId === null ? null : ctx.areas.boroughOf(areaId);
  const listedAt =
    node.listedAt ??
    (typeof node.daysOnMarket === 'number' ? new Date(ctx.now.getTime() - node.daysOnMarket * DAY_MS).toISOString() : null);
  const sqft = node.livingAreaSize && node.livingAreaSize > 0 ? node.livingAreaSize : null;
  return {
    id: String(node.id),
    kind,
    status: node.status ?? 'ACTIVE',
    areaId,
    boroughId,
    areaName: node.areaName ?? (areaId === null ? null : ctx.areas.get(areaId)?.name ?? null),
    address: {
      street: node.street ?? null,
      unit: node.unit ?? null,
      city: boroughCity(boroughId),
      state: node.state ?? 'NY',
      zipCode: node.zipCode ?? null,
    },
    price: node.price,
    bedroomCount: node.bedroomCount ?? null,
    fullBathroomCount: node.fullBathroomCount ?? null,
    halfBathroomCount: node.halfBathroomCount ?? null,
    buildingType: node.buildingType ?? null,
    geoPoint: geo(node.geoPoint),
    leadPhotoKey: node.leadMedia?.photo?.key ?? null,
    sourceGroupLabel: node.sourceGroupLabel ?? null,
    urlPath: node.urlPath ?? null,
    tier: node.tier ?? null,
    listedAt,
    netEffective: node.netEffectivePrice ?? null,
    monthsFree: node.monthsFree ?? null,
    sqft,
    rooms: node.rooms ?? null,
    leaseTerm: node.leaseTermMonths ?? null,
    furnished: node.furnished ?? null,
    availableAt: node.availableAt ?? null,
    saleType: node.saleType ?? null,
    noFee: node.noFee ?? null,
    petsAllowed: node.petsAllowed ?? null,
    amenities: [...new Set(node.amenities ?? [])].sort(),
    has3dTour: node.hasTour3d ?? null,
    hasVideo: node.hasVideos ?? null,
    openHouseStart: node.upcomingOpenHouse?.startTime ?? null,
    openHouseEnd: node.upcomingOpenHouse?.endTime ?? null,
    monthlyTaxes: node.monthlyTaxes ?? null,
    monthlyMaintenance: node.monthlyMaintenance ?? null,
    monthlyCommonCharges: node.monthlyCommonCharges ?? null,
    yearBuilt: node.yearBuilt ?? null,
    buildingId: node.buildingId ?? null,
    buildingSlug: buildingSlugFromUrlPath(node.urlPath),
    fees: (node.fees ?? []).map((f) => ({
      typeLabel: f.typeLabel ?? null,
      requirement: f.requirement ?? null,
      refundability: f.refundability ?? null,
      calcType: f.calcType ?? null,
      amount: f.amount ?? null,
      timing: f.timing ?? null,
      occurrence: f.occurrence ?? null,
    })),
    contacts: (node.contacts ?? []).map((c) => ({ name: c.name ?? null, phone: c.phone ?? null, sourceGroup: c.sourceGroup ?? null })),
    photos: (node.photos ?? []).map((p) => p.key).filter((k): k is string => !!k),
    floorPlanKey: node.floorPlan?.key ?? null,
    upstreamPriceHistory: (node.priceHistory ?? []).map((e, i, all) => ({
      date: e.date,
      price: e.price,
      event: e.event,
      pctChange: i === 0 ? null : Math.round(((e.price - all[i - 1].price) / all[i - 1].price) * 10000) / 100,
    })),
  };
}

function inventory(inv: UpstreamInventory | null | undefined): Inventory {
  return inv ? { activeCount: inv.activeCount, byBedroom: inv.byBedroom.map((b) => ({ ...b })) } : { activeCount: 0, byBedroom: [] };
}

/**
 * An upstream building -> API building: area id in the API's numbering, with breadcrumbs from the
 * borough down, each linking to the sales search of that area.
 */
export function mapBuilding(b: UpstreamBuilding, areas: AreaTree): Building {
  const areaId = b.area ? toApiAreaId(b.area.id) : null;
  const area = areaId === null ? undefined : areas.get(areaId);
  const details = b.additionalDetails ?? {};
  const nyc = b.nycData;
  return {
    id: String(b.id),
    name: b.name ?? null,
    slug: b.slug,
    type: b.type ?? null,
    status: b.status ?? null,
    yearBuilt: b.yearBuilt ?? null,
    floorCount: b.floorCount ?? null,
    unitCount: b.unitCount ?? null,
    address: {
      street: b.address?.street ?? null,
      unit: b.address?.unit ?? null,
      city: b.address?.city ?? null,
      state: b.address?.state ?? null,
      zipCode: b.address?.zipCode ?? null,
    },
    geoCenter: geo(b.geoCenter),
    area: area
      ? {
          id: area.id,
          name: area.name,
          slug: area.slug,
          breadcrumbs: areas.ancestry(area.id).map((a) => ({ name: a.name, url: `/v1/search/sales?areas=${a.id}` })),
        }
      : null,
    amenities: {
      list: b.amenities?.list ?? [],
      doormanTypes: b.amenities?.doormanTypes ?? [],
      parkingTypes: b.amenities?.parkingTypes ?? [],
      storageTypes: b.amenities?.storageTypes ?? [],
    },
    policies: {
      list: b.policies?.list ?? [],
      petPolicy: b.policies?.petPolicy
        ? { catsAllowed: b.policies.petPolicy.catsAllowed ?? null, dogsAllowed: b.policies.petPolicy.dogsAllowed ?? null }
        : null,
    },
    additionalDetails: {
      developer: details.developer ?? null,
      architect: details.architect ?? null,
      interiors: details.interiors ?? null,
      manager: details.manager ?? null,
      owner: details.owner ?? null,
      website: details.website ?? null,
    },
    nycData: nyc
      ? {
          communityDistrict: nyc.communityDistrict ?? null,
          councilDistrict: nyc.councilDistrict ?? null,
          policePrecinct: nyc.policePrecinct ?? null,
          buildingClass: nyc.buildingClass ?? null,
          buildingClassDescription: nyc.buildingClassDescription ?? null,
          hasAbatements: nyc.hasAbatements ?? null,
          hurricaneEvacuationZone: nyc.hurricaneEvacuationZone ?? null,
        }
      : null,
    photos: (b.photos ?? []).map((p) => p.key).filter((k): k is string => !!k),
    rentalInventory: inventory(b.rentalInventory),
    saleInventory: inventory(b.saleInventory),
  };
}
