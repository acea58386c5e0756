import { distanceMeters } from '../domain/transit-score.js';
import type { ListingKind } from '../domain/listing.js';
import type { GeoPoint } from '../wire/common.js';

/** An active listing as the pool reads it from the store (dollars, square feet, degrees; null when unknown). */
export interface PoolRow {
  id: string;
  borough_id: number | null;
  latitude: number | null;
  longitude: number | null;
  price: number;
  bedroom_count: number | null;
  full_bathroom_count: number | null;
  half_bathroom_count: number | null;
  sqft: number | null;
  building_type: string | null;
}

/** A home of the pool within reach of a point, `distance` metres away. */
export interface NearHome {
  home: number;
  distance: number;
}

/**
 * The side of a grid cell in degrees for a pool of `homes`: 0.0025 degrees (about 278 m by 210 m) at 50,000 homes,
 * shrinking as the square root of their number, so that a cell holds about as many homes at any size (at a million,
 * 0.0006 degrees: the cells around a point in Manhattan hold tens of homes of a bedroom count, not thousands);
 * between 0.0005 and 0.01. Chosen by timing estimates at 58,466 and a million listings (docs/estimates.md).
 */
export const cellDegreesFor = (homes: number) => Math.min(0.01, Math.max(0.0005, 0.0025 * Math.sqrt(50_000 / Math.max(1, homes))));
/** Metres in a degree of latitude; a degree of longitude is that times the cosine of the latitude. */
const METRES_A_DEGREE = 111_320;
/** Rings of cells walked reach at most 40 km: across the city from any point of it. */
const MAX_REACH_METRES = 40_000;

const cellKey = (row: number, column: number) => row * 1_000_000 + column;

/** A bedroom count as the last 5 bits of a cell's key: 0 to 30, 31 for unknown or more. */
const bedroomsBits = (bedrooms: number | null) => (bedrooms === null || !(bedrooms >= 0 && bedrooms <= 30) ? 31 : Math.floor(bedrooms));

/** Whether a home at `distance` comes before `other`: nearer, or as near with a lower number. */
const before = (distance: number, home: number, other: NearHome) =>
  distance < other.distance || (distance === other.distance && home < other.home);

/** Bathrooms as one number: full ones plus a half for each half bath (1 full and 1 half: 1.5); null when the full count is unknown. */
export function bathroomsOf(full: number | null, half: number | null): number | null {
  return full === null ? null : full + 0.5 * (half ?? 0);
}

/**
 * The active listings of one kind with a position, as homes: listings at the same point with the same bedrooms,
 * bathrooms and price are one home listed more than once (the RentHop rows repeat 13,228 times), so a home is
 * never its own comparable through a copy, and a home listed five times does not weigh five times. Each home
 * keeps the lowest of its listing ids. Read only; a change in the store builds a new pool.
 */
export class ComparablePool {
  readonly size: number;
  /** By home: the lowest listing id, the number of listings, and the facts. Unknown numbers are NaN. */
  readonly ids: string[] = [];
  readonly listingCounts: Int32Array;
  readonly latitudes: Float64Array;
  readonly longitudes: Float64Array;
  readonly prices: Float64Array;
  readonly bedrooms: Float64Array;
  readonly bathrooms: Float64Array;
  readonly sqft: Float64Array;
  readonly boroughs: Int32Array;
  readonly buildingTypes: (string | null)[] = [];
  /** The home of each listing id the pool holds. */
  private readonly homeOf = new Map<string, number>();
  private readonly cells = new Map<number, number[]>();
  /** The same cells split by bedroom count (a key's last 5 bits: the count, 31 for unknown or over 30). */
  private readonly cellsByBedrooms = new Map<number, number[]>();
  /** The side of a cell in degrees, and its shorter side in metres at latitude 41 (the city's north end). */
  private readonly cellDegrees: number;
  private readonly cellMetres: number;

