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

/** Grid cells of 0.005 degrees (about 556 m north-south and 421 m east-west at the city's latitude). */
const CELL_DEGREES = 0.005;
/** Rings of cells walked at most: 200 cells (84 km) reach across the city from any point of it. */
const MAX_RINGS = 200;
/** The shorter side of a cell in metres at latitude 41 (the city's north end): what a ring of cells is sure to cover. */
const CELL_METRES = CELL_DEGREES * 111_320 * Math.cos((41 * Math.PI) / 180);

const cellKey = (row: number, column: number) => row * 100_000 + column;

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
      const key = cellKey(Math.floor(row.latitude! / CELL_DEGREES), Math.floor(row.longitude! / CELL_DEGREES));
      const cell = this.cells.get(key);
      if (cell) cell.push(home);
      else this.cells.set(key, [home]);
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
   * Walks rings of grid cells outward and stops once no unvisited cell can hold a nearer home.
   */
  nearest(point: GeoPoint, accept: (home: number) => boolean, count: number, radius: number): NearHome[] {
    const row0 = Math.floor(point.latitude / CELL_DEGREES);
    const column0 = Math.floor(point.longitude / CELL_DEGREES);
    const rings = Math.min(MAX_RINGS, Math.ceil(radius / CELL_METRES) + 1);
    const found: NearHome[] = [];
    for (let ring = 0; ring <= rings; ring++) {
      for (let row = row0 - ring; row <= row0 + ring; row++) {
        const edge = row === row0 - ring || row === row0 + ring;
        for (let column = column0 - ring; column <= column0 + ring; column += edge || ring === 0 ? 1 : 2 * ring) {
          const cell = this.cells.get(cellKey(row, column));
          if (!cell) continue;
          for (const home of cell) {
            if (!accept(home)) continue;
            const distance = distanceMeters(point, { latitude: this.latitudes[home], longitude: this.longitudes[home] });
            if (distance <= radius) found.push({ home, distance });
          }
        }
      }
      if (found.length >= count) {
        found.sort((a, b) => a.distance - b.distance || a.home - b.home);
        // Every home not yet seen lies at least `ring` whole cells away.
        if (found[count - 1].distance <= ring * CELL_METRES) break;
      }
    }
    found.sort((a, b) => a.distance - b.distance || a.home - b.home);
    return found.slice(0, count);
  }
}
