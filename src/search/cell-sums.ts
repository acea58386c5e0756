import { cellAt, cellX, cellY, microDegrees, type CellSums, type ClusterGrid } from './clusters.js';

/** The most cells a map's box may hold for its clusters to be counted in arrays (more: in a map of the cells met). */
export const GRID_CELLS = 65_536;

/** Readers of a row's latitude and longitude in degrees (NaN when unknown). */
type Positions = [latitude: (rowId: number) => number, longitude: (rowId: number) => number];

/**
 * The figures of the cells of `grid` holding the first `total` rows of `matches` (a listing with no position is in
 * none), as the store's `clusterListings` sums them: count, summed micro-degrees, least and greatest `price`
 * (dollars); cells south to north, west to east within a row.
 */
export function sumCells(
  grid: ClusterGrid,
  matches: Int32Array,
  total: number,
  positions: Positions,
  price: ArrayLike<number>,
): CellSums[] {
  const [latitudes, longitudes] = positions;
  const cells = new Map<number, CellSums>();
  for (let i = 0; i < total; i++) {
    const rowId = matches[i];
    const [latitude, longitude] = [latitudes(rowId), longitudes(rowId)];
    // A listing with no position is in no cell (the store's floor of null is null, and its row is grouped apart).
    if (Number.isNaN(latitude) || Number.isNaN(longitude)) continue;
    const [x, y] = cellAt(grid, longitude, latitude);
    // One number a cell: a row has 2^25 cells at zoom 22 (8 a tile), so rows never meet, and the key stays below 2^53.
    const key = y * 2 ** 26 + x;
    const cell = cells.get(key);
    if (!cell) {
      cells.set(key, {
        x,
        y,
        count: 1,
        latitude: microDegrees(latitude),
        longitude: microDegrees(longitude),
        minPrice: price[rowId],
        maxPrice: price[rowId],
      });
      continue;
    }
    cell.count++;
    cell.latitude += microDegrees(latitude);
    cell.longitude += microDegrees(longitude);
    cell.minPrice = Math.min(cell.minPrice, price[rowId]);
    cell.maxPrice = Math.max(cell.maxPrice, price[rowId]);
  }
  return [...cells.values()].sort((a, b) => a.y - b.y || a.x - b.x);
}

/**
 * {@link sumCells} of matches inside a box whose cells are columns `x0` to `x1` and rows `y0` to `y1` (every match's
 * cell, since the search has the box): each cell's figures in arrays, summed in the same order.
 */
export function sumCellsInBox(
  grid: ClusterGrid,
  matches: Int32Array,
  total: number,
  positions: Positions,
  price: ArrayLike<number>,
  cells: [x0: number, y0: number, x1: number, y1: number],
): CellSums[] {
  const [latitudeAt, longitudeAt] = positions;
  const [x0, y0, x1, y1] = cells;
  const width = x1 - x0 + 1;
  const size = width * (y1 - y0 + 1);
  const [count, latitudes, longitudes] = [new Int32Array(size), new Float64Array(size), new Float64Array(size)];
  const [minPrice, maxPrice] = [new Float64Array(size).fill(Infinity), new Float64Array(size).fill(-Infinity)];
  for (let i = 0; i < total; i++) {
    const rowId = matches[i];
    const [latitude, longitude] = [latitudeAt(rowId), longitudeAt(rowId)];
    if (Number.isNaN(latitude) || Number.isNaN(longitude)) continue;
    const cell = (cellY(grid, latitude) - y0) * width + cellX(grid, longitude) - x0;
    count[cell]++;
    latitudes[cell] += microDegrees(latitude);
    longitudes[cell] += microDegrees(longitude);
    minPrice[cell] = Math.min(minPrice[cell], price[rowId]);
    maxPrice[cell] = Math.max(maxPrice[cell], price[rowId]);
  }
  const sums: CellSums[] = [];
  for (let cell = 0; cell < size; cell++) {
    if (!count[cell]) continue;
    sums.push({
      x: x0 + (cell % width),
      y: y0 + Math.floor(cell / width),
      count: count[cell],
      latitude: latitudes[cell],
      longitude: longitudes[cell],
      minPrice: minPrice[cell],
      maxPrice: maxPrice[cell],
    });
  }
  return sums;
}
