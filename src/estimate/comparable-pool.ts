import { distanceMeters } from '../domain/great-circle.js';
import type { ListingKind } from '../domain/listing.js';
import type { GeoPoint } from '../wire/common.js';
import { doubleAt, type Codes, type ExactDoubles, type Floats } from '../lib/narrow-arrays.js';
import type { TextList } from '../lib/text-list.js';

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

/** A property of the pool within reach of a point, `distance` metres away. */
export interface NearProperty {
  property: number;
  distance: number;
}

/**
 * The side of a grid cell in degrees for a pool of `properties`: 0.0025 degrees (about 278 m by 210 m) at 50,000 properties,
 * shrinking as the square root of their number, so that a cell holds about as many properties at any size (at a million,
 * 0.0006 degrees: the cells around a point in Manhattan hold tens of properties of a bedroom count, not thousands);
 * between 0.0005 and 0.01. Chosen by timing estimates at 58,466 and a million listings (docs/estimates.md).
 */
export const cellDegreesFor = (properties: number) =>
  Math.min(0.01, Math.max(0.0005, 0.0025 * Math.sqrt(50_000 / Math.max(1, properties))));
/** Metres in a degree of latitude; a degree of longitude is that times the cosine of the latitude. */
const METRES_A_DEGREE = 111_320;
/** Rings of cells walked reach at most 40 km: across the city from any point of it. */
const MAX_REACH_METRES = 40_000;

const cellKey = (row: number, column: number) => row * 1_000_000 + column;

/** A bedroom count as the last 5 bits of a cell's key: 0 to 30, 31 for unknown or more. */
const bedroomsBits = (bedrooms: number | null) => (bedrooms === null || !(bedrooms >= 0 && bedrooms <= 30) ? 31 : Math.floor(bedrooms));

/** Whether a property at `distance` comes before `other`: nearer, or as near with a lower number. */
const before = (distance: number, property: number, other: NearProperty) =>
  distance < other.distance || (distance === other.distance && property < other.property);

/** Bathrooms as one number: full ones plus a half for each half bath (1 full and 1 half: 1.5); null when the full count is unknown. */
export function bathroomsOf(full: number | null, half: number | null): number | null {
  return full === null ? null : full + 0.5 * (half ?? 0);
}

/** The columns of a pool, by property, as {@link PoolBuilder.finish} makes them. */
export interface PoolColumns {
  /** By property, its lowest listing id: ascending, as properties are numbered in their order. */
  leaderIds: TextList;
  /** The ids of the other listings of properties listed more than once, ascending, and the property of each. */
  copyIds: TextList;
  copyProperties: Int32Array;
  listingCounts: Codes;
  latitudes: ExactDoubles;
  longitudes: ExactDoubles;
  prices: Floats;
  bedrooms: Floats;
  bathrooms: Floats;
  sqft: Floats;
  boroughs: Codes;
  /** By property, its building type's place in `buildingTypes` (0: unknown, null). */
  buildingTypeCodes: Codes;
  buildingTypes: readonly (string | null)[];
}

/**
 * The active listings of one kind with a position, as properties: listings at the same point with the same bedrooms,
 * bathrooms and price are one property listed more than once (the RentHop rows repeat 13,228 times), so a property is
 * never its own comparable through a copy, and a property listed five times does not weigh five times. Each property
 * keeps the lowest of its listing ids. Read only; a change in the store builds a new pool.
 */
export class ComparablePool {
  readonly size: number;
  /** By property: the number of listings, and the facts ({@link ComparablePool.idOf}: its lowest listing id). Unknown numbers are NaN. */
  readonly listingCounts: Codes;
  /** By property, its position in degrees ({@link ComparablePool.pointOf}). */
  private readonly latitudes: ExactDoubles;
  private readonly longitudes: ExactDoubles;
  readonly prices: Floats;
  readonly bedrooms: Floats;
  readonly bathrooms: Floats;
  readonly sqft: Floats;
  readonly boroughs: Codes;
  private readonly buildingTypeCodes: Codes;
  private readonly buildingTypes: readonly (string | null)[];
  private readonly leaderIds: TextList;
  private readonly copyIds: TextList;
  private readonly copyProperties: Int32Array;
  private readonly cells: CellIndex;
  /** The same cells split by bedroom count (a key's last 5 bits: the count, 31 for unknown or over 30). */
  private readonly cellsByBedrooms: CellIndex;
  /** The side of a cell in degrees, and its shorter side in metres at latitude 41 (the city's north end). */
  private readonly cellDegrees: number;
  private readonly cellMetres: number;

  constructor(
    readonly kind: ListingKind,
    columns: PoolColumns,
  ) {
    this.leaderIds = columns.leaderIds;
    this.copyIds = columns.copyIds;
    this.copyProperties = columns.copyProperties;
    this.listingCounts = columns.listingCounts;
    this.latitudes = columns.latitudes;
    this.longitudes = columns.longitudes;
    this.prices = columns.prices;
    this.bedrooms = columns.bedrooms;
    this.bathrooms = columns.bathrooms;
    this.sqft = columns.sqft;
    this.boroughs = columns.boroughs;
    this.buildingTypeCodes = columns.buildingTypeCodes;
    this.buildingTypes = columns.buildingTypes;
    const n = columns.leaderIds.length;
    this.size = n;
    this.cellDegrees = cellDegreesFor(n);
    this.cellMetres = this.cellDegrees * METRES_A_DEGREE * Math.cos((41 * Math.PI) / 180);
    const keys = new Float64Array(n);
    const keysByBedrooms = new Float64Array(n);
    for (let property = 0; property < n; property++) {
      const { latitude, longitude } = this.pointOf(property);
      keys[property] = cellKey(Math.floor(latitude / this.cellDegrees), Math.floor(longitude / this.cellDegrees));
      const bedrooms = this.bedrooms[property];
      keysByBedrooms[property] = keys[property] * 32 + bedroomsBits(Number.isNaN(bedrooms) ? null : bedrooms);
    }
    this.cells = new CellIndex(keys);
    this.cellsByBedrooms = new CellIndex(keysByBedrooms);
  }

