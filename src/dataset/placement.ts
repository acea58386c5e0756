import { createHash } from 'node:crypto';
import type { MultiPolygon, Polygon } from 'geojson';
import type { GeoPoint } from '../wire/common.js';
import { boundingBox, outlineContains, type BoundingBox, type Outline } from '../domain/outline.js';
import { UPSTREAM_BOROUGH_BY_NAME } from './areas.js';
import { readJson } from '../lib/csv.js';
import { sharedDataFile } from './shared-data.js';
import { seededRandom } from '../lib/seeded-random.js';

interface NtaFile {
  features: { properties: { BoroName: string }; geometry: Polygon | MultiPolygon }[];
}

const round6 = (v: number) => Math.round(v * 1e6) / 1e6;

/**
 * The land of each borough, from the 2010 Neighborhood Tabulation Areas (`nta/nta-2010.geojson`), and
 * the rule that places a listing without a known position (docs/data.md): a point drawn uniformly from
 * the bounding box of its neighbourhood's real outline with a PRNG seeded by the SHA-1 of a key (the
 * building id, so units of one building share a point), kept only when it lies inside that outline
 * and inside its borough's land; after 5,000 misses, the same draw over the borough's land alone.
 */
export class BoroughLand {
  private readonly land = new Map<number, { outline: Outline; box: BoundingBox }[]>();

  constructor(sharedDataDir: string) {
    const nta = readJson<NtaFile>(sharedDataFile(sharedDataDir, 'boroughLand'));
    for (const f of nta.features) {
      const borough = UPSTREAM_BOROUGH_BY_NAME[f.properties.BoroName];
      if (borough === undefined) continue;
      this.land.set(borough, [...(this.land.get(borough) ?? []), { outline: f.geometry, box: boundingBox(f.geometry) }]);
    }
  }

  /** Whether `point` lies on the land of `borough` (upstream id). */
  contains(borough: number, point: GeoPoint): boolean {
    return (this.land.get(borough) ?? []).some((part) => outlineContains(part.outline, point, part.box));
  }

  /** The borough (upstream id) whose land holds `point`, or null when it lies on none (water, or outside the city). */
  boroughAt(point: GeoPoint): number | null {
    for (const borough of this.land.keys()) if (this.contains(borough, point)) return borough;
    return null;
  }

  /** A deterministic position for `key` inside `outline` (when given) and on the land of `borough`. */
  place(key: string, borough: number, outline: Outline | null): GeoPoint {
    const random = seededRandom(createHash('sha1').update(key).digest().readUInt32BE(0));
    const parts = this.land.get(borough) ?? [];
    const landBox = parts.reduce<BoundingBox>(
      (b, p) => [Math.min(b[0], p.box[0]), Math.min(b[1], p.box[1]), Math.max(b[2], p.box[2]), Math.max(b[3], p.box[3])],
      [Infinity, Infinity, -Infinity, -Infinity],
    );
    const attempts: [BoundingBox, Outline | null][] = outline
      ? [
          [boundingBox(outline), outline],
          [landBox, null],
        ]
      : [[landBox, null]];
    for (const [box, within] of attempts) {
      for (let i = 0; i < 5000; i++) {
        const point = { latitude: round6(box[1] + random() * (box[3] - box[1])), longitude: round6(box[0] + random() * (box[2] - box[0])) };
        if ((!within || outlineContains(within, point)) && this.contains(borough, point)) return point;
      }
    }
    throw new Error(`no position found on the land of borough ${borough} for ${key}`);
  }
}
