import type { ListingKind } from '../../src/domain/listing.js';
import type { Runtime } from '../../src/runtime.js';
import { waitFor } from './wait.js';

/** The active listings of `kind` the runtime's search index holds, or undefined while it is not current (asking starts its build). */
export async function indexedListings(rt: Runtime, kind: ListingKind): Promise<number | undefined> {
  return (await rt.reads.searcher.index!.listingsOf(kind))?.size;
}

/** Waits until the runtime's search index holds the store's data version. */
export async function waitForIndex(rt: Runtime, what = 'the search index built and current'): Promise<void> {
  await waitFor(async () => (await indexedListings(rt, 'rental')) !== undefined, what);
}
