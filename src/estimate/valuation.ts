import { ExponentialBackoff, handleAll, retry } from 'cockatiel';
import type { Kysely } from 'kysely';
import { type Static, Type } from 'typebox';
import { LISTING_KINDS, type ListingKind } from '../domain/listing.js';
import type { ListingsRepository } from '../store/listings-repository.js';
import type { Database } from '../store/schema.js';
import { Nullable } from '../wire/common.js';
import { activeListingChunks, type Estimator, estimateOfListing, pricePositionOf } from './estimator.js';
import { turnTaker } from '../lib/stepwise.js';

/** Price positions written a statement: on SQLite a statement holds the event loop, and requests wait for it whole. */
const WRITE_ROWS = 1_000;

/** The longest the valuation computes without letting requests be served (milliseconds). */
const SLICE_MS = 10;

/** A kind's valuation is tried this many times (the first included) before it is given up until the next run. */
const ATTEMPTS = 3;

/** The valuation's state on this instance, as /v1/health shows it and the metrics read it. */
export const ValuationStateSchema = Type.Object({
  enabled: Type.Boolean({
    description: 'Whether this instance values listings after each sync (PRICE_POSITIONS; never an API-only instance, whose worker does).',
  }),
  running: Type.Boolean(),
  runs: Type.Integer({ description: 'Runs finished since the instance started (a run values both kinds).' }),
  failedRuns: Type.Integer({ description: 'Runs in which a kind was given up after its attempts (the other kind went on).' }),
  lastRunAt: Nullable(Type.String({ description: 'When the last run ended (UTC).' })),
  lastRunSeconds: Nullable(Type.Number({ description: 'How long it took (seconds).' })),
  lastValued: Type.Integer({ description: 'Active listings the last run valued.' }),
  lastChanged: Type.Integer({ description: 'Of those, the listings whose stored price position it changed.' }),
  lastError: Nullable(Type.String({ description: "The last failure's cause." })),
  lastErrorAt: Nullable(Type.String({ description: 'When it failed (UTC).' })),
});
export type ValuationState = Static<typeof ValuationStateSchema>;

export interface ValuationDeps {
  /** What the listings are read through (`Store.readDb`). */
  db: Kysely<Database>;
  /** Where the positions are written. */
  listings: ListingsRepository;
  estimator: Estimator;
  /** False: {@link Valuation.run} does nothing (PRICE_POSITIONS off). */
  enabled: boolean;
  /** Logs a kind given up (the positions stored before stay until the next run). */
  warn: (message: string, error: unknown) => void;
  clock: () => Date;
}

/**
 * Stores every active listing's price position (`listings.price_position`, migration 030): how far its asking price
 * is from the estimate of it, computed as the listing's detail computes it ({@link estimateOfListing},
 * {@link pricePositionOf}) by the model at the store's data version of the run. Only positions that changed are
 * written, in one transaction a kind that moves the data version (the search index and the answer caches then hold
 * the new figures). Runs after each sync (runtime.ts) and from `nyc-listings estimate value`; single flight. A crawl
 * that changes a listing's price clears its position until the next run.
 */
export class Valuation {
  private running: Promise<void> | null = null;
  private runs = 0;
  private failedRuns = 0;
  private last: { at: Date; seconds: number; valued: number; changed: number } | null = null;
  private lastError: { message: string; at: Date } | null = null;

  constructor(private readonly deps: ValuationDeps) {}

  /** Values both kinds' active listings; never throws (a kind given up is logged and shown in the state). Joins a run under way. */
  run(): Promise<void> {
    if (!this.deps.enabled) return Promise.resolve();
    this.running ??= this.valueAll().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** The state shown in /v1/health and the metrics ({@link ValuationStateSchema}). */
  state(): ValuationState {
    return {
      enabled: this.deps.enabled,
      running: this.running !== null,
      runs: this.runs,
      failedRuns: this.failedRuns,
      lastRunAt: this.last?.at.toISOString() ?? null,
      lastRunSeconds: this.last?.seconds ?? null,
      lastValued: this.last?.valued ?? 0,
      lastChanged: this.last?.changed ?? 0,
      lastError: this.lastError?.message ?? null,
      lastErrorAt: this.lastError?.at.toISOString() ?? null,
    };
  }

  private async valueAll(): Promise<void> {
    const started = performance.now();
    const tally = { valued: 0, changed: 0 };
    let failed = false;
    // A store that is briefly unavailable (a busy SQLite file, a PostgreSQL failover) is waited out.
    const policy = retry(handleAll, { maxAttempts: ATTEMPTS - 1, backoff: new ExponentialBackoff({ initialDelay: 500, maxDelay: 5_000 }) });
    for (const kind of LISTING_KINDS) {
      try {
        const { valued, changed } = await policy.execute(() => this.value(kind));
        tally.valued += valued;
        tally.changed += changed;
      } catch (error) {
        failed = true;
        this.lastError = { message: error instanceof Error ? error.message : String(error), at: this.deps.clock() };
        this.deps.warn(`valuation: the ${kind} price positions could not be stored after ${ATTEMPTS} attempts; those stored stay`, error);
      }
    }
    this.runs++;
    if (failed) this.failedRuns++;
    this.last = { at: this.deps.clock(), seconds: Math.round(performance.now() - started) / 1000, ...tally };
  }

  /** Values one kind: reads its active listings a chunk at a time, writes the positions that changed. */
  private async value(kind: ListingKind): Promise<{ valued: number; changed: number }> {
    const model = await this.deps.estimator.current(kind);
    const changes: { id: string; position: number | null }[] = [];
    let valued = 0;
    const turn = turnTaker(SLICE_MS);
    for await (const chunk of activeListingChunks(this.deps.db, kind)) {
      for (const listing of chunk) {
        const found = estimateOfListing(model, listing);
        const position = found.estimate === null ? null : pricePositionOf(Number(listing.price), Math.round(found.estimate));
        const stored = listing.price_position === null ? null : Number(listing.price_position);
        if (stored !== position) changes.push({ id: listing.id, position });
        await turn();
      }
      valued += chunk.length;
    }
    await this.deps.listings.storePricePositions(changes, WRITE_ROWS);
    return { valued, changed: changes.length };
  }
}
