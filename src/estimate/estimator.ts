import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { type Static, Type } from 'typebox';
import { LISTING_KINDS, type ListingKind } from '../domain/listing.js';
import { ReadMemo } from '../lib/read-memo.js';
import { SingleFlight } from '../lib/single-flight.js';
import { runGivingTurns } from '../lib/stepwise.js';
import type { ListingsRepository } from '../store/listings-repository.js';
import type { Database } from '../store/schema.js';
import { Nullable } from '../wire/common.js';
import type { Estimate } from '../wire/estimate.js';
import { type ComparablePool, bathroomsOf } from './comparable-pool.js';
import { CALIBRATION_PROPERTIES, CALIBRATION_SEED, calibrating, confidenceOf, intervalOf, type IntervalCalibration } from './interval.js';
import { shuffled } from './held-out.js';
import { readPool } from './pool-reader.js';
import { estimateFor, type PointEstimate, type Subject } from './method.js';

/** The estimates' state on this instance, as /v1/health shows it and the metrics read it. */
export const EstimatesStateSchema = Type.Object({
  kinds: Type.Array(
    Type.Object({
      kind: Type.String(),
      properties: Type.Integer({
        description: 'Distinct properties the comparables are drawn from (a property listed twice counts once).',
      }),
      dataVersion: Type.Integer({ description: "The store's data version they were read at." }),
      builtAt: Type.String({ description: 'When they were read (UTC): the `asOf` of the estimates.' }),
      buildSeconds: Type.Number({ description: 'How long reading them and calibrating the interval took (seconds).' }),
      calibratedOn: Type.Integer({
        description: 'Held-out properties the 80 % interval was calibrated on (0: not enough, ±1.28 spreads).',
      }),
    }),
    { description: 'Each kind whose comparables are in memory; a kind is read on its first estimate.' },
  ),
  building: Type.Array(Type.String(), { description: 'Kinds whose comparables are being read now.' }),
  builds: Type.Integer({ description: 'Reads finished on this instance since it started.' }),
  failedBuilds: Type.Integer({ description: 'Reads that failed (the comparables in hand answered meanwhile, or the estimate failed).' }),
  lastError: Nullable(Type.String({ description: "The last failed read's cause." })),
  lastErrorAt: Nullable(Type.String({ description: 'When it failed (UTC).' })),
});
export type EstimatesState = Static<typeof EstimatesStateSchema>;

/** One kind's properties as read at the store's data version `dataVersion`, with the interval calibrated on them. */
export interface EstimateModel {
  dataVersion: number;
  pool: ComparablePool;
  calibration: IntervalCalibration;
  builtAt: Date;
  /** Seconds the read and the calibration took. */
  buildSeconds: number;
}

/** A listing's facts as the estimate of it needs them (a row of the listings table). */
export interface ListedProperty {
  id: string;
  kind: string;
  price: number;
  latitude: number | null;
  longitude: number | null;
  bedroom_count: number | null;
  full_bathroom_count: number | null;
  half_bathroom_count: number | null;
  sqft: number | null;
  building_type: string | null;
}

export interface EstimatorDeps {
  /** What the pool is read through (`Store.readDb`). */
  db: Kysely<Database>;
  listings: ListingsRepository;
  /** Seconds another instance's write may take to show: how often the store's data version is read again. */
  readCacheSeconds: number;
  /**
   * The least age (seconds) of a kind's model before a write has it built again in the background (ESTIMATE_REFRESH_SECONDS).
   * During a sync the data version moves at every scope's write and every hydration batch, and each build read and
   * sorted the whole kind again, holding the event loop each time, about ten times a sync (figures in docs/benchmark-history.md).
   */
  refreshSeconds: number;
  /** The service's clock (UTC): a model's age, and its `builtAt`. */
  clock: () => Date;
  /** Logs a rebuild that failed (the model in hand keeps answering; the next estimate tries again). */
  warn: (message: string, error: unknown) => void;
}

/** The model of a pool: its interval calibrated on {@link CALIBRATION_PROPERTIES} of its properties drawn by {@link CALIBRATION_SEED}. */
export async function calibratedModel(pool: ComparablePool, dataVersion: number, builtAt: Date): Promise<EstimateModel> {
  // With turns of the event loop: requests go on being answered while the service calibrates.
  const calibration = await runGivingTurns(calibrating(pool, shuffled(pool.size, CALIBRATION_SEED).slice(0, CALIBRATION_PROPERTIES)));
  return { dataVersion, pool, calibration, builtAt, buildSeconds: 0 };
}

