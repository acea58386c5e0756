import type { GeoPoint } from '../wire/common.js';
import { distanceMeters, EARTH_RADIUS_M } from './great-circle.js';

/** A subway station: name and WGS84 position (from MTA's station list). */
export interface Station {
  name: string;
  latitude: number;
  longitude: number;
}

/** Metres within which a station counts towards {@link transitScore}: the nearest scores nothing farther away. */
const SCORED_WITHIN_M = 1600;

/**
 * Transit score, 0-100, from subway stations near a point:
 * `100 x max(0, 1 - d / 1600)` for the nearest station at `d` metres, plus 5 for every further station
 * within 800 m, capped at 100. Null without a position.
 */
export function transitScore(point: GeoPoint | null, stations: readonly Station[]): number | null {
  if (!point || stations.length === 0) return null;
  return scoreAmong(point, stations, 0, stations.length);
}

/** The score of `point` from `stations[from..to)`, every station that can count being among them. */
function scoreAmong(point: GeoPoint, stations: readonly Station[], from: number, to: number): number {
  let nearest = Infinity;
  let within800 = 0;
  for (let i = from; i < to; i++) {
    const d = distanceMeters(point, stations[i]);
    if (d < nearest) nearest = d;
    if (d <= 800) within800++;
  }
  const base = 100 * Math.max(0, 1 - nearest / SCORED_WITHIN_M);
  const bonus = 5 * Math.max(0, within800 - 1);
  return Math.min(100, Math.round(base + bonus));
}

/**
 * {@link transitScore} against `stations`, as a function of the point that reads only the stations within 1,600 m of
 * its latitude: a sync scores every listing it writes, on the event loop, and most stations are far from any one
 * listing (figures in docs/benchmark-history.md, "sixth session"). The same score for every point
 * (test/domain/transit-score.test.ts, against {@link transitScore}, the reference): a great-circle distance is at least
 * the arc between the two latitudes (R x the latitudes' difference in radians), so a station outside the band is over
 * 1,600 m away and counts neither as the nearest nor within 800 m; the band is a metre wider for rounding.
 */
export function transitScorer(stations: readonly Station[]): (point: GeoPoint | null) => number | null {
  const byLatitude = [...stations].sort((a, b) => a.latitude - b.latitude);
  const band = ((SCORED_WITHIN_M + 1) / EARTH_RADIUS_M) * (180 / Math.PI);
  /** The first station whose latitude is at least `latitude` (binary search). */
  const firstFrom = (latitude: number): number => {
    let [lo, hi] = [0, byLatitude.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (byLatitude[mid].latitude < latitude) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return (point) => {
    if (!point || byLatitude.length === 0) return null;
    return scoreAmong(point, byLatitude, firstFrom(point.latitude - band), firstFrom(point.latitude + band));
  };
}
