import type { GeoPoint } from '../wire/common.js';

/** A subway station: name and WGS84 position (from MTA's station list). */
export interface Station {
  name: string;
  latitude: number;
  longitude: number;
}

const EARTH_RADIUS_M = 6_371_000;

/** Great-circle distance in metres. */
export function distanceMeters(a: GeoPoint, b: GeoPoint): number {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.sqrt(h));
}

/**
 * Transit score, 0-100, from subway stations near a point:
 * `100 x max(0, 1 - d / 1600)` for the nearest station at `d` metres, plus 5 for every further station
 * within 800 m, capped at 100. Null without a position.
 */
export function transitScore(point: GeoPoint | null, stations: readonly Station[]): number | null {
  if (!point || stations.length === 0) return null;
  let nearest = Infinity;
  let within800 = 0;
  for (const s of stations) {
    const d = distanceMeters(point, s);
    if (d < nearest) nearest = d;
    if (d <= 800) within800++;
  }
  const base = 100 * Math.max(0, 1 - nearest / 1600);
  const bonus = 5 * Math.max(0, within800 - 1);
  return Math.min(100, Math.round(base + bonus));
}
