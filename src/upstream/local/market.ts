import type { Inventory, InventoryListing } from './inventory.js';
import { AreaTree, buildAreas } from '../../domain/area.js';
import type { UpstreamArea, UpstreamBuilding, UpstreamInventory, UpstreamListingNode, UpstreamSearchInput } from '../types.js';

const DAY_MS = 86_400_000;
/** Status of a listing the market clock holds back to list later; never shown. */
export const UPCOMING = 'UPCOMING';

/** Filters of a local search, in upstream numbering (as the GraphQL input carries them). */
export interface LocalSearchFilters extends Partial<UpstreamSearchInput['filters']> {
  boundingBox?: { topLeft: { latitude: number; longitude: number }; bottomRight: { latitude: number; longitude: number } };
}

/**
 * The local upstream's market: the inventory indexed for the GraphQL resolvers, with a clock.
 * `now()` is the market's time (UTC); listing dates and days on market are measured against it.
 */
export class LocalMarket {
  readonly areas: UpstreamArea[];
  private readonly listings = new Map<string, InventoryListing>();
  private readonly buildingsById = new Map<string, UpstreamBuilding>();
  private readonly buildingsBySlug = new Map<string, UpstreamBuilding>();
  /** The area tree in upstream numbering (the five borough ids are the same set in both numberings). */
  private readonly tree: AreaTree;
  private clock: () => Date;
  /** Price events the market made (market clock), per `kind:id`, oldest first. */
  private readonly history = new Map<string, { date: string; price: number; event: string }[]>();

  constructor(inventory: Inventory, clock: () => Date = () => new Date()) {
    this.areas = inventory.areas;
    this.clock = clock;
    for (const l of inventory.listings) this.listings.set(`${l.kind}:${l.node.id}`, l);
    for (const b of inventory.buildings) {
      this.buildingsById.set(b.id, b);
      this.buildingsBySlug.set(b.slug, b);
    }
    this.tree = new AreaTree(buildAreas(inventory.areas));
  }

  now(): Date {
    return this.clock();
  }

  /** Replaces the market's clock (the market clock drives it). */
  setClock(clock: () => Date): void {
    this.clock = clock;
  }

  /** Records a price event of a listing, reported in its `priceHistory`. */
  recordEvent(l: InventoryListing, event: string, at: Date): void {
    const key = `${l.kind}:${l.node.id}`;
    this.history.set(key, [...(this.history.get(key) ?? []), { date: at.toISOString().slice(0, 10), price: l.node.price, event }]);
  }

  /** Every listing (of one kind when given), whatever its status. */
  all(kind?: 'sale' | 'rental'): InventoryListing[] {
    const every = [...this.listings.values()];
    return kind ? every.filter((l) => l.kind === kind) : every;
  }

  /** A listing the site shows (active or off the market); not one that is yet to be listed. */
  listing(kind: 'sale' | 'rental', id: string): InventoryListing | undefined {
    const l = this.listings.get(`${kind}:${id}`);
    return l && l.node.status !== UPCOMING ? l : undefined;
  }