/** The answer of an estimate: the point estimate with its interval, confidence and comparables (docs/estimates.md). */
export function presentEstimate(model: EstimateModel, found: PointEstimate, askingPrice: number | null): Estimate {
  const { pool } = model;
  const comparables = [...found.comparables]
    .sort((a, b) => b.weight - a.weight || a.distance - b.distance || a.property - b.property)
    .map((c) => ({
      id: pool.idOf(c.property),
      listingCount: pool.listingCounts[c.property],
      geoPoint: pool.pointOf(c.property),
      bedroomCount: Number.isNaN(pool.bedrooms[c.property]) ? null : pool.bedrooms[c.property],
      bathrooms: Number.isNaN(pool.bathrooms[c.property]) ? null : pool.bathrooms[c.property],
      sqft: Number.isNaN(pool.sqft[c.property]) ? null : Math.round(pool.sqft[c.property]),
      buildingType: pool.buildingTypeOf(c.property),
      distance: Math.round(c.distance),
      similarity: Math.round(c.weight * 1000) / 10,
      price: Math.round(c.price),
      adjustedPrice: Math.round(c.adjustedPrice),
      adjustments: { size: Math.round(c.adjustments.size), layout: Math.round(c.adjustments.layout), time: Math.round(c.adjustments.time) },
    }));
  const common = {
    kind: pool.kind,
    method: found.method,
    radius: found.radius,
    asOf: model.builtAt.toISOString(),
    comparables,
    place: null,
  };
  if (found.estimate === null) {
    return { ...common, estimate: null, low: null, high: null, confidence: null, pricePosition: null, reason: found.reason };
  }
  const estimate = Math.round(found.estimate);
  const { low, high } = intervalOf(estimate, found.spread, model.calibration);
  return {
    ...common,
    estimate,
    low,
    high,
    confidence: confidenceOf(estimate, low, high, comparables.length),
    pricePosition: askingPrice === null ? null : pricePositionOf(askingPrice, estimate),
    reason: null,
  };
}

/**
 * How far an asking price is from the estimate (both dollars, the estimate rounded to a dollar as answered), in
 * percent to a tenth: `-5` is 5 % under. The listing detail's `pricePosition` and the stored one (valuation.ts).
 */
export function pricePositionOf(askingPrice: number, estimate: number): number {
  return Math.round(((askingPrice - estimate) / estimate) * 1000) / 10;
}

/**
 * The point estimate of a listing of the mirror by `model`: never from the listing itself nor from another listing
 * of the same property; null (with the reason) when its position is unknown.
 */
export function estimateOfListing(model: EstimateModel, listing: ListedProperty): PointEstimate {
  if (listing.latitude === null || listing.longitude === null) {
    return { estimate: null, spread: null, method: 'same-layout-weighted-median', comparables: [], radius: 0, reason: 'position unknown' };
  }
  return estimateFor(model.pool, {
    kind: model.pool.kind,
    point: { latitude: listing.latitude, longitude: listing.longitude },
    bedrooms: listing.bedroom_count,
    bathrooms: bathroomsOf(listing.full_bathroom_count, listing.half_bathroom_count),
    sqft: listing.sqft !== null && listing.sqft > 0 ? listing.sqft : null,
    buildingType: listing.building_type,
    exclude: model.pool.propertyOfListing(listing.id) ?? sameProperty(model.pool, listing),
  });
}

/**
 * Estimates what properties are worth from the mirror's active listings ({@link estimateFor}). Each kind's pool is read
 * from the store and kept while the store's data version is unchanged; when it moves, the pool in hand answers
 * (its `asOf` says when it was read), and once it is {@link EstimatorDeps.refreshSeconds} old a new one is built in the
 * background (stale-while-revalidate). The first estimate of a kind waits for its pool.
 */
export class Estimator {
  private readonly models = new Map<ListingKind, EstimateModel>();
  private readonly building = new SingleFlight<ListingKind, EstimateModel>();
  private readonly dataVersion: ReadMemo<number>;
  private builds = 0;
  private failedBuilds = 0;
  private lastError: { message: string; at: Date } | null = null;

  constructor(private readonly deps: EstimatorDeps) {
    this.dataVersion = new ReadMemo(
      deps.readCacheSeconds,
      () => deps.listings.writeCount,
      () => deps.listings.dataVersion(),
    );
  }

