import type { Kysely } from 'kysely';
import type { Outline } from '../domain/outline.js';
import { LISTING_KINDS, type ListingKind } from '../domain/listing.js';
import type { DataVersions, ListingsRepository } from '../store/listings-repository.js';
import type { Database } from '../store/schema.js';
import { ReadMemo } from '../lib/read-memo.js';
import { IndexedListings, type IndexedPage } from './indexed-listings.js';
import { ListingsWithDelta, type SearchableListings } from './delta-listings.js';
import { INDEXED_ROW_COLUMNS, type IndexedRow } from './listing-columns.js';
import { ColumnsBuilder } from './columns-builder.js';
import type { ListingSearch, SearchContext } from './listing-search.js';
import type { ClusterGrid } from './clusters.js';
import type { ListingCluster } from '../wire/cluster.js';
import { SingleFlight } from '../lib/single-flight.js';
import { runGivingTurns } from '../lib/stepwise.js';
import { keysetPages } from '../lib/keyset-pages.js';
import { readWritten, withWritten, type WrittenListings } from './index-delta.js';
import { DELTA_LIMIT, REBUILD_AFTER, type SearchIndexState } from './search-index-state.js';

export { NO_SEARCH_INDEX, REBUILD_AFTER, type SearchIndexState, SearchIndexStateSchema } from './search-index-state.js';

/** What the index answers from: each kind's listings at the store's data version `dataVersion`. */
interface Built {
  dataVersion: number;
  /** The store's bulk version read with it: when it moves, the index is built again. */
  bulkVersion: number;
  /** Each kind's listings as built. */
  columns: Map<ListingKind, IndexedListings>;
  /** Each kind's listings as answered: as built, or with a delta of those written since ({@link ListingsWithDelta}). */
  kinds: Map<ListingKind, SearchableListings>;
  /** Listings written since the build, held as a delta. */
  deltaListings: number;
  /** The data version the delta was last read at: the next delta reads only the rows written since. */
  deltaVersion: number;
  /** Every listing written since the build, by id, as last read (of any kind or status), with its amenities. */
  delta: WrittenListings;
  /** When the build finished, and how long it took (seconds). */
  builtAt: Date;
  buildSeconds: number;
}

export interface SearchIndexDeps {
  /** What the build reads through (`Store.readDb`: a connection that never waits behind a write). */
  db: Kysely<Database>;
  listings: ListingsRepository;
  /** Seconds another instance's write may take to show: how often the store's data version is read again. */
  readCacheSeconds: number;
  /** Logs a build that failed (the next search starts another). */
  warn: (message: string, error: unknown) => void;
  /** Logs a delta that took longer than {@link SLOW_DELTA_SECONDS}: the searches waiting on it were that much slower. */
  info?: (message: string, fields: Record<string, unknown>) => void;
}

