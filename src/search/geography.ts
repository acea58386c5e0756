import { sql } from 'kysely';
import type { BoundingBox } from '../domain/outline.js';
import { distanceMeters, EARTH_RADIUS_M } from '../domain/great-circle.js';
import type { ListingsQuery } from './listing-search.js';

const METRES_PER_DEGREE = 111_320;
const num = (v: number) => sql<number>`cast(${v} as double precision)`;

/** Great-circle distance in metres from a point to each listing's position (haversine, in SQL). */
export function distanceFrom(point: { latitude: number; longitude: number }) {
  const [lat, lon] = [num(point.latitude), num(point.longitude)];
  return sql<number>`(${EARTH_RADIUS_M} * 2 * asin(sqrt(power(sin(radians(latitude - ${lat}) / 2), 2) + cos(radians(${lat})) * cos(radians(latitude)) * power(sin(radians(longitude - ${lon}) / 2), 2))))`;
}

/**
 * The great-circle distance from `point` to a position, rounded to the metre, as the store's `round(distanceFrom(point))`
 * gives it and the answers show it (`distance`); NaN for an unknown position. What the search index filters `near` by.
 */
export function roundedDistance(point: { latitude: number; longitude: number }, latitude: number, longitude: number): number {
  return Math.round(distanceMeters(point, { latitude, longitude }));
}

/** The box around a circle of `radius` metres (a little larger: the exact test follows). */
export function boxAround(near: { latitude: number; longitude: number; radius: number }): BoundingBox {
  const dLat = (near.radius / METRES_PER_DEGREE) * 1.01;
  const dLon = (near.radius / (METRES_PER_DEGREE * Math.cos((near.latitude * Math.PI) / 180))) * 1.01;
  return [near.longitude - dLon, near.latitude - dLat, near.longitude + dLon, near.latitude + dLat];
}

/**
 * Keeps listings inside `box`, through the spatial index: SQLite's R*Tree (a prefilter at 32-bit
 * precision) or PostgreSQL's GiST index on `point(longitude, latitude)`; then the exact test, edges included.
 */
export function inBox<Q extends ListingsQuery>(q: Q, [minLon, minLat, maxLon, maxLat]: BoundingBox, dialect: 'sqlite' | 'postgres'): Q {
  const indexed =
    dialect === 'postgres'
      ? sql<boolean>`point(longitude, latitude) <@ box(point(${num(minLon)}, ${num(minLat)}), point(${num(maxLon)}, ${num(maxLat)}))`
      : sql<boolean>`listings.rowid in (select id from listings_rtree where max_lat >= ${minLat} and min_lat <= ${maxLat} and max_lon >= ${minLon} and min_lon <= ${maxLon})`;
  return q
    .where(indexed)
    .where('latitude', '>=', minLat)
    .where('latitude', '<=', maxLat)
    .where('longitude', '>=', minLon)
    .where('longitude', '<=', maxLon) as Q;
}
