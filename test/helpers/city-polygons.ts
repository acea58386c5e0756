import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { inRings } from './geometry.js';
import { SHARED_DATA } from './paths.js';

type Rings = number[][][];

/** A point-in-polygon look-up: the value of the first feature holding (lon, lat), or undefined. */
export type PolygonLookup = (lon: number, lat: number) => string | undefined;

/** The value of the first feature whose (Multi)Polygon holds the point, read here from the shared file (independently of the service). */
export function polygonLookup(file: string, property: string): PolygonLookup {
  const features = (
    JSON.parse(gunzipSync(readFileSync(join(SHARED_DATA, file))).toString('utf8')) as {
      features: { properties: Record<string, string>; geometry: { type: string; coordinates: Rings | Rings[] } }[];
    }
  ).features.map((f) => {
    const parts = f.geometry.type === 'Polygon' ? [f.geometry.coordinates as Rings] : (f.geometry.coordinates as Rings[]);
    // Each feature's bounding box, tested first: a point is inside few of them.
    const box = { west: Infinity, east: -Infinity, south: Infinity, north: -Infinity };
    for (const rings of parts) {
      for (const [x, y] of rings[0]) {
        [box.west, box.east, box.south, box.north] = [
          Math.min(box.west, x),
          Math.max(box.east, x),
          Math.min(box.south, y),
          Math.max(box.north, y),
        ];
      }
    }
    return { value: String(f.properties[property]), parts, box };
  });
  return (lon, lat) =>
    features.find(
      (f) =>
        lon >= f.box.west &&
        lon <= f.box.east &&
        lat >= f.box.south &&
        lat <= f.box.north &&
        f.parts.some((rings) => inRings(rings, lon, lat)),
    )?.value;
}

/** The shared folder's community district codes that are joint-interest areas (its README), not districts. */
const JOINT_INTEREST = ['164', '226', '227', '228', '355', '356', '480', '481', '482', '483', '484', '595'];

/** A community district code of the polygon file, as the service answers it: a joint-interest area is none. */
export const communityDistrictOf = (code: string | undefined) =>
  code === undefined || JOINT_INTEREST.includes(code) ? null : Number(code);

/** A polygon's number, null outside every polygon. */
export const numberOf = (value: string | undefined) => (value === undefined ? null : Number(value));

/** The districts holding a point, as the service names them. */
export type Districts = { communityDistrict: number | null; policePrecinct: number | null; schoolDistrict: number | null };

/**
 * The districts holding a point, computed here from the shared files, as the service names them. Each position is
 * looked up once: the city's listings stand at about a third as many positions as there are listings (buildings).
 */
export function districtLookup(): (lon: number, lat: number) => Districts {
  const community = polygonLookup('community-districts/community-districts.geojson.gz', 'boro_cd');
  const precinct = polygonLookup('police-precincts/police-precincts.geojson.gz', 'precinct');
  const school = polygonLookup('school-districts/school-districts.geojson.gz', 'SchoolDist');
  const seen = new Map<string, Districts>();
  return (lon, lat) => {
    const position = `${lon},${lat}`;
    let districts = seen.get(position);
    if (!districts) {
      districts = {
        communityDistrict: communityDistrictOf(community(lon, lat)),
        policePrecinct: numberOf(precinct(lon, lat)),
        schoolDistrict: numberOf(school(lon, lat)),
      };
      seen.set(position, districts);
    }
    return { ...districts };
  };
}