/** A delta slower than this is logged (searches wait for it). */
const SLOW_DELTA_SECONDS = 0.1;

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
  private readonly mergingDelta = new SingleFlight<'delta', Built | null>();
  private readonly versions: ReadMemo<DataVersions>;
  private builds = 0;
  private failedBuilds = 0;
  private lastError: { message: string; at: Date } | null = null;

  constructor(private readonly deps: SearchIndexDeps) {
    this.versions = new ReadMemo(
      deps.readCacheSeconds,
      () => deps.listings.writeCount,
      () => deps.listings.dataVersions(),
    );
  }

  /**
   * The page of `search` (inside `polygon` when given), or undefined when the index cannot answer it: it does
   * not hold the store's data version (a build is then started), or the search needs the store (a sort by DISTANCE).
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
  async listingsOf(kind: ListingKind): Promise<SearchableListings | undefined> {
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
        ? (Object.fromEntries(LISTING_KINDS.map((kind) => [kind, built.kinds.get(kind)?.size ?? 0])) as Record<ListingKind, number>)
        : null,
      dataVersion: built?.dataVersion ?? null,
      building: this.building.has('build'),
      deltaListings: built?.deltaListings ?? 0,
      builtAt: built?.builtAt.toISOString() ?? null,
      buildSeconds: built?.buildSeconds ?? null,
      builds: this.builds,
      failedBuilds: this.failedBuilds,
      lastError: this.lastError?.message ?? null,
      lastErrorAt: this.lastError?.at.toISOString() ?? null,
    };
  }

  /**
   * The index at the store's data version: as it is, or with a delta of the listings written since its build when they
   * are few enough ({@link withDelta}); otherwise null, and a build is started.
   */
  private async currentOrRebuild(): Promise<Built | null> {
    const built = this.built;
    const versions = await this.versions.get();
    if (built && built.dataVersion === versions.listings) return built;
    if (built && built.bulkVersion === versions.bulk) {
      const withDelta = await this.mergingDelta
        .run('delta', () => this.withDelta(built))
        .catch((error: unknown) => {
          this.deps.warn('search index: the listings written since its build could not be read; it is built again', error);
          return null;
        });
      if (withDelta) return withDelta;
    }
    this.rebuild();
    return null;
  }

  /**
   * `built` brought to the store's data version: the listings written since its build (`data_version` above the
   * version it was built at, migration 031), with their amenities, held as a delta ({@link ListingsWithDelta}). Only
   * the rows written since the last delta are read (above `deltaVersion`) and merged by id into those it held: a sync
   * moves the version at every batch, and reading every listing written since the build again at each of them held
   * the searches that waited on it. Null when the bulk version moved or more than {@link DELTA_LIMIT} were written.
   * Starts a build in the background past {@link REBUILD_AFTER}. A failure is left to the caller's build.
   */
  private async withDelta(built: Built): Promise<Built | null> {
    const localWrites = this.deps.listings.writeCount;
    const started = performance.now();
    // Read before the rows, as a build's: rows written after it are read too, and read again by the next delta.
    const versions = await this.deps.listings.dataVersions();
    if (versions.bulk !== built.bulkVersion) return null;
    if (versions.listings === built.dataVersion) return built;
    const written = await readWritten(this.deps.db, built.delta, built.deltaVersion);
    if (!written) return null;
    const read = performance.now();
    const kinds = await withWritten(built.columns, written.listings);
    const withDelta: Built = {
      ...built,
      dataVersion: versions.listings,
      kinds,
      deltaListings: written.listings.size,
      deltaVersion: versions.listings,
      delta: written.listings,
    };
    const [readSeconds, buildSeconds] = [(read - started) / 1000, (performance.now() - read) / 1000];
    if (readSeconds + buildSeconds > SLOW_DELTA_SECONDS)
      this.deps.info?.('search index: a slow delta', {
        listings: written.listings.size,
        read: written.read,
        readSeconds,
        buildSeconds,
      });
    // A build that finished meanwhile replaced `built`: it stays, and the next search adds a delta to it.
    if (this.built === built) {
      this.built = withDelta;
      this.versions.keep(versions, localWrites);
    }
    if (written.listings.size > REBUILD_AFTER) this.rebuild();
    return withDelta;
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
    // so the next search finds the index behind and adds the listings it wrote as a delta.
    const versions = await this.deps.listings.dataVersions();
    const { db } = this.deps;
    const counts = await db
      .selectFrom('listings')
      .select(['kind', (eb) => eb.fn.countAll<number>().as('n')])
      .where('status', '=', 'ACTIVE')
      .groupBy('kind')
      .execute();
    const builders = new Map(LISTING_KINDS.map((kind) => [kind, new ColumnsBuilder(Number(counts.find((c) => c.kind === kind)?.n ?? 0))]));
    const active = keysetPages(
      '',
      (after, size) =>
        db
          .selectFrom('listings')
          .select([...INDEXED_ROW_COLUMNS, 'kind'])
          .where('status', '=', 'ACTIVE')
          .where('id', '>', after)
          .orderBy('id')
          .limit(size)
          .execute() as Promise<(IndexedRow & { kind: string })[]>,
      (row) => row.id as string,
    );
    for await (const rows of active) for (const kind of LISTING_KINDS) builders.get(kind)!.add(rows.filter((r) => r.kind === kind));
    const amenities = keysetPages(
      ['', ''] as [string, string],
      (after, size) =>
        db
          .selectFrom('listing_amenities')
          .select(['listing_id', 'amenity'])
          .where((eb) => eb(eb.refTuple('listing_id', 'amenity'), '>', eb.tuple(after[0], after[1])))
          .orderBy('listing_id')
          .orderBy('amenity')
          .limit(size)
          .execute(),
      (row): [string, string] => [row.listing_id, row.amenity],
    );
    for await (const rows of amenities) for (const builder of builders.values()) builder.addAmenities(rows);
    const columns = new Map<ListingKind, IndexedListings>();
    for (const [kind, builder] of builders) columns.set(kind, await runGivingTurns(IndexedListings.making(builder)));
    this.built = {
      dataVersion: versions.listings,
      bulkVersion: versions.bulk,
      columns,
      kinds: columns,
      deltaListings: 0,
      deltaVersion: versions.listings,
      delta: new Map(),
      builtAt: new Date(),
      buildSeconds: Math.round(performance.now() - started) / 1000,
    };
    this.versions.keep(versions, localWrites);
  }
}
