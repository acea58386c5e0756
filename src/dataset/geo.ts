import proj4 from 'proj4';
import type { GeoPoint } from '../wire/common.js';

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
