import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

/** A listing summary as searches answer it. */
export type ListingSummary = components['schemas']['ListingSummary'];
/** A listing's detail. */
export type ListingDetail = components['schemas']['ListingDetail'];

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

type ListPath = '/v1/search/sales' | '/v1/search/rentals' | '/v1/areas';
type QueryOf<P extends ListPath> = NonNullable<paths[P]['get']['parameters']['query']>;
type ItemOf<P extends ListPath> = P extends '/v1/areas' ? components['schemas']['Area'] : ListingSummary;

/**
 * A typed client of the nyc-listings API (openapi-fetch over the types openapi-typescript generates from
 * the service's OpenAPI document): `client.GET('/v1/property/{id}', {params: {path: {id}}})` and so on
 * for every operation, retries that honour `Retry-After`, and `pages()`, which walks every page of a
 * list through `meta.links.next`.
 */
export function createNycListingsClient(options: NycListingsOptions) {
  const client = createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
    fetch: retrying(options),
  });

  /** Every item of a list operation, page after page, following `meta.links.next`. @throws Error on an error answer. */
  async function* pages<P extends ListPath>(path: P, query?: QueryOf<P>): AsyncGenerator<ItemOf<P>> {
    let params: Record<string, unknown> | undefined = query as Record<string, unknown> | undefined;
    for (;;) {
      const { data, error, response } = await client.GET(path as '/v1/search/sales', { params: { query: params as never } });
      if (error || !data) throw new Error(`${path}: HTTP ${response.status} ${JSON.stringify(error)}`);
      for (const item of data.data) yield item as ItemOf<P>;
      const next = data.meta.links.next;
      if (!next) return;
      params = Object.fromEntries(new URL(next, 'http://base').searchParams);
    }
  }

  return Object.assign(client, { pages });
}
