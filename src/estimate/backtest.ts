import { BOROUGHS } from '../domain/area.js';
import type { ComparablePool } from './comparable-pool.js';
import { heldOut, shuffled } from './held-out.js';
import { CALIBRATION_PROPERTIES, calibrate, intervalOf, quantile } from './interval.js';
import { estimateFor } from './method.js';

/** How one way of estimating did on the held-out properties of a kind and place. */
export interface BacktestFigures {
  /** Held-out properties. */
  count: number;
  /** Of them, how many got an estimate. */
  estimated: number;
  /** Median absolute percentage error, percent, over the estimated properties; null when none. */
  mdape: number | null;
  /** Percent of the estimated properties within 5 %, 10 % and 20 % of their true price. */
  within5: number | null;
  within10: number | null;
  within20: number | null;
  /** Percent of the estimated properties whose true price lies inside the 80 % interval; null for a baseline (it has none). */
  coverage: number | null;
}

/** The backtest of one kind in one place (a borough's name, or "City"): the method and both baselines. */
export interface BacktestRow {
  kind: string;
  place: string;
  method: BacktestFigures;
  /** The median price of the other properties of a wide group: for listings, the same borough and bedrooms. */
  areaMedian: BacktestFigures;
  /** The median price of a few properties close by: for listings, the 10 nearest others with the same bedrooms and bathrooms. */
  nearbyMedian: BacktestFigures;
  /** What the two baselines are for this kind, in words (the Markdown table's headings). */
  baselines: { areaMedian: string; nearbyMedian: string };
}

/** The baselines of the listings' backtest. */
export const LISTING_BASELINES = { areaMedian: 'borough and bedrooms median', nearbyMedian: '10 nearest same layout' };

export interface BacktestOptions {
  seed: number;
  /** Held-out properties a kind, at most (all the properties left after calibration when fewer). */
  sample: number;
}

/** One held-out property: its true price, the estimate (null when none) and whether the interval held the truth. */
export interface Outcome {
  truth: number;
  estimate: number | null;
  inside?: boolean;
}

/** Percent, one decimal. */
const percent = (part: number, whole: number) => Math.round((1000 * part) / whole) / 10;

/** The figures of a set of outcomes; `withInterval`: the coverage too (a baseline has no interval). */
export function figures(outcomes: readonly Outcome[], withInterval: boolean): BacktestFigures {
  const estimated = outcomes.filter((o): o is Outcome & { estimate: number } => o.estimate !== null);
  const errors = estimated.map((o) => Math.abs(o.estimate - o.truth) / o.truth).sort((a, b) => a - b);
  const share = (limit: number) => (errors.length ? percent(errors.filter((e) => e <= limit).length, errors.length) : null);
  return {
    count: outcomes.length,
    estimated: estimated.length,
    mdape: errors.length ? Math.round(quantile(errors, 0.5) * 1000) / 10 : null,
    within5: share(0.05),
    within10: share(0.1),
    within20: share(0.2),
    coverage: withInterval && estimated.length ? percent(estimated.filter((o) => o.inside).length, estimated.length) : null,
  };
}

/** The median of ascending `sorted` without one element equal to `value` (which it holds); null when nothing is left. */
function medianWithout(sorted: readonly number[], value: number): number | null {
  const n = sorted.length - 1;
  if (n <= 0) return null;
  let skip = 0;
  for (let hi = sorted.length; skip < hi; ) {
    const mid = (skip + hi) >> 1;
    if (sorted[mid] < value) skip = mid + 1;
    else hi = mid;
  }
  const at = (k: number) => (k < skip ? sorted[k] : sorted[k + 1]);
  return n % 2 ? at(n >> 1) : (at(n / 2 - 1) + at(n / 2)) / 2;
}

/**
 * Backtests the estimates of one kind on its pool, reproducibly by seed: the properties are shuffled by the seed; the
 * first {@link CALIBRATION_PROPERTIES} (at most half) calibrate the interval, the next `sample` are held out and each
 * estimated without itself or any copy of its listing, by the method and by both baselines. Figures by borough
 * and for the city.
 */
