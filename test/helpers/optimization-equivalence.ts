import { expect } from 'vitest';
import { seededRandom } from '../../src/lib/seeded-random.js';
import { DEFAULT_SORT_DIRECTIONS, SORTS } from '../../src/search/sorts.js';
import type { TestRuntime } from './runtime.js';

/**
 * Every optimization of docs/performance.md's registry turned off: what the service answers then is the reference
 * the optimizations must give byte for byte.
 */
export const OPTIMIZATIONS_OFF = {
  SEARCH_INDEX: 'false',
  ANSWER_CACHE_MB: '0',
  ROW_BUILDERS: 'false',
  NAMED_STATEMENTS: 'false',
  SQLITE_CHECKPOINT_SECONDS: '0',
} as const;

/** One request of the probe: a path and query, with the media type asked (JSON unless said) and the encoding (none unless said). */
export interface Probe {
  url: string;
  accept?: string;
  acceptEncoding?: string;
}

/**
 * The requests an app sends, drawn by a seeded rule from the store's own active listings: searches around a
 * listing (its area, a price range around its price, its bedrooms, an amenity it has, no fee) in every order and
 * direction on pages 1 to 3 of 1 to 50, with GeoJSON and CSV now and then; searches near a point and in a box;
 * map clusters; the listings' details, batches and comparables; their buildings; areas and market figures; with
 * `recordedSales`, the city's recorded sales too.
 */
export async function probes(rt: TestRuntime, options: { count?: number; recordedSales?: boolean } = {}): Promise<Probe[]> {
  const random = seededRandom(47);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)];
  const listings = await rt.store.db
    .selectFrom('listings')
    .select(['id', 'kind', 'price', 'area_id', 'bedroom_count', 'building_id', 'latitude', 'longitude'])
    .where('status', '=', 'ACTIVE')
    .orderBy('id')
    .execute();
  const amenities = await rt.store.db.selectFrom('listing_amenities').select(['listing_id', 'amenity']).execute();
  const amenitiesOf = new Map<string, string[]>();
  for (const { listing_id, amenity } of amenities) amenitiesOf.set(listing_id, [...(amenitiesOf.get(listing_id) ?? []), amenity]);
  const sorts = (Object.keys(SORTS) as (keyof typeof SORTS)[]).filter((sort) => sort !== 'DISTANCE');
  const out: Probe[] = [];
  for (let i = 0; i < (options.count ?? 60); i++) {
    const listing = pick(listings);
    const kind = listing.kind === 'rental' ? 'rentals' : 'sales';
    const price = Number(listing.price);
    const query = new URLSearchParams();
    if (listing.area_id !== null && random() < 0.8) query.set('areas', String(listing.area_id));
    if (random() < 0.7) query.set('minPrice', String(Math.floor(price * 0.8)));
    if (random() < 0.7) query.set('maxPrice', String(Math.ceil(price * 1.2)));
    if (listing.bedroom_count !== null && random() < 0.5) query.set('minBeds', String(listing.bedroom_count));
    const own = amenitiesOf.get(listing.id) ?? [];
    if (own.length && random() < 0.5) query.set('amenities', pick(own));
    if (kind === 'rentals' && random() < 0.3) query.set('noFee', 'true');
    const sort = pick(sorts);
    query.set('sort', sort);
    query.set('sortDir', random() < 0.5 ? DEFAULT_SORT_DIRECTIONS[sort] : DEFAULT_SORT_DIRECTIONS[sort] === 'ASC' ? 'DESC' : 'ASC');
    query.set('page', String(1 + Math.floor(random() * 3)));
    query.set('perPage', String(pick([1, 10, 20, 50])));
    const accept = random() < 0.1 ? pick(['application/geo+json', 'text/csv']) : undefined;
    const acceptEncoding = random() < 0.3 ? pick(['br', 'gzip', 'gzip, deflate, br', 'identity']) : undefined;
    out.push({ url: `/v1/search/${kind}?${query}`, accept, acceptEncoding });
    if (listing.latitude !== null && listing.longitude !== null && random() < 0.2) {
      out.push({ url: `/v1/search/${kind}?near=${listing.latitude},${listing.longitude}&radius=800&sort=DISTANCE&perPage=20` });
      const box = [listing.longitude - 0.01, listing.latitude - 0.01, listing.longitude + 0.01, listing.latitude + 0.01];
      out.push({ url: `/v1/search/${kind}?bbox=${box.join(',')}&perPage=50` });
      out.push({ url: `/v1/search/${kind}/clusters?bbox=${box.join(',')}&zoom=${13 + Math.floor(random() * 3)}` });
    }
  }
  const some = Array.from({ length: 20 }, () => pick(listings));
  for (const listing of some) out.push({ url: `/v1/property/${listing.id}`, acceptEncoding: pick([undefined, 'gzip', 'br']) });
  out.push({ url: `/v1/properties?ids=${some.map((l) => l.id).join(',')}` });
  for (const listing of some.slice(0, 5)) out.push({ url: `/v1/property/${listing.id}/comparables?limit=10` });
  for (const listing of some.filter((l) => l.building_id !== null).slice(0, 8)) out.push({ url: `/v1/building/${listing.building_id}` });
  out.push({ url: '/v1/areas' }, { url: '/v1/areas?level=borough&include=boundary' });
  for (const kind of ['rental', 'sale']) {
    out.push({ url: `/v1/market?kind=${kind}` }, { url: `/v1/market?kind=${kind}&areas=100&bedrooms=1` });
  }
  if (options.recordedSales) {
    out.push(
      { url: '/v1/recorded-sales?areas=100&from=2023-06-01&to=2023-07-01&perPage=50' },
      { url: '/v1/recorded-sales?areas=300&sort=price&perPage=20', accept: 'text/csv' },
      { url: '/v1/market/recorded-sales?areas=200&from=2020-01&to=2023-12' },
    );
  }
  return out;
}

