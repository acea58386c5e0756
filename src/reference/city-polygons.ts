import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { MultiPolygon, Polygon } from 'geojson';
import { boundingBox, outlineContains, type BoundingBox, type Outline } from '../domain/outline.js';
import type { Districts } from '../domain/city-districts.js';
import type { GeoPoint } from '../wire/common.js';
import { CITY_FILES } from './shared-files.js';

interface Shape {
  value: string;
  outline: Outline;
  box: BoundingBox;
}

function readShapes(path: string, property: string): Shape[] {
  if (!existsSync(path)) return [];
  const file = JSON.parse(gunzipSync(readFileSync(path)).toString('utf8')) as {
    features: { properties: Record<string, string>; geometry: Polygon | MultiPolygon }[];
  };
  return file.features.map((f) => ({ value: String(f.properties[property]), outline: f.geometry, box: boundingBox(f.geometry) }));
}

/**
 * The community districts of each borough (its digit): `boro_cd` codes above these are joint-interest areas
 * (parks, airports) that are no district (the shared folder's README lists them: 164, 226-228, 355-356, 480-484, 595).
 */
const DISTRICTS_A_BOROUGH: Record<number, number> = { 1: 12, 2: 12, 3: 18, 4: 14, 5: 3 };

/**
 * The city's polygons a building is looked up in by its position (provenance: the shared folder's README):
 * City Council districts on the lines drawn after the 2020 census (used from the 2023 elections), the 2021
 * hurricane evacuation zones, community districts, police precincts (the 116th of 2022 not yet cut from the
 * 105th) and community school districts (lines of 2013). A file the folder lacks answers null for every point.
 */
export class CityPolygons {
  private readonly councils: Shape[];
  private readonly zones: Shape[];
  private readonly communityDistricts: Shape[];
  private readonly precincts: Shape[];
  private readonly schoolDistricts: Shape[];

  constructor(sharedDataDir: string) {
    this.councils = readShapes(join(sharedDataDir, CITY_FILES.councilDistricts), 'coun_dist');
    this.zones = readShapes(join(sharedDataDir, CITY_FILES.hurricaneZones), 'zone');
    this.communityDistricts = readShapes(join(sharedDataDir, CITY_FILES.communityDistricts), 'boro_cd');
    this.precincts = readShapes(join(sharedDataDir, CITY_FILES.policePrecincts), 'precinct');
    this.schoolDistricts = readShapes(join(sharedDataDir, CITY_FILES.schoolDistricts), 'SchoolDist');
  }

  private valueAt(shapes: Shape[], point: GeoPoint): string | null {
    return shapes.find((s) => outlineContains(s.outline, point, s.box))?.value ?? null;
  }

  /**
   * The community district holding `point`, as PLUTO writes it: the borough's digit and the district (105 is
   * Manhattan's fifth); null in a joint-interest area (164 Central Park is none), outside every polygon, or
   * without the file.
   */
  communityDistrictAt(point: GeoPoint): number | null {
    const code = Number(this.valueAt(this.communityDistricts, point));
    if (!code) return null;
    const max = DISTRICTS_A_BOROUGH[Math.floor(code / 100)];
    return max !== undefined && code % 100 >= 1 && code % 100 <= max ? code : null;
  }

  /** The police precinct (1-123) holding `point`; null outside every polygon or without the file. */
  policePrecinctAt(point: GeoPoint): number | null {
    const hit = this.valueAt(this.precincts, point);
    return hit === null ? null : Number(hit);
  }

  /** The community school district (1-32) holding `point`; null outside every polygon or without the file. */
  schoolDistrictAt(point: GeoPoint): number | null {
    const hit = this.valueAt(this.schoolDistricts, point);
    return hit === null ? null : Number(hit);
  }

  /** The districts holding `point` that listings and recorded sales are filtered by; all null without a point. */
  districtsAt(point: GeoPoint | null): Districts {
    if (!point) return { communityDistrict: null, policePrecinct: null, schoolDistrict: null };
    return {
      communityDistrict: this.communityDistrictAt(point),
      policePrecinct: this.policePrecinctAt(point),
      schoolDistrict: this.schoolDistrictAt(point),
    };
  }

  /** The council district (1-51) holding `point`; null in none (water, piers) or without the file. */
  councilDistrictAt(point: GeoPoint): number | null {
    const hit = this.valueAt(this.councils, point);
    return hit === null ? null : Number(hit);
  }

  /**
   * The hurricane evacuation zone holding `point`: `1` (most at risk) to `6`, `X` (in no zone); null on
   * water (the file's zone `0`), outside every polygon, or without the file.
   */
  evacuationZoneAt(point: GeoPoint): string | null {
    const hit = this.valueAt(this.zones, point);
    return hit !== null && hit !== '0' ? hit : null;
  }
}
