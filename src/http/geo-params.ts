import { decodeOutline, type BoundingBox, type Outline } from '../domain/outline.js';
import { invalidParams } from './problem.js';

/** The geographic parameters a query may carry (search, recorded sales), as validated by their schemas' patterns. */
export interface GeoQuery {
  bbox?: string;
  near?: string;
  radius?: number;
  polygon?: string;
  sort?: string;
}

/**
 * The geographic filters of a query, checked: a box with its minimum before its maximum, a point and
 * radius (the radius only with a point; `sort=DISTANCE` only with a point), a polygon that decodes to
 * at least three points inside valid coordinates. Every mistake is a 400 naming the parameter.
 */
export function geoFilters(q: GeoQuery): {
  bbox?: BoundingBox;
  near?: { latitude: number; longitude: number; radius: number };
  polygon?: Outline;
} {
  const errors: { name: string; in: string; message: string }[] = [];
  const valid = (lat: number, lon: number) => Math.abs(lat) <= 90 && Math.abs(lon) <= 180;
  let bbox: BoundingBox | undefined;
  if (q.bbox) {
    const [minLon, minLat, maxLon, maxLat] = q.bbox.split(',').map(Number);
    if (!valid(minLat, minLon) || !valid(maxLat, maxLon) || minLon > maxLon || minLat > maxLat) {
      errors.push({
        name: 'bbox',
        in: 'query',
        message:
          'must be minLon,minLat,maxLon,maxLat with each minimum at most its maximum, latitudes within ±90 and longitudes within ±180',
      });
    } else bbox = [minLon, minLat, maxLon, maxLat];
  }
  let near: { latitude: number; longitude: number; radius: number } | undefined;
  if (q.near) {
    const [latitude, longitude] = q.near.split(',').map(Number);
    if (!valid(latitude, longitude)) errors.push({ name: 'near', in: 'query', message: 'must be lat,lon within ±90 and ±180' });
    else near = { latitude, longitude, radius: q.radius ?? 1000 };
  } else if (q.radius !== undefined) errors.push({ name: 'radius', in: 'query', message: 'needs near=lat,lon' });
  if (q.sort === 'DISTANCE' && !q.near) errors.push({ name: 'sort', in: 'query', message: 'DISTANCE needs near=lat,lon' });
  let polygon: Outline | undefined;
  if (q.polygon) {
    let decoded: Outline | null = null;
    try {
      decoded = decodeOutline(q.polygon);
    } catch {
      decoded = null;
    }
    const ring = decoded?.type === 'Polygon' ? decoded.coordinates[0] : [];
    if (!decoded || ring.length < 4 || ring.some(([lon, lat]) => !valid(lat, lon))) {
      errors.push({
        name: 'polygon',
        in: 'query',
        message: 'must be a Google encoded polyline of at least three points (latitude first, 5 decimals)',
      });
    } else polygon = decoded;
  }
  if (errors.length) throw invalidParams(errors);
  return { bbox, near, polygon };
}