  /** The property a listing id belongs to, or undefined when the pool does not hold it (not active, or without a position). */
  propertyOfListing(id: string): number | undefined {
    const property = placeOf(this.leaderIds, id);
    if (property !== undefined) return property;
    const copy = placeOf(this.copyIds, id);
    return copy === undefined ? undefined : this.copyProperties[copy];
  }

  /** The lowest listing id of a property. */
  idOf(property: number): string {
    return this.leaderIds.at(property);
  }

  /** The building type of a property (null when unknown). */
  buildingTypeOf(property: number): string | null {
    return this.buildingTypes[this.buildingTypeCodes[property]];
  }

  /** The position of a property. */
  pointOf(property: number): GeoPoint {
    return { latitude: doubleAt(this.latitudes, property), longitude: doubleAt(this.longitudes, property) };
  }

  /**
   * The `count` properties nearest `point` that `accept` takes, within `radius` metres, nearest first (ties by property).
   * Walks rings of grid cells outward, keeping the nearest `count` found, and stops once no unvisited cell can hold
   * a nearer property. With `bedrooms`, only properties with that many bedrooms are looked at (`accept` still decides).
   */
  nearest(point: GeoPoint, accept: (property: number) => boolean, count: number, radius: number, bedrooms?: number): NearProperty[] {
    const [cells, bits] = bedrooms === undefined ? [this.cells, -1] : [this.cellsByBedrooms, bedroomsBits(bedrooms)];
    const row0 = Math.floor(point.latitude / this.cellDegrees);
    const column0 = Math.floor(point.longitude / this.cellDegrees);
    const rings = Math.ceil(Math.min(radius, MAX_REACH_METRES) / this.cellMetres) + 1;
    const found: NearProperty[] = [];
    const keep = (property: number, distance: number) => {
      if (found.length === count && !before(distance, property, found[count - 1])) return;
      let at = found.length === count ? count - 1 : found.length;
      if (found.length < count) found.push({ property, distance });
      while (at > 0 && before(distance, property, found[at - 1])) {
        found[at] = found[at - 1];
        at--;
      }
      found[at] = { property, distance };
    };
    for (let ring = 0; ring <= rings; ring++) {
      for (let row = row0 - ring; row <= row0 + ring; row++) {
        const edge = row === row0 - ring || row === row0 + ring;
        for (let column = column0 - ring; column <= column0 + ring; column += edge || ring === 0 ? 1 : 2 * ring) {
          const cell = cells.cellOf(bits < 0 ? cellKey(row, column) : cellKey(row, column) * 32 + bits);
          if (cell < 0) continue;
          for (let at = cells.starts[cell]; at < cells.starts[cell + 1]; at++) {
            const property = cells.properties[at];
            if (!accept(property)) continue;
            const distance = distanceMeters(point, this.pointOf(property));
            if (distance <= radius) keep(property, distance);
          }
        }
      }
      // Every property not yet seen lies at least `ring` whole cells away.
      if (found.length === count && found[count - 1].distance <= ring * this.cellMetres) break;
    }
    return found;
  }
}

/** The place of `id` in `ids` (ascending in JavaScript's order), by binary search; undefined when it is not there. */
function placeOf(ids: TextList, id: string): number | undefined {
  let [low, high] = [0, ids.length];
  while (low < high) {
    const mid = (low + high) >> 1;
    if (ids.at(mid) < id) low = mid + 1;
    else high = mid;
  }
  return low < ids.length && ids.at(low) === id ? low : undefined;
}

/**
 * Properties grouped by the key of their grid cell: the cell keys held, ascending, and cell `c`'s properties, ascending, are
 * `properties[starts[c]]` to `properties[starts[c + 1] - 1]`. Three typed arrays, a cell found by binary search among the keys:
 * an array a cell took several times the memory (62 MiB at a million listings), and a map from key to cell some
 * 40 bytes a cell (10 MiB for the 230,000 cells of a million rentals).
 */
class CellIndex {
  private readonly keys: Float64Array;
  readonly starts: Int32Array;
  readonly properties: Int32Array;

  /** @param keys each property's cell key. */
  constructor(keys: Float64Array) {
    const sorted = keys.slice().sort();
    let distinct = 0;
    for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[distinct++] = sorted[i];
    this.keys = sorted.slice(0, distinct);
    const cellOf = new Int32Array(keys.length);
    this.starts = new Int32Array(distinct + 1);
    for (let property = 0; property < keys.length; property++) {
      cellOf[property] = this.cellOf(keys[property]);
      this.starts[cellOf[property] + 1]++;
    }
    for (let cell = 1; cell < this.starts.length; cell++) this.starts[cell] += this.starts[cell - 1];
    this.properties = new Int32Array(keys.length);
    const next = this.starts.slice(0, -1);
    for (let property = 0; property < keys.length; property++) this.properties[next[cellOf[property]]++] = property;
  }

  /** The number of the cell of `key`, -1 when no property is in it. */
  cellOf(key: number): number {
    let [low, high] = [0, this.keys.length];
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.keys[mid] < key) low = mid + 1;
      else high = mid;
    }
    return low < this.keys.length && this.keys[low] === key ? low : -1;
  }
}
