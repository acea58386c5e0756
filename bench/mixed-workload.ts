/** The bench's mixed workloads: distinct realistic searches drawn from the mirror's own listings. */
import { KNOWN_AMENITIES } from '../src/domain/listing.js';
import { seededRandom } from '../src/lib/seeded-random.js';
import { INDEXED_SORTS } from '../src/search/sorts.js';

/** Distinct searches of the mixed workload. */
export const MIXED_SEARCHES = 100_000;
/** The mixed workload's steady load, searches a second: a busy service, below what a million listings saturate at. */
export const MIXED_RATE = 100;

/**
 * `count` searches drawn by a seeded rule from the mirror's own active listings, as people search: a listing
 * drawn at random gives the kind, the area (its own half the time, its borough three times in ten, the whole
 * city otherwise), a price ceiling up to half again above its price (seven times in ten), a floor below it
 * (three in ten), its bedrooms as a minimum (half the time); the sort is the default half the time, else by
 * price (mostly cheapest first), listing date or price per square foot; three in ten ask for page 2 to 5.
 */
export function mixedSearches(rows: DrawnListing[], count: number, seed: number): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const listing = rows[Math.floor(random() * rows.length)];
    const q = new URLSearchParams();
    const where = random();
    if (where < 0.5 && listing.area_id !== null) q.set('areas', String(listing.area_id));
    else if (where < 0.8 && listing.borough_id !== null) q.set('areas', String(listing.borough_id));
    if (random() < 0.7) q.set('maxPrice', String(Math.ceil((Number(listing.price) * (1 + random() * 0.5)) / 100) * 100));
    if (random() < 0.3) q.set('minPrice', String(Math.floor((Number(listing.price) * (0.5 + random() * 0.4)) / 100) * 100));
    if (listing.bedroom_count !== null && random() < 0.5) q.set('minBeds', String(listing.bedroom_count));
    const order = random();
    if (order < 0.25) {
      q.set('sort', 'PRICE');
      q.set('sortDir', random() < 0.7 ? 'ASC' : 'DESC');
    } else if (order < 0.4) q.set('sort', 'LISTED_AT');
    else if (order < 0.5) q.set('sort', 'PRICE_PER_SQFT');
    if (random() < 0.3) q.set('page', String(2 + Math.floor(random() * 4)));
    q.set('perPage', '20');
    return `/v1/search/${listing.kind === 'sale' ? 'sales' : 'rentals'}?${q}`;
  });
}

/** A listing as the workloads draw them from the mirror. */
type DrawnListing = { kind: string; area_id: number | null; borough_id: number | null; price: number; bedroom_count: number | null };

/**
 * `count` searches of the kinds an app sends (issue 47's mix), drawn by a seeded rule from the mirror's own active
 * listings: a fifth of them sales. A listing of the kind drawn at random gives the area (its own half the time, else its
 * borough), its bedrooms as the minimum and maximum (half the time), a price range around its price (a floor 10 to 50 %
 * below, a ceiling 10 to 50 % above); an amenity of the known ones on half, `noFee=true` on three rentals in ten;
 * the order is any of the indexed sorts, either direction; the page is 1 to 5, of 20 to 50 listings.
 */
export function appSearches(rows: DrawnListing[], count: number, seed: number): string[] {
  const random = seededRandom(seed);
  const byKind = { sale: rows.filter((r) => r.kind === 'sale'), rental: rows.filter((r) => r.kind === 'rental') };
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)];
  return Array.from({ length: count }, () => {
    const kind = random() < 0.2 ? 'sale' : 'rental';
    const listing = pick(byKind[kind]);
    const q = new URLSearchParams();
    const area = random() < 0.5 ? listing.area_id : listing.borough_id;
    if (area !== null) q.set('areas', String(area));
    if (listing.bedroom_count !== null && random() < 0.5) {
      q.set('minBeds', String(listing.bedroom_count));
      q.set('maxBeds', String(listing.bedroom_count));
    }
    const price = Number(listing.price);
    q.set('minPrice', String(Math.floor((price * (0.5 + random() * 0.4)) / 100) * 100));
    q.set('maxPrice', String(Math.ceil((price * (1.1 + random() * 0.4)) / 100) * 100));
    if (random() < 0.5) q.set('amenities', pick(KNOWN_AMENITIES));
    if (kind === 'rental' && random() < 0.3) q.set('noFee', 'true');
    q.set('sort', pick(INDEXED_SORTS));
    q.set('sortDir', random() < 0.5 ? 'ASC' : 'DESC');
    q.set('page', String(1 + Math.floor(random() * 5)));
    q.set('perPage', String(20 + Math.floor(random() * 31)));
    return `/v1/search/${kind === 'sale' ? 'sales' : 'rentals'}?${q}`;
  });
}

/**
 * Draws one of `searches` at random for each request, and counts the requests whose search was asked within
 * the last `windowSeconds` (READ_CACHE_SECONDS): the most the answer cache could answer.
 */
export function drawWithRepeats(searches: string[], windowSeconds: number) {
  const lastAsked = new Map<string, number>();
  const counts = { asked: 0, repeated: 0 };
  const draw = () => {
    const url = searches[Math.floor(Math.random() * searches.length)];
    const now = performance.now();
    counts.asked++;
    if (now - (lastAsked.get(url) ?? -Infinity) <= windowSeconds * 1000) counts.repeated++;
    lastAsked.set(url, now);
    return url;
  };
  return { draw, counts };
}
