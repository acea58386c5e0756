import polyline from '@mapbox/polyline';
import booleanPointInPolygon from '@turf/boolean-point-in-polygon';
import type { MultiPolygon, Polygon, Position } from 'geojson';
import type { GeoPoint } from '../wire/common.js';

/** An area's outline as GeoJSON (WGS84, `[longitude, latitude]` positions). */
export type Outline = Polygon | MultiPolygon;

/** `[minLon, minLat, maxLon, maxLat]` in degrees. */
export type BoundingBox = [number, number, number, number];

/**
 * Decodes the upstream site's `encodedBoundary` (a Google encoded polyline, latitude first, 5 decimals)
 * into a closed GeoJSON polygon. Null for an empty or degenerate outline (fewer than 3 points).
 */
export function decodeOutline(encoded: string | null | undefined): Polygon | null {
  if (!encoded) return null;
  const ring: Position[] = polyline.decode(encoded, 5).map(([lat, lon]) => [lon, lat]);
  if (ring.length < 3) return null;
  const [first, last] = [ring[0], ring[ring.length - 1]];
  if (first[0] !== last[0] || first[1] !== last[1]) ring.push([first[0], first[1]]);
  return { type: 'Polygon', coordinates: [ring] };
}

/** The bounding box of an outline. */
export function boundingBox(outline: Outline): BoundingBox {
  const box: BoundingBox = [Infinity, Infinity, -Infinity, -Infinity];
  const rings = outline.type === 'Polygon' ? outline.coordinates : outline.coordinates.flat();
  for (const ring of rings) {
    for (const [lon, lat] of ring) {
      box[0] = Math.min(box[0], lon);
      box[1] = Math.min(box[1], lat);
      box[2] = Math.max(box[2], lon);
      box[3] = Math.max(box[3], lat);
    }
  }
  return box;
}

/** Whether `point` lies inside `outline` (on the boundary counts as inside). */
export function outlineContains(outline: Outline, point: GeoPoint, box: BoundingBox = boundingBox(outline)): boolean {
  if (point.longitude < box[0] || point.longitude > box[2] || point.latitude < box[1] || point.latitude > box[3]) return false;
  return booleanPointInPolygon([point.longitude, point.latitude], outline);
}
