import type { ListingKind } from '../domain/listing.js';
import { exactCodes, exactDoubles, exactFloats } from '../lib/narrow-arrays.js';
import { runNow, type Steps } from '../lib/stepwise.js';
import { TextList } from '../lib/text-list.js';
import { ComparablePool, type PoolRow } from './comparable-pool.js';

/**
 * Gathers one kind's listings, a chunk of rows at a time, into columns (no row is kept: at a million listings the rows
 * would take several times the columns' memory), then makes the pool of properties ({@link ComparablePool}).
 */
export class PoolBuilder {
  private readonly ids: string[] = [];
  private readonly latitudes: number[] = [];
  private readonly longitudes: number[] = [];
  private readonly prices: number[] = [];
  /** Bedrooms, full and half bathrooms and size; -1 when unknown (what tells copies apart compares them). */
  private readonly bedrooms: number[] = [];
  private readonly fullBathrooms: number[] = [];
  private readonly halfBathrooms: number[] = [];
  private readonly sqft: number[] = [];
  private readonly boroughs: number[] = [];
  /** Each listing's building type, as its place in `types` (0: unknown). */
  private readonly typeOf: number[] = [];
  private readonly types: (string | null)[] = [null];
  private readonly typeIndex = new Map<string, number>();

  /** Adds the listings of `rows` that have a position. */
  add(rows: readonly PoolRow[]): void {
    for (const row of rows) {
      if (row.latitude === null || row.longitude === null) continue;
      this.ids.push(row.id);
      this.latitudes.push(row.latitude);
      this.longitudes.push(row.longitude);
      this.prices.push(Number(row.price));
      this.bedrooms.push(row.bedroom_count ?? -1);
      this.fullBathrooms.push(row.full_bathroom_count ?? -1);
      this.halfBathrooms.push(row.half_bathroom_count ?? -1);
      this.sqft.push(row.sqft !== null && row.sqft > 0 ? row.sqft : -1);
      this.boroughs.push(row.borough_id ?? 0);
      let type = 0;
      if (row.building_type !== null) {
        type = this.typeIndex.get(row.building_type) ?? this.types.length;
        if (type === this.types.length) {
          this.typeIndex.set(row.building_type, type);
          this.types.push(row.building_type);
        }
      }
      this.typeOf.push(type);
    }
  }

  /**
   * The pool: listings at one point with one layout and price grouped into a property (found by sorting, not by a map of
   * keys), properties numbered in the order of their lowest listing id.
   */
  finish(kind: ListingKind): ComparablePool {
    return runNow(this.finishing(kind));
  }

  /**
   * {@link finish} in steps, a pause after each sort and pass ({@link Steps}): in one piece it held the event loop a
   * tenth of a second at the whole city's rentals each time a sync moved the market.
   */
  *finishing(kind: ListingKind): Steps<ComparablePool> {
    const n = this.ids.length;
    const ids = this.ids;
    // Listings in the order of their ids (JavaScript's, for the look-up by id), and each one's place in it. The store
    // reads them in that order already but for ids whose bytes and UTF-16 units order differently: sorted only then.
    const byId = Int32Array.from({ length: n }, (_, i) => i);
    if (!inOrder(ids)) byId.sort((a, b) => (ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : 0));
    const idRank = new Int32Array(n);
    byId.forEach((listing, rank) => {
      idRank[listing] = rank;
    });
    yield;
    const columns = [this.latitudes, this.longitudes, this.bedrooms, this.fullBathrooms, this.halfBathrooms, this.prices];
    const sameProperty = (a: number, b: number) => columns.every((c) => c[a] === c[b]);
    const byProperty = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => {
      for (const c of columns) if (c[a] !== c[b]) return c[a] - c[b];
      return idRank[a] - idRank[b];
    });
    yield;
    // Each run of copies, led by its lowest id; properties numbered by that id.
    const leaders: number[] = [];
    for (let i = 0; i < n; i++) if (i === 0 || !sameProperty(byProperty[i], byProperty[i - 1])) leaders.push(byProperty[i]);
    leaders.sort((a, b) => idRank[a] - idRank[b]);
    yield;
    // By listing: its property when it leads one (a typed array: a map of a million entries took tens of MiB).
    const propertyOfLeader = new Int32Array(n);
    leaders.forEach((leader, property) => {
      propertyOfLeader[leader] = property;
    });
    // Each listing that is not its property's leader (a copy), in the order of their ids, with its property.
    const copies: number[] = [];
    const copyProperty = new Int32Array(n);
    const listingCounts = new Int32Array(leaders.length);
    let leader = -1;
    for (let i = 0; i < n; i++) {
      const listing = byProperty[i];
      if (i === 0 || !sameProperty(listing, byProperty[i - 1])) leader = listing;
      const property = propertyOfLeader[leader];
      if (listing !== leader) {
        copies.push(listing);
        copyProperty[listing] = property;
      }
      listingCounts[property]++;
    }
    copies.sort((a, b) => idRank[a] - idRank[b]);
    yield;
    const pick = (value: (listing: number) => number) => exactFloats(leaders.map(value));
    const leaderIds = TextList.of(leaders.map((l) => ids[l]));
    const copyIds = TextList.of(copies.map((l) => ids[l]));
    yield;
    return new ComparablePool(kind, {
      leaderIds,
      copyIds,
      copyProperties: Int32Array.from(copies, (l) => copyProperty[l]),
      listingCounts: exactCodes(Array.from(listingCounts)),
      latitudes: exactDoubles(leaders.map((l) => this.latitudes[l])),
      longitudes: exactDoubles(leaders.map((l) => this.longitudes[l])),
      prices: pick((l) => this.prices[l]),
      bedrooms: pick((l) => (this.bedrooms[l] === -1 ? Number.NaN : this.bedrooms[l])),
      bathrooms: pick((l) =>
        this.fullBathrooms[l] === -1 ? Number.NaN : this.fullBathrooms[l] + 0.5 * Math.max(0, this.halfBathrooms[l]),
      ),
      sqft: pick((l) => (this.sqft[l] === -1 ? Number.NaN : this.sqft[l])),
      boroughs: exactCodes(leaders.map((l) => this.boroughs[l])),
      buildingTypeCodes: exactCodes(leaders.map((l) => this.typeOf[l])),
      buildingTypes: this.types,
    });
  }
}

/** Whether `ids` are in ascending order, as JavaScript compares strings. */
function inOrder(ids: readonly string[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i - 1] > ids[i]) return false;
  return true;
}
