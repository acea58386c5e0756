import type { ListingKind } from '../../src/domain/listing.js';
import type { ListingSearch } from '../../src/search/listing-search.js';
import type { PriceLadders } from '../../src/search/price-ladders.js';
import { waitFor } from './wait.js';

/** A search for every active listing of `kind` (first page of one): one the price ladders can count. */
export function everyListing(kind: ListingKind): ListingSearch {
  return { kind, sort: 'RECOMMENDED', sortDir: 'DESC', page: 1, perPage: 1 };
}

/** Waits until `ladders` (a runtime's, or any) answer: asking them starts their build when they are not current. */
export async function waitForLadders(ladders: Pick<PriceLadders, 'total'>, what = 'the price ladders built and current'): Promise<void> {
  await waitFor(async () => (await ladders.total(everyListing('rental'))) !== undefined, what);
}
