import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];
/** A listing summary as searches answer it (every field; unknown values are null). */
export type ListingSummary = Schemas['ListingSummary'];
/** A listing's detail. */
export type ListingDetail = Schemas['ListingDetail'];
/** An area: borough, sub-borough or neighbourhood. */
export type Area = Schemas['Area'];
/** An RFC 9457 problem document, as every error answer carries it (`code` is stable). */
export type Problem = Schemas['Problem'];
/** The generated operations, as the OpenAPI document describes them: items may be sparse (`fields=`). */
export type SparsePaths = paths;

/**
 * The operations with whole items: the answers' `ListingSummary | ListingSummaryFields` unions (a sparse item
 * exists only when `fields=` is given) are the whole types, and `fields` is no parameter. Ask for fields
 * through `client.withFields`, whose types say which items may lack them.
 */
export type WholePaths = Whole<paths>;
type Sparse = Schemas['ListingSummaryFields'] | Schemas['ListingDetailFields'];
// A type with a listing's keys that is assignable to a sparse item is one of the union's two members: the whole
// one is kept, the sparse one dropped (a path's `{ id: string }` is assignable too, but has no `price`).
type Whole<T> = T extends Sparse
  ? 'price' extends keyof T
    ? T extends Schemas['ListingSummary'] | Schemas['ListingDetail']
      ? T
      : never
    : T
  : T extends readonly unknown[]
    ? { [K in keyof T]: Whole<T[K]> }
    : T extends object
      ? { [K in keyof T as K extends 'fields' ? never : K]: Whole<T[K]> }
      : T;

/** The media types the client reads: answers as JSON, errors as problem documents (so `error` is a {@link Problem}). */
type Media = 'application/json' | 'application/problem+json';

export interface NycListingsOptions {
  /** Where the service is, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** `SERVICE_<uuid>`; without one, searches answer as the Free plan. */
  apiKey?: string;
  /** Retries of a 429 or 503 answer, each after its `Retry-After` seconds (default 3). */
  maxRetries?: number;
  /** Longest wait for one retry, seconds (default 60): a longer `Retry-After` is answered as is. */
  maxRetryAfterSeconds?: number;
  fetch?: typeof fetch;
}

/** A fetch that retries 429 and 503 answers after their `Retry-After`, at most `maxRetries` times. */
function retrying(options: NycListingsOptions): typeof fetch {
  const base = options.fetch ?? fetch;
  const maxRetries = options.maxRetries ?? 3;
  const longest = (options.maxRetryAfterSeconds ?? 60) * 1000;
  return async (input, init) => {
    for (let attempt = 0; ; attempt++) {
      const request = input instanceof Request ? input.clone() : input;
      const response = await base(request, init);
      const wait = Number(response.headers.get('retry-after')) * 1000;
      if (![429, 503].includes(response.status) || attempt >= maxRetries || !Number.isFinite(wait) || wait > longest) return response;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
}

/** The lists `pages()` walks: searches and areas page by `meta.links.next`, the change feed by `meta.next`. */
type PagedPath = '/v1/search/sales' | '/v1/search/rentals' | '/v1/areas' | '/v1/changes';
type QueryOf<P extends PagedPath> = NonNullable<WholePaths[P]['get']['parameters']['query']>;
type ItemOf<P extends PagedPath> = NonNullable<WholePaths[P]['get']['responses'][200]['content']['application/json']>['data'][number];

/** An error answer, thrown by `pages()`: the problem document and the HTTP status. */
export class NycListingsError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
  ) {
    super(problem ? `${problem.code}: ${problem.detail}` : `HTTP ${status}`);
  }
}

/** The client: typed GET of every operation (whole items), `withFields` (sparse items), and `pages()`. */
export type NycListingsClient = Client<WholePaths, Media> & {
  /** The same client typed as the document is: items may hold only the fields asked for with `fields=`. */
  withFields: Client<SparsePaths, Media>;
  /**
   * Every item of a list, page after page: searches and areas follow `meta.links.next`; the change feed follows
   * `meta.next` until a page comes back empty (the feed's head at that moment).
   * @throws NycListingsError on an error answer.
   */
  pages<P extends PagedPath>(path: P, query?: QueryOf<P>): AsyncGenerator<ItemOf<P>>;
};

/**
 * A typed client of the nyc-listings API (openapi-fetch over the types openapi-typescript generated from the
 * service's OpenAPI document, committed in `src/schema.ts`): `client.GET('/v1/property/{id}', {params: {path: {id}}})`
 * and so on for every operation, with `error` typed as the problem document; retries that honour `Retry-After`.
 */
export function createNycListingsClient(options: NycListingsOptions): NycListingsClient {
  const client = createClient<SparsePaths, Media>({
    baseUrl: options.baseUrl,
    headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
    fetch: retrying(options),
  });

  async function* pages<P extends PagedPath>(path: P, query?: QueryOf<P>): AsyncGenerator<ItemOf<P>> {
    let params = query as Record<string, unknown> | undefined;
    for (;;) {
      const { data, error, response } = await client.GET(path as '/v1/areas', { params: { query: params as never } });
      if (error || !data) throw new NycListingsError(response.status, error as Problem | undefined);
      const items = data.data as ItemOf<P>[];
      for (const item of items) yield item;
      const meta = data.meta as { links?: { next?: string | null }; next?: string };
      if (path === '/v1/changes') {
        if (!items.length) return;
        params = { ...params, since: meta.next };
      } else {
        if (!meta.links?.next) return;
        params = Object.fromEntries(new URL(meta.links.next, 'http://base').searchParams);
      }
    }
  }

  return Object.assign(client as unknown as Client<WholePaths, Media>, { withFields: client, pages });
}