  constructor(
    readonly kind: ListingKind,
    rows: readonly PoolRow[],
  ) {
    const byKey = new Map<string, number>();
    const homes: PoolRow[] = [];
    const counts: number[] = [];
    for (const row of [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
      if (row.latitude === null || row.longitude === null) continue;
      const key = [row.latitude, row.longitude, row.bedroom_count, row.full_bathroom_count, row.half_bathroom_count, row.price].join('|');
      let home = byKey.get(key);
      if (home === undefined) {
        home = homes.length;
        byKey.set(key, home);
        homes.push(row);
        counts.push(0);
      }
      counts[home]++;
      this.homeOf.set(row.id, home);
    }
    const n = homes.length;
    this.size = n;
    this.cellDegrees = cellDegreesFor(n);
    this.cellMetres = this.cellDegrees * METRES_A_DEGREE * Math.cos((41 * Math.PI) / 180);
    this.listingCounts = Int32Array.from(counts);
    this.latitudes = new Float64Array(n);
    this.longitudes = new Float64Array(n);
    this.prices = new Float64Array(n);
    this.bedrooms = new Float64Array(n);
    this.bathrooms = new Float64Array(n);
    this.sqft = new Float64Array(n);
    this.boroughs = new Int32Array(n);
    homes.forEach((row, home) => {
      this.ids.push(row.id);
      this.latitudes[home] = row.latitude!;
      this.longitudes[home] = row.longitude!;
      this.prices[home] = Number(row.price);
      this.bedrooms[home] = row.bedroom_count ?? Number.NaN;
      this.bathrooms[home] = bathroomsOf(row.full_bathroom_count, row.half_bathroom_count) ?? Number.NaN;
      this.sqft[home] = row.sqft !== null && row.sqft > 0 ? row.sqft : Number.NaN;
      this.boroughs[home] = row.borough_id ?? 0;
      this.buildingTypes.push(row.building_type);
      const key = cellKey(Math.floor(row.latitude! / this.cellDegrees), Math.floor(row.longitude! / this.cellDegrees));
      for (const [cells, at] of [
        [this.cells, key],
        [this.cellsByBedrooms, key * 32 + bedroomsBits(row.bedroom_count)],
      ] as const) {
        const cell = cells.get(at);
        if (cell) cell.push(home);
        else cells.set(at, [home]);
      }
    });
  }

  /** The home a listing id belongs to, or undefined when the pool does not hold it (not active, or without a position). */
  homeOfListing(id: string): number | undefined {
    return this.homeOf.get(id);
  }

  /** The position of a home. */
  pointOf(home: number): GeoPoint {
    return { latitude: this.latitudes[home], longitude: this.longitudes[home] };
  }

  /**
   * The `count` homes nearest `point` that `accept` takes, within `radius` metres, nearest first (ties by home).
   * Walks rings of grid cells outward, keeping the nearest `count` found, and stops once no unvisited cell can hold
   * a nearer home. With `bedrooms`, only homes with that many bedrooms are looked at (`accept` still decides).
   */
  nearest(point: GeoPoint, accept: (home: number) => boolean, count: number, radius: number, bedrooms?: number): NearHome[] {
    const [cells, bits] = bedrooms === undefined ? [this.cells, -1] : [this.cellsByBedrooms, bedroomsBits(bedrooms)];
    const row0 = Math.floor(point.latitude / this.cellDegrees);
    const column0 = Math.floor(point.longitude / this.cellDegrees);
    const rings = Math.ceil(Math.min(radius, MAX_REACH_METRES) / this.cellMetres) + 1;
    const found: NearHome[] = [];
    const keep = (home: number, distance: number) => {
      if (found.length === count && !before(distance, home, found[count - 1])) return;
      let at = found.length === count ? count - 1 : found.length;
      if (found.length < count) found.push({ home, distance });
      while (at > 0 && before(distance, home, found[at - 1])) {
        found[at] = found[at - 1];
        at--;
      }
      found[at] = { home, distance };
    };
    for (let ring = 0; ring <= rings; ring++) {
      for (let row = row0 - ring; row <= row0 + ring; row++) {
        const edge = row === row0 - ring || row === row0 + ring;
        for (let column = column0 - ring; column <= column0 + ring; column += edge || ring === 0 ? 1 : 2 * ring) {
          const cell = cells.get(bits < 0 ? cellKey(row, column) : cellKey(row, column) * 32 + bits);
          if (!cell) continue;
          for (const home of cell) {
            if (!accept(home)) continue;
            const distance = distanceMeters(point, { latitude: this.latitudes[home], longitude: this.longitudes[home] });
            if (distance <= radius) keep(home, distance);
          }
        }
      }
      // Every home not yet seen lies at least `ring` whole cells away.
      if (found.length === count && found[count - 1].distance <= ring * this.cellMetres) break;
    }
    return found;
  }
}
