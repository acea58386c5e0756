import { boundingBox, outlineContains, type BoundingBox, type Outline } from '../domain/outline.js';
import { seededRandom } from '../lib/seeded-random.js';

/** The columns of a stored listing the derivation reads and changes (the rest is copied as is). */
export interface SourceListing {
  id: string;
  kind: string;
  area_id: number | null;
  price: number;
  sqft: number | null;
  latitude: number | null;
  longitude: number | null;
  listed_at: string | null;
  url_path: string | null;
}

/** First synthetic id: ten digits, far above the site's ids (seven digits), so the two never meet. */
export const FIRST_SYNTHETIC_ID = 9_000_000_001;

/**
 * Listings for benchmarks only, derived deterministically from real mirrored ones (docs/data.md,
 * "Synthetic listings"). With the PRNG seeded by `seed`, the i-th synthetic listing:
 * - copies a source drawn uniformly from `sources` (in the given order), every column included;
 * - gets id `FIRST_SYNTHETIC_ID + i` and url path `/synthetic/<id>`;
 * - has its price multiplied by exp(0.15 z), z standard normal (Box-Muller), rounded to $5 for a
 *   rental and $1,000 for a sale; price per square foot follows;
 * - is placed uniformly inside the outline of the source's area (up to 30 draws in its bounding box),
 *   else within about 100 m of the source;
 * - is listed up to 60 days before the source (uniform; an unknown date stays unknown).
 * Yields `[index, source, changes]`; the caller writes the rows.
 */
export function* deriveSyntheticListings<T extends SourceListing>(
  sources: readonly T[],
  outlines: ReadonlyMap<number, Outline>,
  count: number,
  seed: number,
): Generator<{ source: T; listing: T & { synthetic: 1 } }> {
  if (!sources.length) throw new Error('no listings to derive synthetic ones from: sync the mirror first');
  // Rows as the SQLite driver makes them hold their ~55 columns in V8's slow (dictionary) mode, which is
  // slow to copy again and again; a spread copy is a fast-mode object, cheap to copy.
  const rows = sources.map((source) => ({ ...source }));
  const random = seededRandom(seed);
  const boxes = new Map<number, BoundingBox>();
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  for (let i = 0; i < count; i++) {
    const source = rows[Math.floor(random() * rows.length)];
    const id = String(FIRST_SYNTHETIC_ID + i);
    const step = source.kind === 'rental' ? 5 : 1000;
    const price = Math.max(step, Math.round((source.price * Math.exp(0.15 * normal())) / step) * step);
    let position = { latitude: source.latitude, longitude: source.longitude };
    const outline = source.area_id === null ? undefined : outlines.get(source.area_id);
    let placed = false;
    if (outline) {
      let box = boxes.get(source.area_id!);
      if (!box) {
        box = boundingBox(outline);
        boxes.set(source.area_id!, box);
      }
      for (let attempt = 0; attempt < 30 && !placed; attempt++) {
        const candidate = { longitude: box[0] + random() * (box[2] - box[0]), latitude: box[1] + random() * (box[3] - box[1]) };
        if (outlineContains(outline, candidate, box)) {
          position = { latitude: round6(candidate.latitude), longitude: round6(candidate.longitude) };
          placed = true;
        }
      }
    }
    if (!placed && source.latitude !== null && source.longitude !== null) {
      position = {
        latitude: round6(source.latitude + (random() - 0.5) * 0.002),
        longitude: round6(source.longitude + (random() - 0.5) * 0.002),
      };
    }
    const listedAt =
      source.listed_at === null ? null : new Date(Date.parse(source.listed_at) - Math.floor(random() * 61) * 86_400_000).toISOString();
    yield {
      source,
      listing: {
        ...source,
        id,
        url_path: `/synthetic/${id}`,
        price,
        ...('price_per_sqft' in source ? { price_per_sqft: source.sqft ? Math.round((price / source.sqft) * 100) / 100 : null } : {}),
        // Its own price has not been valued yet.
        ...('price_position' in source ? { price_position: null } : {}),
        // A bulk load's rows carry no row version (migration 031): the load moves the bulk version instead.
        ...('data_version' in source ? { data_version: 0 } : {}),
        ...position,
        listed_at: listedAt,
        synthetic: 1,
      },
    };
  }
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
