import { sql, type Kysely } from 'kysely';
import type { BoundingBox } from '../domain/outline.js';
import type { Database } from '../store/schema.js';
import type { ListingCluster } from '../wire/cluster.js';
import type { ListingSearch, SearchContext } from './listing-search.js';
import { filteredListings } from './query.js';

/** Cells across a 256-pixel map tile: a cell is 32 pixels wide on the screen at its zoom. */
const CELLS_A_TILE = 8;

/**
 * The grid a map at `zoom` (Web Mercator, 0 to 22) is cut into: cells of `longitude` degrees wide, 32 pixels on
 * screen, and `latitude` degrees high, the same on screen at the latitude of the box's centre (rounded to a whole
 * degree, so that panning keeps the cells where they were). Cells are counted from longitude -180 and latitude -90.
 */
export interface ClusterGrid {
  zoom: number;
  longitude: number;
  latitude: number;
}

/** The grid of a map at `zoom` showing `box` ({@link ClusterGrid}). */
export function clusterGrid(zoom: number, [, minLat, , maxLat]: BoundingBox): ClusterGrid {
  const longitude = 360 / 2 ** zoom / CELLS_A_TILE;
  const centre = Math.round((minLat + maxLat) / 2);
  return { zoom, longitude, latitude: longitude * Math.cos((centre * Math.PI) / 180) };
}

/**
 * The active listings a search matches (every filter of the table, and its `bbox`, which it needs), grouped by the cell of
 * `grid` their position falls in: per cell the count, the centroid and the price range. Every match with a
 * position is in exactly one cell, so the counts sum to the search's total when the search has a box. Cells come
 * south to north, and west to east within a row.
 * @throws Error when the search has no box (the route requires one).
 */
export async function clusterListings(
  db: Kysely<Database>,
  search: ListingSearch,
  ctx: SearchContext,
  grid: ClusterGrid,
): Promise<ListingCluster[]> {
  // The cell sizes written as literals: PostgreSQL matches a grouped expression by its text, and two parameters
  // (the SELECT's and the GROUP BY's) are two texts to it.
  const x = sql<number>`floor((longitude + 180) / ${sql.lit(grid.longitude)})`;
  const y = sql<number>`floor((latitude + 90) / ${sql.lit(grid.latitude)})`;
  // The box as plain ranges, longitude first, rather than the filter table's spatial index: with them the cells are
  // counted from the covering index of migration 029 when the other filters are on price and bedrooms.
  const { bbox, ...rest } = search;
  if (!bbox) throw new Error("a map's clusters need a box");
  const [minLon, minLat, maxLon, maxLat] = bbox;
  const rows = await filteredListings(db, rest, ctx)
    .where('longitude', '>=', minLon)
    .where('longitude', '<=', maxLon)
    .where('latitude', '>=', minLat)
    .where('latitude', '<=', maxLat)
    .select([
      x.as('x'),
      y.as('y'),
      (eb) => eb.fn.countAll<number>().as('count'),
      // Sums of whole millionths ({@link microDegrees}): exact whatever order the rows come in, as the index's are.
      sql<number>`sum(floor(latitude * 1000000 + 0.5))`.as('latitude'),
      sql<number>`sum(floor(longitude * 1000000 + 0.5))`.as('longitude'),
      (eb) => eb.fn.min<number>('price').as('min_price'),
      (eb) => eb.fn.max<number>('price').as('max_price'),
    ])
    .groupBy([x, y])
    .orderBy(y)
    .orderBy(x)
    .execute();
  return clustersOfSums(
    grid,
    rows.map((r) => ({
      x: Number(r.x),
      y: Number(r.y),
      count: Number(r.count),
      latitude: Number(r.latitude),
      longitude: Number(r.longitude),
      minPrice: Number(r.min_price),
      maxPrice: Number(r.max_price),
    })),
  );
}

/**
 * A position in whole millionths of a degree, half up: `floor(degrees * 1e6 + 0.5)`, in the double arithmetic the
 * store's statement uses too. A centroid is the mean of its matches' positions so rounded: summed as whole numbers,
 * it comes out the same whatever order they are added in (the store's scan, the index's rows, a delta's cells).
 */
export const microDegrees = (degrees: number): number => Math.floor(degrees * 1e6 + 0.5);

/**
 * A map cell's matches before their figures are written: the cell (`x`, `y`), how many, the sums of their latitudes and
 * longitudes in {@link microDegrees}, and their price range (dollars). Sums, so that two sets of one cell add up.
 */
export interface CellSums {
  x: number;
  y: number;
  count: number;
  latitude: number;
  longitude: number;
  minPrice: number;
  maxPrice: number;
}

/** The clusters the wire shows of cells' sums, in their order. */
export const clustersOfSums = (grid: ClusterGrid, cells: readonly CellSums[]): ListingCluster[] =>
  cells.map((cell) => clusterOf(grid, cell));

const round6 = (v: number) => Math.round(v * 1e6) / 1e6;

/**
 * A cell of `grid` as the wire has it: its count and price range, its centroid (the mean of its matches' positions,
 * to a millionth of a degree) and its bounds.
 */
function clusterOf(grid: ClusterGrid, { x, y, count, latitude, longitude, minPrice, maxPrice }: CellSums): ListingCluster {
  return {
    count,
    latitude: Math.round(latitude / count) / 1e6,
    longitude: Math.round(longitude / count) / 1e6,
    minPrice,
    maxPrice,
    cell: [
      round6(x * grid.longitude - 180),
      round6(y * grid.latitude - 90),
      round6((x + 1) * grid.longitude - 180),
      round6((y + 1) * grid.latitude - 90),
    ],
  };
}

/** The cell of `grid` a position falls in: the store's `floor((longitude + 180) / width)` and its latitude's, in the same double arithmetic. */
export function cellAt(grid: ClusterGrid, longitude: number, latitude: number): [x: number, y: number] {
  return [cellX(grid, longitude), cellY(grid, latitude)];
}

/** The column of `grid` a longitude falls in ({@link cellAt}). */
export const cellX = (grid: ClusterGrid, longitude: number): number => Math.floor((longitude + 180) / grid.longitude);
/** The row of `grid` a latitude falls in ({@link cellAt}). */
export const cellY = (grid: ClusterGrid, latitude: number): number => Math.floor((latitude + 90) / grid.latitude);
