import type { ListingKind } from '../../src/domain/listing.js';
import type { ListingSearch } from '../../src/store/search-query.js';
import type { TestRuntime } from './runtime.js';
import { waitFor } from './wait.js';

/** A search for every active listing of `kind` (first page of one): one the price ladders can count. */
export function everyListing(kind: ListingKind): ListingSearch {
  return { kind, sort: 'RECOMMENDED', sortDir: 'DESC', page: 1, perPage: 1 };
}

/** Waits until `rt`'s price ladders answer (asking them starts their build when they are not current). */
export async function waitForLadders(rt: Pick<TestRuntime, 'mirror'>, what = 'the price ladders built and current'): Promise<void> {
  await waitFor(async () => (await rt.mirror.priceLadders.total(everyListing('rental'))) !== undefined, what);
}
