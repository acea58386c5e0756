import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { MultiPolygon, Polygon } from 'geojson';
import { boundingBox, outlineContains, type BoundingBox, type Outline } from '../domain/outline.js';
import type { GeoPoint } from '../wire/common.js';
import { CITY_FILES } from './city-files.js';

interface Shape {
  value: string;
  outline: Outline;
  box: BoundingBox;
}

function readShapes(path: string, property: string): Shape[] {
  if (!existsSync(path)) return [];
  const file = JSON.parse(gunzipSync(readFileSync(path)).toString('utf8')) as { features: { properties: Record<string, string>; geometry: Polygon | MultiPolygon }[] };
  return file.features.map((f) => ({ value: String(f.properties[property]), outline: f.geometry, box: boundingBox(f.geometry) }));
}

/**
 * The city's polygons a building is looked up in by its position (provenance: the shared folder's README):
 * City Council districts on the lines drawn after the 2020 census (used from the 2023 elections), and the
 * 2021 hurricane evacuation zones. A file the folder lacks answers null for every point.
 */
export class CityPolygons {
  private readonly councils: Shape[];
  private readonly zones: Shape[];

  constructor(sharedDataDir: string) {
    this.councils = readShapes(join(sharedDataDir, CITY_FILES.councilDistricts), 'coun_dist');
    this.zones = readShapes(join(sharedDataDir, CITY_FILES.hurricaneZones), 'zone');
  }

  /** The council district (1-51) holding `point`; null in none (water, piers) or without the file. */
  councilDistrictAt(point: GeoPoint): number | null {
    const hit = this.councils.find((s) => outlineContains(s.outline, point, s.box));
    return hit ? Number(hit.value) : null;
  }

  /**
   * The hurricane evacuation zone holding `point`: `1` (most at risk) to `6`, `X` (in no zone); null on
   * water (the file's zone `0`), outside every polygon, or without the file.
   */
  evacuationZoneAt(point: GeoPoint): string | null {
    const hit = this.zones.find((s) => outlineContains(s.outline, point, s.box));
    return hit && hit.value !== '0' ? hit.value : null;
  }
}
