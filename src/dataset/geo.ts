import proj4 from 'proj4';
import type { GeoPoint } from '../domain/listing.js';
import type { UpstreamArea } from '../upstream/types.js';

/** EPSG:2263, NAD83 / New York Long Island (US survey feet), the projection of PLUTO's XCoord/YCoord. */
const EPSG_2263 =
  '+proj=lcc +lat_0=40.1666666666667 +lon_0=-74 +lat_1=41.0333333333333 +lat_2=40.6666666666667 ' +
  '+x_0=300000 +y_0=0 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +to_meter=0.3048006096012192 +no_defs';
const toWgs84 = proj4(EPSG_2263, 'WGS84');

/** New York State Plane Long Island feet -> WGS84 latitude/longitude (6 decimals); null for 0 or missing. */
export function statePlaneToWgs84(x: number, y: number): GeoPoint | null {
  if (!Number.isFinite(x) || !Number.isFinite(y) || x <= 0 || y <= 0) return null;
  const [longitude, latitude] = toWgs84.forward([x, y]);
  return { latitude: Math.round(latitude * 1e6) / 1e6, longitude: Math.round(longitude * 1e6) / 1e6 };
}

/**
 * A position for every area from the DCP neighbourhood label points: the area's own point (matched by
 * name, case-insensitive), else the mean of the points of the areas below it, else the nearest
 * ancestor's point. Keys are upstream area ids.
 */
export function areaPoints(areas: UpstreamArea[], labelPoints: { name: string; point: GeoPoint }[]): Map<number, GeoPoint> {
  const byName = new Map(labelPoints.map((p) => [p.name.toLowerCase(), p.point]));
  const children = new Map<number, number[]>();
  for (const a of areas) if (a.parentId !== null) children.set(a.parentId, [...(children.get(a.parentId) ?? []), a.id]);
  const own = new Map<number, GeoPoint>();
  for (const a of areas) {
    const p = byName.get(a.name.toLowerCase());
    if (p) own.set(a.id, p);
  }
  const descendantsMean = (id: number): GeoPoint | null => {
    const pts: GeoPoint[] = [];
    const stack = [...(children.get(id) ?? [])];
    while (stack.length) {
      const next = stack.pop()!;
      const p = own.get(next);
      if (p) pts.push(p);
      stack.push(...(children.get(next) ?? []));
    }
    if (!pts.length) return null;
    const round = (v: number) => Math.round(v * 1e6) / 1e6;
    return {
      latitude: round(pts.reduce((s, p) => s + p.latitude, 0) / pts.length),
      longitude: round(pts.reduce((s, p) => s + p.longitude, 0) / pts.length),
    };
  };
  const parentOf = new Map(areas.map((a) => [a.id, a.parentId]));
  const result = new Map<number, GeoPoint>();
  for (const a of areas) {
    const direct = own.get(a.id) ?? descendantsMean(a.id);
    if (direct) result.set(a.id, direct);
  }
  for (const a of areas) {
    if (result.has(a.id)) continue;
    let parent = parentOf.get(a.id) ?? null;
    while (parent !== null && !result.has(parent)) parent = parentOf.get(parent) ?? null;
    if (parent !== null) result.set(a.id, result.get(parent)!);
  }
  return result;
}
