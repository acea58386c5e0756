import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import type { Outline } from '../domain/outline.js';
import { LISTING_KINDS, type ListingKind } from '../domain/listing.js';
import type { ListingsRepository } from '../store/listings-repository.js';
import type { Database } from '../store/schema.js';
import { Nullable } from '../wire/common.js';
import { ReadMemo } from '../lib/read-memo.js';
import { IndexedListings, type IndexedPage } from './indexed-listings.js';
import { ColumnsBuilder, INDEXED_ROW_COLUMNS, type IndexedRow } from './listing-columns.js';
import type { ListingSearch, SearchContext } from './listing-search.js';
import type { ClusterGrid } from './clusters.js';
import type { ListingCluster } from '../wire/cluster.js';
import { SingleFlight } from '../lib/single-flight.js';

/**
 * Rows read from the store at a time while building: the event loop has a turn between reads. On SQLite a read
 * thread makes each chunk's rows, and its heap keeps the size the largest chunk needed: in a script building the
 * index of a million listings through the read threads, chunks of 20,000 left the process 76 MiB larger than chunks
 * of 5,000 (docs/search-index.md has the service's figures).
 */
const CHUNK_ROWS = 5_000;

/** What the index was built from: the store's data version read before its rows, and each kind's listings. */
interface Built {
  dataVersion: number;
  kinds: Map<ListingKind, IndexedListings>;
  /** When the build finished, and how long it took (seconds). */
  builtAt: Date;
  buildSeconds: number;
}

/** The index's state, as `/v1/health` shows it (`searchIndex`) and the metrics read it. */
export const SearchIndexStateSchema = Type.Object({
  enabled: Type.Boolean({ description: 'Whether searches are answered from the in-memory index on this instance (SEARCH_INDEX).' }),
  listings: Nullable(
    Type.Object(
      { rental: Type.Integer(), sale: Type.Integer() },
      { description: 'Active listings the index holds, by kind; null until its first build.' },
    ),
  ),
  dataVersion: Nullable(
    Type.Integer({
      description:
        "The store's data version the index holds: while it is the store's, the index answers; otherwise the store does, and a build runs.",
    }),
  ),
  building: Type.Boolean({ description: 'Whether a build is under way on this instance.' }),
  builtAt: Nullable(Type.String({ description: 'When the last build finished (UTC).' })),
  buildSeconds: Nullable(Type.Number({ description: 'How long the last build took, reading the store included (seconds).' })),
  builds: Type.Integer({ description: 'Builds finished on this instance since it started.' }),
  failedBuilds: Type.Integer({ description: 'Builds that failed on this instance since it started (the store answered meanwhile).' }),
  lastError: Nullable(Type.String({ description: "The last failed build's cause." })),
  lastErrorAt: Nullable(Type.String({ description: 'When it failed (UTC).' })),
});
export type SearchIndexState = Static<typeof SearchIndexStateSchema>;

/** The state shown when SEARCH_INDEX is off: the store answers every search. */
export const NO_SEARCH_INDEX: SearchIndexState = {
  enabled: false,
  listings: null,
  dataVersion: null,
  building: false,
  builtAt: null,
  buildSeconds: null,
  builds: 0,
  failedBuilds: 0,
  lastError: null,
  lastErrorAt: null,
};

export interface SearchIndexDeps {
  /** What the build reads through (`Store.readDb`: on SQLite, a connection off the event loop). */
  db: Kysely<Database>;
  listings: ListingsRepository;
  /** Seconds another instance's write may take to show: how often the store's data version is read again. */
  readCacheSeconds: number;
  /** Logs a build that failed (the next search starts another). */
  warn: (message: string, error: unknown) => void;
}

/**
 * The search index: every active listing's searched columns in memory, in each kind's columns and orders
 * ({@link IndexedListings}), answering searches without the store but for their rows. The store stays the source
 * of truth: the index answers only while it holds the store's data version (`data_versions`, which every write
 * of listings moves, on any instance); otherwise the store answers and a new index is built in the
 * background, read in chunks from the store. A write by this process shows at once (its version is read
 * again at once), one by another instance within `readCacheSeconds`: the same freshness as the store's own answers.
 */
export class SearchIndex {
  private built: Built | null = null;
  private readonly building = new SingleFlight<'build', void>();
  private readonly dataVersion: ReadMemo<number>;
  private builds = 0;
  private failedBuilds = 0;
  private lastError: { message: string; at: Date } | null = null;

  constructor(private readonly deps: SearchIndexDeps) {
    this.dataVersion = new ReadMemo(
      deps.readCacheSeconds,
      () => deps.listings.writeCount,
      () => deps.listings.dataVersion(),
    );
  }

