import type { GeoPoint } from '../wire/common.js';

/** The Earth's mean radius in metres, as every great-circle distance of the project takes it (the store's SQL too). */
export const EARTH_RADIUS_M = 6_371_000;

/** Great-circle distance in metres between two WGS84 positions (haversine). */
export function distanceMeters(a: GeoPoint, b: GeoPoint): number {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.sqrt(h));
}