  /** Active listings of `kind` matching the upstream filters, sorted as asked (ties by id). */
  search(kind: 'sale' | 'rental', filters: LocalSearchFilters, sorting?: UpstreamSearchInput['sorting']): InventoryListing[] {
    const areas = filters.areas?.length ? new Set(filters.areas.flatMap((id) => this.tree.withDescendants(id))) : null;
    const within = (v: number | null | undefined, b?: { lowerBound?: number | null; upperBound?: number | null } | null) =>
      !b || (v !== null && v !== undefined && (b.lowerBound == null || v >= b.lowerBound) && (b.upperBound == null || v <= b.upperBound));
    const box = filters.boundingBox;
    const result = this.all(kind).filter((l) => {
      const n = l.node;
      if (n.status !== 'ACTIVE') return false;
      if (areas && !areas.has(l.areaId)) return false;
      if (!within(n.price, filters.price)) return false;
      if (filters.bedrooms && !within(n.bedroomCount, filters.bedrooms)) return false;
      if (filters.bathrooms && !within(n.fullBathroomCount, filters.bathrooms)) return false;
      if (filters.amenities?.length && !filters.amenities.every((a) => n.amenities?.includes(a))) return false;
      if (filters.petsAllowed !== undefined && filters.petsAllowed !== null && n.petsAllowed !== filters.petsAllowed) return false;
      if (box) {
        const p = n.geoPoint;
        if (!p || p.latitude == null || p.longitude == null) return false;
        if (p.latitude > box.topLeft.latitude || p.latitude < box.bottomRight.latitude) return false;
        if (p.longitude < box.topLeft.longitude || p.longitude > box.bottomRight.longitude) return false;
      }
      return true;
    });
    const dir = sorting?.direction === 'ASCENDING' ? 1 : -1;
    const key = (l: InventoryListing): number =>
      sorting?.attribute === 'PRICE' ? l.node.price : sorting?.attribute === 'LISTED_AT' ? Date.parse(l.node.listedAt ?? '1970-01-01') : 0;
    return result.sort((a, b) => dir * (key(a) - key(b)) || Number(a.node.id) - Number(b.node.id));
  }

  /** The node as the GraphQL API answers it: sale nodes get `daysOnMarket` from the market clock. */
  present(l: InventoryListing): UpstreamListingNode {
    const priceHistory = this.history.get(`${l.kind}:${l.node.id}`) ?? null;
    if (l.kind === 'sale' && l.node.listedAt) {
      return { ...l.node, priceHistory, daysOnMarket: Math.max(0, Math.floor((this.now().getTime() - Date.parse(l.node.listedAt)) / DAY_MS)) };
    }
    return { ...l.node, priceHistory };
  }

  building(idOrSlug: string): UpstreamBuilding | undefined {
    return this.buildingsById.get(idOrSlug) ?? this.buildingsBySlug.get(idOrSlug);
  }

  /** The building with inventories computed from the market's listings in it. */
  presentBuilding(b: UpstreamBuilding): UpstreamBuilding {
    const inside = [...this.listings.values()].filter((l) => l.buildingId === b.id && l.node.status !== UPCOMING);
    return { ...b, rentalInventory: inventoryOf(inside.filter((l) => l.kind === 'rental')), saleInventory: inventoryOf(inside.filter((l) => l.kind === 'sale')) };
  }
}

/** Bedroom label of an inventory row: `STUDIO`, `1`, `2`, ..., `UNKNOWN`. */
function bedroomLabel(n: number | null | undefined): string {
  if (n === null || n === undefined) return 'UNKNOWN';
  return n === 0 ? 'STUDIO' : String(n);
}

/** Active and all-time counts and price ranges per bedroom count. */
export function inventoryOf(listings: InventoryListing[]): UpstreamInventory {
  const groups = new Map<string, InventoryListing[]>();
  for (const l of listings) {
    const label = bedroomLabel(l.node.bedroomCount);
    groups.set(label, [...(groups.get(label) ?? []), l]);
  }
  const min = (xs: number[]) => (xs.length ? Math.min(...xs) : null);
  const max = (xs: number[]) => (xs.length ? Math.max(...xs) : null);
  const byBedroom = [...groups.entries()]
    .sort(([a], [b]) => (a === 'STUDIO' ? -1 : b === 'STUDIO' ? 1 : a.localeCompare(b, 'en', { numeric: true })))
    .map(([bedrooms, group]) => {
      const active = group.filter((l) => l.node.status === 'ACTIVE').map((l) => l.node.price);
      const all = group.map((l) => l.node.price);
      return {
        bedrooms,
        availableCount: active.length,
        minPrice: min(active),
        maxPrice: max(active),
        historicalCount: all.length,
        historicalMinPrice: min(all),
        historicalMaxPrice: max(all),
      };
    });
  return { activeCount: listings.filter((l) => l.node.status === 'ACTIVE').length, byBedroom };
}