  /**
   * The page of `search` (inside `polygon` when given), or undefined when the index cannot answer it: it does
   * not hold the store's data version (a build is then started), or the search needs the store (`near`, DISTANCE).
   */
  async find(search: ListingSearch, ctx: SearchContext, polygon?: Outline): Promise<IndexedPage | undefined> {
    const built = await this.currentOrRebuild();
    return built?.kinds.get(search.kind)?.page(search, ctx, polygon);
  }

  /** The matches of `search` counted by the cells of `grid` ({@link IndexedListings.clusters}), or undefined when the index cannot answer (as {@link SearchIndex.find}). */
  async clusters(search: ListingSearch, ctx: SearchContext, grid: ClusterGrid, polygon?: Outline): Promise<ListingCluster[] | undefined> {
    const built = await this.currentOrRebuild();
    return built?.kinds.get(search.kind)?.clusters(search, ctx, grid, polygon);
  }

  /** One kind's listings in memory when the index holds the store's data version; undefined otherwise (a build is then started). */
  async listingsOf(kind: ListingKind): Promise<IndexedListings | undefined> {
    return (await this.currentOrRebuild())?.kinds.get(kind);
  }

  /** Builds the index unless it is current, and waits for it (a failed build is left to the next search). */
  async current(): Promise<void> {
    if (!(await this.currentOrRebuild())) await this.building.get('build');
  }

  /** The index's state ({@link SearchIndexState}). */
  state(): SearchIndexState {
    const built = this.built;
    return {
      enabled: true,
      listings: built
        ? (Object.fromEntries(LISTING_KINDS.map((kind) => [kind, built.kinds.get(kind)?.columns.size ?? 0])) as Record<ListingKind, number>)
        : null,
      dataVersion: built?.dataVersion ?? null,
      building: this.building.has('build'),
      builtAt: built?.builtAt.toISOString() ?? null,
      buildSeconds: built?.buildSeconds ?? null,
      builds: this.builds,
      failedBuilds: this.failedBuilds,
      lastError: this.lastError?.message ?? null,
      lastErrorAt: this.lastError?.at.toISOString() ?? null,
    };
  }

  private async currentOrRebuild(): Promise<Built | null> {
    const built = this.built;
    if (built && built.dataVersion === (await this.dataVersion.get())) return built;
    this.rebuild();
    return null;
  }

  private rebuild(): void {
    void this.building.run('build', async () => {
      try {
        await this.build();
        this.builds++;
      } catch (error) {
        // The store answers meanwhile; the next search tries again.
        this.failedBuilds++;
        this.lastError = { message: error instanceof Error ? error.message : String(error), at: new Date() };
        this.deps.warn('search index: build failed; the store answers searches until one succeeds', error);
      }
    });
  }

  private async build(): Promise<void> {
    const started = performance.now();
    const localWrites = this.deps.listings.writeCount;
    // Read before the rows: a write that lands during the build moves the store's version past this reading,
    // so the next search finds the index behind and builds it again.
    const dataVersion = await this.deps.listings.dataVersion();
    const { db } = this.deps;
    const counts = await db
      .selectFrom('listings')
      .select(['kind', (eb) => eb.fn.countAll<number>().as('n')])
      .where('status', '=', 'ACTIVE')
      .groupBy('kind')
      .execute();
    const builders = new Map(LISTING_KINDS.map((kind) => [kind, new ColumnsBuilder(Number(counts.find((c) => c.kind === kind)?.n ?? 0))]));
    for (let after = ''; ; ) {
      const rows = (await db
        .selectFrom('listings')
        .select([...INDEXED_ROW_COLUMNS, 'kind'])
        .where('status', '=', 'ACTIVE')
        .where('id', '>', after)
        .orderBy('id')
        .limit(CHUNK_ROWS)
        .execute()) as (IndexedRow & { kind: string })[];
      for (const kind of LISTING_KINDS) builders.get(kind)!.add(rows.filter((r) => r.kind === kind));
      if (rows.length < CHUNK_ROWS) break;
      after = rows[rows.length - 1].id as string;
    }
    for (let after: [string, string] = ['', '']; ; ) {
      const rows = await db
        .selectFrom('listing_amenities')
        .select(['listing_id', 'amenity'])
        .where((eb) => eb(eb.refTuple('listing_id', 'amenity'), '>', eb.tuple(after[0], after[1])))
        .orderBy('listing_id')
        .orderBy('amenity')
        .limit(CHUNK_ROWS)
        .execute();
      for (const builder of builders.values()) builder.addAmenities(rows);
      if (rows.length < CHUNK_ROWS) break;
      after = [rows[rows.length - 1].listing_id, rows[rows.length - 1].amenity];
    }
    const kinds = new Map<ListingKind, IndexedListings>();
    for (const [kind, builder] of builders) {
      await nextTurn();
      kinds.set(kind, new IndexedListings(builder.finish()));
    }
    this.built = { dataVersion, kinds, builtAt: new Date(), buildSeconds: Math.round(performance.now() - started) / 1000 };
    this.dataVersion.keep(dataVersion, localWrites);
  }
}
