import type { SiteData, SiteListing, LocalBuilding } from './site-data.js';
import { AreaTree, buildAreas } from '../../domain/area.js';
import type { SiteArea } from '../types.js';

/** Status of a listing the market clock holds back to list later; never shown. */
export const UPCOMING = 'UPCOMING';

/** Filters of a local search, in upstream numbering, as the GraphQL input carries them. */
export interface LocalSearchFilters {
  areas?: number[] | null;
  price?: { lowerBound?: number | null; upperBound?: number | null } | null;
  bedrooms?: { lowerBound?: number | null; upperBound?: number | null } | null;
  bathrooms?: { lowerBound?: number | null; upperBound?: number | null } | null;
  amenities?: string[] | null;
  petsAllowed?: boolean | null;
  boundingBox?: { topLeft: { latitude: number; longitude: number }; bottomRight: { latitude: number; longitude: number } } | null;
  available?: { startDate?: string | null; endDate?: string | null } | null;
}

/** Sorting of a local search (the site's enum tokens). */
export interface LocalSorting {
  attribute: 'RECOMMENDED' | 'LISTED_AT' | 'PRICE' | 'SQFT';
  direction: 'ASCENDING' | 'DESCENDING';
}

/**
 * The local upstream's market: the site data indexed for the GraphQL resolvers, with a clock.
 * `now()` is the market's time (UTC).
 */
export class LocalMarket {
  readonly areas: SiteArea[];
  private readonly listings = new Map<string, SiteListing>();
  /** The same listings per kind, in site data order: a search walks only its own kind. */
  private readonly byKind: Record<'sale' | 'rental', SiteListing[]> = { sale: [], rental: [] };
  private readonly buildingsById = new Map<string, LocalBuilding>();
  /** The NYC area tree in upstream numbering (the five borough ids are the same set in both numberings). */
  private readonly tree: AreaTree;
  private clock: () => Date;
  /** Price events the market made (market clock), per `kind:id`, oldest first. */
  private readonly history = new Map<string, { date: string; price: number; event: string }[]>();

  constructor(siteData: SiteData, clock: () => Date = () => new Date()) {
    this.areas = siteData.areas;
    this.clock = clock;
    for (const l of siteData.listings) {
      this.listings.set(`${l.kind}:${l.node.id}`, l);
      this.byKind[l.kind].push(l);
    }
    for (const b of siteData.buildings) this.buildingsById.set(b.id, b);
    this.tree = new AreaTree(buildAreas(siteData.areas.map((a) => ({ id: a.numericId, name: a.name, parentId: a.parentId }))));
  }

  now(): Date {
    return this.clock();
  }

  /** Replaces the market's clock (the market clock drives it). */
  setClock(clock: () => Date): void {
    this.clock = clock;
  }

  /** Records a price event of a listing, reported in its price history. */
  recordEvent(l: SiteListing, event: string, at: Date): void {
    const key = `${l.kind}:${l.node.id}`;
    this.history.set(key, [...(this.history.get(key) ?? []), { date: at.toISOString().slice(0, 10), price: l.node.price, event }]);
  }

  /** Every listing (of one kind when given), whatever its status. */
  all(kind?: 'sale' | 'rental'): SiteListing[] {
    return kind ? [...this.byKind[kind]] : [...this.listings.values()];
  }

  /** A listing the site shows (active or off the market); not one that is yet to be listed. */
  listing(kind: 'sale' | 'rental', id: string): SiteListing | undefined {
    const l = this.listings.get(`${kind}:${id}`);
    return l && l.node.status !== UPCOMING ? l : undefined;
  }

  /**
   * Active listings of `kind` matching the filters, sorted as asked; ties by id. RECOMMENDED (the
   * site's own ranking, unknown) is played here by the listing date, newest first when descending.
   */
  search(kind: 'sale' | 'rental', filters: LocalSearchFilters, sorting?: LocalSorting | null): SiteListing[] {
    const areas = filters.areas?.length ? new Set(filters.areas.flatMap((id) => this.tree.withDescendants(id))) : null;
    const within = (v: number | null | undefined, b?: { lowerBound?: number | null; upperBound?: number | null } | null) =>
      !b || (v !== null && v !== undefined && (b.lowerBound == null || v >= b.lowerBound) && (b.upperBound == null || v <= b.upperBound));
    const box = filters.boundingBox;
    const result = this.byKind[kind].filter((l) => {
      const n = l.node;
      if (n.status !== 'ACTIVE') return false;
      if (areas && !areas.has(l.areaId)) return false;
      if (!within(n.price, filters.price)) return false;
      if (filters.bedrooms && !within(n.bedroomCount, filters.bedrooms)) return false;
      if (filters.bathrooms && !within(n.fullBathroomCount, filters.bathrooms)) return false;
      if (filters.amenities?.length && !filters.amenities.every((a) => n.amenities.includes(a))) return false;
      if (filters.petsAllowed !== undefined && filters.petsAllowed !== null && n.petsAllowed !== filters.petsAllowed) return false;
      if (filters.available?.endDate && (!n.availableAt || n.availableAt > filters.available.endDate)) return false;
      if (box) {
        const p = n.geoPoint;
        if (!p) return false;
        if (p.latitude > box.topLeft.latitude || p.latitude < box.bottomRight.latitude) return false;
        if (p.longitude < box.topLeft.longitude || p.longitude > box.bottomRight.longitude) return false;
      }
      return true;
    });
    const dir = sorting?.direction === 'ASCENDING' ? 1 : -1;
    const key = (l: SiteListing): number =>
      sorting?.attribute === 'PRICE'
        ? l.node.price
        : sorting?.attribute === 'SQFT'
          ? l.node.livingAreaSize
          : Date.parse(l.node.listedAt ?? '1970-01-01');
    // Keys worked out once a listing, not twice a comparison: a crawl asks for every page of a scope.
    const keyed = result.map((l) => ({ l, key: key(l), id: Number(l.node.id) }));
    keyed.sort((x, y) => dir * (x.key - y.key) || x.id - y.id);
    return keyed.map((k) => k.l);
  }

  /** Price events the market made for a listing, oldest first (empty when none). */
  historyOf(l: SiteListing): { date: string; price: number; event: string }[] {
    return this.history.get(`${l.kind}:${l.node.id}`) ?? [];
  }

  /** The borough (upstream id 100-500) an area lies in; null outside the boroughs. */
  boroughOf(areaId: number): number | null {
    return this.tree.boroughOf(areaId);
  }

  building(id: string): LocalBuilding | undefined {
    return this.buildingsById.get(id);
  }
}
