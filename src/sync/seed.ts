import { sql } from 'kysely';
import { decodeOutline, type Outline } from '../domain/outline.js';
import { AreasRepository } from '../store/areas-repository.js';
import type { Store } from '../store/database.js';
import { ListingsRepository } from '../store/listings-repository.js';
import { SyntheticListingsRepository } from '../store/synthetic-listings-repository.js';
import type { ListingRow } from '../store/listing-rows.js';
import { deriveSyntheticListings } from '../dataset/synthetic-listings.js';

/** Listings written a transaction. */
const BATCH = 5000;

/**
 * `nyc-listings seed`: makes the mirror hold `total` active listings by adding synthetic ones derived
 * from its mirrored rows ({@link deriveSyntheticListings}, seeded by `seed`) in place of earlier synthetic
 * ones ({@link SyntheticListingsRepository.replaceSynthetic}). For benchmarks only. Reports progress as (step,
 * done, total); returns what it did and the rate (listings added a second, the removal of earlier ones
 * included in the time).
 * @throws Error when the mirror holds no mirrored listing to derive from.
 */
export async function seedListings(
  store: Store,
  total: number,
  seed: number,
  progress?: (step: string, done: number, total: number) => void,
): Promise<{ removed: number; added: number; total: number; seconds: number; perSecond: number }> {
  const listings = new ListingsRepository(store.db);
  const sources = await listings.mirrored();
  if (!sources.length) throw new Error('the mirror holds no listings to derive from: run `nyc-listings sync` (or serve once) first');
  const amenities = await listings.mirroredAmenities();
  const outlines = new Map<number, Outline>();
  for (const area of await new AreasRepository(store.db).list()) {
    const outline = decodeOutline(area.outline);
    if (outline) outlines.set(area.id, outline);
  }
  // The mirrored active listings stay; synthetic ones make up the rest.
  const count = Math.max(0, total - sources.length);
  if (store.dialect === 'sqlite') {
    // A bulk load rebuilds some twenty indexes: a page cache that holds them (256 MiB, this connection
    // only) saves most reads, a second thread sorts index entries beside the first, and the seed is
    // re-runnable, so it need not wait for the disk.
    await sql`pragma cache_size = -262144`.execute(store.db);
    await sql`pragma threads = 2`.execute(store.db);
    await sql`pragma synchronous = off`.execute(store.db);
  }
  const started = performance.now();
  progress?.('seed', 0, count);
  function* batches() {
    let batch: { row: ListingRow; amenities: string[] }[] = [];
    for (const { source, listing } of deriveSyntheticListings(sources, outlines, count, seed)) {
      batch.push({ row: listing, amenities: amenities.get(source.id) ?? [] });
      if (batch.length === BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length) yield batch;
  }
  const { removed, added } = await new SyntheticListingsRepository(store.db).replaceSynthetic(
    batches(),
    (written) => progress?.('seed', written, count),
    store.pool,
  );
  // Fresh statistics for the planner over the grown table.
  await sql`analyze`.execute(store.db);
  // The load left a WAL the size of what it wrote: copied back now, not by whichever small write of a
  // server comes next, which would stall that server's event loop for seconds.
  if (store.dialect === 'sqlite') await sql`pragma wal_checkpoint(truncate)`.execute(store.db);
  const seconds = (performance.now() - started) / 1000;
  return {
    removed,
    added,
    total: await listings.count(),
    seconds: Math.round(seconds * 10) / 10,
    perSecond: Math.round(added / Math.max(seconds, 0.001)),
  };
}
