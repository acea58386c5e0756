import { runNow, type Steps } from '../lib/stepwise.js';
import type { ComparablePool } from './comparable-pool.js';
import { heldOut } from './held-out.js';
import { estimateFor } from './method.js';

/** Where the interval's ends lie, in spreads from the estimate (natural log): low at `low` (≤ 0), high at `high` (≥ 0). */
export interface IntervalCalibration {
  low: number;
  high: number;
  /** How many held-out properties it was measured on. */
  properties: number;
}

/** The share of true prices the interval is meant to hold. */
export const INTERVAL_SHARE = 0.8;
/** Properties held out to calibrate the interval, at most. */
export const CALIBRATION_PROPERTIES = 2000;
/** The seed the service draws its calibration properties with. */
export const CALIBRATION_SEED = 20_161;
/** Used while a kind has too few properties to calibrate on: ±1.28 spreads, the 80 % interval of a normal law. */
const UNCALIBRATED: IntervalCalibration = { low: -1.28, high: 1.28, properties: 0 };

/** The `q`-quantile (0-1) of ascending `sorted`, by linear interpolation. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - below);
}

/**
 * Calibrates the interval on `properties` of the pool, each estimated without itself: the 10th and 90th percentiles
 * of ln(true price / estimate) / spread, so that {@link INTERVAL_SHARE} of held-out prices fall inside. Fewer
 * than 100 estimated properties: the normal law's ±1.28 spreads.
 */
export function calibrate(pool: ComparablePool, properties: readonly number[]): IntervalCalibration {
  return runNow(calibrating(pool, properties));
}

/** Properties estimated between two turns of the event loop while the service calibrates (see {@link calibrating}). */
const PROPERTIES_A_STEP = 100;

/**
 * {@link calibrate} in steps of {@link PROPERTIES_A_STEP} properties: the service's 2,000 estimates in one piece held the event
 * loop after each change of the listings, and every request waited behind them (docs/benchmark-history.md, the soak).
 */
export function* calibrating(pool: ComparablePool, properties: readonly number[]): Steps<IntervalCalibration> {
  const scores: number[] = [];
  for (const [i, property] of properties.entries()) {
    if (i > 0 && i % PROPERTIES_A_STEP === 0) yield;
    const found = estimateFor(pool, heldOut(pool, property));
    if (found.estimate === null) continue;
    scores.push(Math.log(pool.prices[property] / found.estimate) / found.spread);
  }
  if (scores.length < 100) return UNCALIBRATED;
  scores.sort((a, b) => a - b);
  const tail = (1 - INTERVAL_SHARE) / 2;
  return { low: Math.min(0, quantile(scores, tail)), high: Math.max(0, quantile(scores, 1 - tail)), properties: scores.length };
}

/** The interval's ends in dollars, rounded outward to whole dollars: they always hold the estimate. */
export function intervalOf(estimate: number, spread: number, calibration: IntervalCalibration): { low: number; high: number } {
  return {
    low: Math.min(estimate, Math.floor(estimate * Math.exp(calibration.low * spread))),
    high: Math.max(estimate, Math.ceil(estimate * Math.exp(calibration.high * spread))),
  };
}

/** How far to trust an estimate: by the interval's width relative to the estimate and the number of comparables. */
export type Confidence = 'high' | 'medium' | 'low';

/**
 * `high` when the interval is at most 20 % of the estimate wide and 8 or more comparables agree; `medium` at
 * most 50 % wide with 5 or more; `low` otherwise. The width carries the comparables' spread.
 */
export function confidenceOf(estimate: number, low: number, high: number, comparables: number): Confidence {
  const width = (high - low) / estimate;
  if (width <= 0.2 && comparables >= 8) return 'high';
  if (width <= 0.5 && comparables >= 5) return 'medium';
  return 'low';
}