/** Headers that differ from one request to the next whatever answers it: its id, the date, and the limits' counts. */
const OWN_HEADERS = new Set([
  'x-request-id',
  'date',
  'connection',
  'keep-alive',
  'ratelimit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
]);

/** One answer as the wire has it: status, every header but the request's own, and the body's bytes (compressed when asked). */
async function answer(
  rt: TestRuntime,
  key: string,
  probe: Probe,
  ifNoneMatch?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const res = await rt.app.inject({
    method: 'GET',
    url: probe.url,
    headers: {
      authorization: `Bearer ${key}`,
      ...(probe.accept ? { accept: probe.accept } : {}),
      ...(probe.acceptEncoding ? { 'accept-encoding': probe.acceptEncoding } : {}),
      ...(ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {}),
    },
  });
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !OWN_HEADERS.has(name)));
  // Compressed bytes as base64; plain ones as text, which a failure shows readably.
  return { status: res.statusCode, headers, body: res.rawPayload.toString(res.headers['content-encoding'] ? 'base64' : 'utf8') };
}

/**
 * Asserts that `fast` answers every probe as `plain` does, byte for byte and header for header: each asked of `fast`
 * three times (the third may come from the answer cache, which keeps an answer the second time it is asked) and once
 * of `plain`, then once more of both with its ETag in `If-None-Match`, and the cursor of each first search page
 * followed on both. Returns how many requests were compared.
 */
export async function expectSameAnswers(
  fast: { rt: TestRuntime; key: string },
  plain: { rt: TestRuntime; key: string },
  list: Probe[],
): Promise<number> {
  let compared = 0;
  const queue = [...list];
  while (queue.length) {
    const probe = queue.shift()!;
    const expected = await answer(plain.rt, plain.key, probe);
    expect(expected.status, `${probe.url} answered ${expected.body.slice(0, 300)}`).toBeLessThan(500);
    for (let i = 0; i < 3; i++) {
      const got = await answer(fast.rt, fast.key, probe);
      expect(got, `${probe.url} (${probe.accept ?? 'application/json'}, ${probe.acceptEncoding ?? 'no encoding'}), ask ${i + 1}`).toEqual(
        expected,
      );
      compared++;
    }
    const etag = expected.headers.etag;
    if (typeof etag === 'string') {
      const [got, notModified] = await Promise.all([answer(fast.rt, fast.key, probe, etag), answer(plain.rt, plain.key, probe, etag)]);
      expect(got, `${probe.url} with If-None-Match`).toEqual(notModified);
      expect(got.status).toBe(304);
      compared++;
    }
    if (
      probe.url.includes('/search/') &&
      !probe.accept &&
      !probe.acceptEncoding &&
      !probe.url.includes('cursor=') &&
      expected.status === 200
    ) {
      const next = (JSON.parse(expected.body) as { meta: { links?: { next?: string | null } } }).meta.links?.next;
      if (next?.includes('cursor=')) queue.push({ url: next });
    }
  }
  return compared;
}