  /** The model of `kind`: the one in hand, rebuilt in the background when the store moved on; built and waited for when none. */
  async model(kind: ListingKind): Promise<EstimateModel> {
    const version = await this.dataVersion.get();
    const kept = this.models.get(kind);
    if (kept && (kept.dataVersion === version || this.young(kept))) return kept;
    const build = this.building.run(kind, () => this.build(kind));
    if (!kept) return build;
    build.catch(() => undefined);
    return kept;
  }

  /**
   * The model of `kind` at the store's data version read now: the one in hand when it is that recent, else a new one
   * built and waited for (what the valuation values with, valuation.ts).
   */
  async current(kind: ListingKind): Promise<EstimateModel> {
    const version = await this.deps.listings.dataVersion();
    const kept = this.models.get(kind);
    if (kept && kept.dataVersion >= version) return kept;
    const built = await this.building.run(kind, () => this.build(kind));
    // A build already under way may have read an earlier version.
    return built.dataVersion >= version ? built : this.building.run(kind, () => this.build(kind));
  }

  /** Whether `model` is younger than {@link EstimatorDeps.refreshSeconds}: it answers though the store moved on. */
  private young(model: EstimateModel): boolean {
    return this.deps.clock().getTime() - model.builtAt.getTime() < this.deps.refreshSeconds * 1000;
  }

  /** The state of the comparables in memory ({@link EstimatesStateSchema}). */
  state(): EstimatesState {
    return {
      kinds: [...this.models.values()].map((m) => ({
        kind: m.pool.kind,
        properties: m.pool.size,
        dataVersion: m.dataVersion,
        builtAt: m.builtAt.toISOString(),
        buildSeconds: m.buildSeconds,
        calibratedOn: m.calibration.properties,
      })),
      building: LISTING_KINDS.filter((kind) => this.building.has(kind)),
      builds: this.builds,
      failedBuilds: this.failedBuilds,
      lastError: this.lastError?.message ?? null,
      lastErrorAt: this.lastError?.at.toISOString() ?? null,
    };
  }

  private async build(kind: ListingKind): Promise<EstimateModel> {
    const started = performance.now();
    try {
      // Read before the rows: a write landing meanwhile moves the version past this reading, and the next estimate rebuilds.
      const dataVersion = await this.deps.listings.dataVersion();
      const builtAt = this.deps.clock();
      const pool = await readPool(this.deps.db, kind);
      await nextTurn();
      const model = await calibratedModel(pool, dataVersion, builtAt);
      model.buildSeconds = Math.round(performance.now() - started) / 1000;
      this.models.set(kind, model);
      this.builds++;
      return model;
    } catch (error) {
      this.failedBuilds++;
      this.lastError = { message: error instanceof Error ? error.message : String(error), at: new Date() };
      this.deps.warn(`estimates: reading the ${kind} comparables failed; those in hand answer, and the next estimate tries again`, error);
      throw error;
    }
  }

  /**
   * The estimate of a listing of the mirror, with its asking price's position: never from the listing itself nor from
   * another listing of the same property. A listing without a position has no estimate (reason given).
   */
  async ofListing(listing: ListedProperty): Promise<Estimate> {
    const model = await this.model(listing.kind as ListingKind);
    return presentEstimate(model, estimateOfListing(model, listing), Number(listing.price));
  }

  /** The estimate of a property not listed (or not read into the pool yet), from what the caller says of it. */
  async ofProperty(subject: Omit<Subject, 'exclude'>): Promise<Estimate> {
    const model = await this.model(subject.kind);
    return presentEstimate(model, estimateFor(model.pool, subject), null);
  }
}

/**
 * The property of the pool a listing not in it (not active, or written after the pool was read) would be a copy of:
 * the same point, layout and price; undefined when none.
 */
function sameProperty(pool: ComparablePool, listing: ListedProperty): number | undefined {
  if (listing.latitude === null || listing.longitude === null) return undefined;
  const bathrooms = bathroomsOf(listing.full_bathroom_count, listing.half_bathroom_count) ?? Number.NaN;
  const bedrooms = listing.bedroom_count ?? Number.NaN;
  const price = Number(listing.price);
  const near = pool.nearest(
    { latitude: listing.latitude, longitude: listing.longitude },
    (h) =>
      pool.pointOf(h).latitude === listing.latitude &&
      pool.pointOf(h).longitude === listing.longitude &&
      pool.prices[h] === price &&
      Object.is(pool.bedrooms[h], bedrooms) &&
      Object.is(pool.bathrooms[h], bathrooms),
    1,
    1,
  );
  return near[0]?.property;
}

export { activeListingChunks } from './pool-reader.js';