export function backtest(pool: ComparablePool, options: BacktestOptions): BacktestRow[] {
  const order = shuffled(pool.size, options.seed);
  const calibrationSize = Math.min(CALIBRATION_PROPERTIES, Math.floor(pool.size / 2));
  const calibration = calibrate(pool, order.slice(0, calibrationSize));
  const held = order.slice(calibrationSize, calibrationSize + options.sample);

  const pricesByBoroughBedrooms = new Map<string, number[]>();
  for (let property = 0; property < pool.size; property++) {
    const key = `${pool.boroughs[property]}|${pool.bedrooms[property]}`;
    const list = pricesByBoroughBedrooms.get(key);
    if (list) list.push(pool.prices[property]);
    else pricesByBoroughBedrooms.set(key, [pool.prices[property]]);
  }
  for (const list of pricesByBoroughBedrooms.values()) list.sort((a, b) => a - b);

  const byPlace = new Map<string, { method: Outcome[]; borough: Outcome[]; nearest: Outcome[] }>();
  const outcomesOf = (place: string) => {
    let outcomes = byPlace.get(place);
    if (!outcomes) {
      outcomes = { method: [], borough: [], nearest: [] };
      byPlace.set(place, outcomes);
    }
    return outcomes;
  };
  for (const property of held) {
    const truth = pool.prices[property];
    const subject = heldOut(pool, property);
    const found = estimateFor(pool, subject);
    const method: Outcome =
      found.estimate === null
        ? { truth, estimate: null }
        : (() => {
            const { low, high } = intervalOf(found.estimate, found.spread, calibration);
            return { truth, estimate: found.estimate, inside: truth >= low && truth <= high };
          })();
    const sameBoroughBedrooms = Number.isNaN(pool.bedrooms[property])
      ? undefined
      : pricesByBoroughBedrooms.get(`${pool.boroughs[property]}|${pool.bedrooms[property]}`);
    const borough: Outcome = { truth, estimate: sameBoroughBedrooms ? medianWithout(sameBoroughBedrooms, truth) : null };
    const tenNearest = pool
      .nearest(
        subject.point,
        (h) => h !== property && pool.bedrooms[h] === pool.bedrooms[property] && pool.bathrooms[h] === pool.bathrooms[property],
        10,
        Number.POSITIVE_INFINITY,
      )
      .map((n) => pool.prices[n.property])
      .sort((a, b) => a - b);
    const nearest: Outcome = { truth, estimate: tenNearest.length ? quantile(tenNearest, 0.5) : null };
    for (const place of ['City', BOROUGHS[pool.boroughs[property]] ?? 'Unknown']) {
      const outcomes = outcomesOf(place);
      outcomes.method.push(method);
      outcomes.borough.push(borough);
      outcomes.nearest.push(nearest);
    }
  }
  const places = ['City', ...Object.values(BOROUGHS)].filter((place) => byPlace.has(place));
  return places.map((place) => {
    const outcomes = byPlace.get(place)!;
    return {
      kind: pool.kind,
      place,
      method: figures(outcomes.method, true),
      areaMedian: figures(outcomes.borough, false),
      nearbyMedian: figures(outcomes.nearest, false),
      baselines: LISTING_BASELINES,
    };
  });
}

/**
 * The backtest as Markdown: one line a kind and place, each way of estimating side by side; a table for each set of
 * baselines (listings' and recorded sales' differ), each under its own headings.
 */
export function backtestMarkdown(rows: readonly BacktestRow[]): string {
  const cell = (v: number | null, suffix = ' %') => (v === null ? '–' : `${v}${suffix}`);
  const tables: string[][] = [];
  let heading = '';
  for (const r of rows) {
    const names = `${r.baselines.areaMedian}: MdAPE | ${r.baselines.nearbyMedian}: MdAPE`;
    if (names !== heading) {
      heading = names;
      tables.push([
        `| kind | place | held out | estimated | MdAPE | within 5 % | within 10 % | within 20 % | in 80 % interval | ${names} |`,
        '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ]);
    }
    const m = r.method;
    tables[tables.length - 1].push(
      `| ${r.kind} | ${r.place} | ${m.count} | ${m.estimated} | ${cell(m.mdape)} | ${cell(m.within5)} | ${cell(m.within10)} | ${cell(m.within20)} | ${cell(m.coverage)} | ${cell(r.areaMedian.mdape)} | ${cell(r.nearbyMedian.mdape)} |`,
    );
  }
  return tables.map((lines) => lines.join('\n')).join('\n\n');
}
