import type { Kysely } from 'kysely';
import { BOROUGHS } from '../domain/area.js';
import type { Database } from '../store/schema.js';
import { type BacktestRow, figures, type Outcome } from './backtest.js';
import { INTERVAL_SHARE, quantile } from './interval.js';
import { MIN_SPREAD } from './method.js';

/**
 * Building class categories of properties sold one at a time (the Department of Finance's codes): one-, two- and
 * three-family houses, co-op and condo apartments. Rentals, stores, land and parking are left out.
 */
export const RESIDENTIAL_CATEGORIES = ['01', '02', '03', '09', '10', '12', '13', '17'] as const;

/** A recorded sale as the backtest reads it: dollars, the day of sale (UTC). */
export interface RecordedSaleFacts {
  borough_id: number;
  neighborhood: string | null;
  block: number | null;
  address: string | null;
  apartment_number: string | null;
  building_class_category: string;
  sale_price: number;
  sale_date: string;
}

/** Reads the recorded sales of properties with a consideration (a price of $10,000 or more), oldest first. */
export async function readRecordedSales(db: Kysely<Database>): Promise<RecordedSaleFacts[]> {
  const rows = await db
    .selectFrom('recorded_sales')
    .select(['borough_id', 'neighborhood', 'block', 'address', 'apartment_number', 'building_class_category', 'sale_price', 'sale_date'])
    .where('no_consideration', '=', 0)
    .where('sale_price', 'is not', null)
    .where((eb) => eb.or(RESIDENTIAL_CATEGORIES.map((code) => eb('building_class_category', 'like', `${code} %`))))
    .orderBy('sale_date')
    .orderBy('id')
    .execute();
  return rows as RecordedSaleFacts[];
}

/** Comparables needed at each level before a wider one is tried: the same apartment line, building, block, neighbourhood. */
const MIN_AT_LEVEL = [1, 2, 3, 3] as const;
/** The most recent comparables of a level that are used. */
const RECENT = 20;
/** Sales a borough and category need in a month for its median to index prices by time. */
const INDEX_MIN_SALES = 20;

/** The interval while a borough has fewer than 100 sales estimated so far (at any level): ±1.28 spreads, a normal law's 80 %. */
const UNCALIBRATED = { low: -1.28, high: 1.28 };
/** Earlier scores a calibration needs: fewer at a borough's level, the borough's calibration over every level serves. */
const MIN_CALIBRATION_SCORES = 100;

/** The category's code (`10 COOPS - ELEVATOR APARTMENTS` -> `10`). */
const categoryOf = (sale: RecordedSaleFacts) => sale.building_class_category.slice(0, 2);
const monthOf = (sale: RecordedSaleFacts) => sale.sale_date.slice(0, 7);
const median = (sorted: readonly number[]) => quantile(sorted, 0.5);

/**
 * The time-split backtest of recorded sales (docs/estimates.md): month by month, each sale of a property is estimated
 * from the sales recorded before its month only. The method: the 20 most recent earlier sales of the same
 * category in the same apartment line of its building (at least 1), else the same building (2), else the same tax
 * block (3), else the same neighbourhood (3), each
 * price carried to the month before the sale's by the monthly median of its borough and category (a month with
 * at least 20 sales; the nearest earlier such month otherwise); their median, with an 80 % interval whose width is
 * calibrated on the sales of the borough estimated in the months before from the same level (a line's comparables
 * spread less than a neighbourhood's, and miss differently), or on all the borough's when that level had fewer
 * than 100. Baselines: the median of every earlier sale of the same borough and category (a
 * recorded sale has no bedroom count), and of the 10 most recent of the same neighbourhood and category. The first
 * `warmUpMonths` months are only learned from.
 */
export function recordedSalesBacktest(sales: readonly RecordedSaleFacts[], warmUpMonths = 3): BacktestRow[] {
  const byMonth = new Map<string, RecordedSaleFacts[]>();
  for (const sale of sales) pushTo(byMonth, monthOf(sale), sale);
  const state: BacktestState = {
    months: [...byMonth.keys()].sort(),
    earlier: new Map(),
    index: new Map(),
    boroughPrices: new Map(),
    scores: new Map(),
    outcomes: new Map(),
  };
  for (const [m, month] of state.months.entries()) {
    const targets = byMonth.get(month)!;
    if (m >= warmUpMonths) estimateMonth(state, targets, state.months[m - 1]);
    // The month is learned from only once it is over: its sales become comparables of the next months.
    learnMonth(state, targets, month);
  }
  const places = ['City', ...Object.values(BOROUGHS)].filter((place) => state.outcomes.has(place));
  return places.map((place) => {
    const o = state.outcomes.get(place)!;
    return {
      kind: 'recorded sale',
      place,
      method: figures(o.method, true),
      areaMedian: figures(o.borough, false),
      nearbyMedian: figures(o.nearest, false),
      baselines: RECORDED_SALE_BASELINES,
    };
  });
}

/** What the backtest has learned by a month: the months, earlier sales by key, the price index, the calibration, the outcomes. */
interface BacktestState {
  months: string[];
  /** Earlier sales by key (apartment line, building, block, neighbourhood), in the order recorded. */
  earlier: Map<string, RecordedSaleFacts[]>;
  /** Each borough and category's monthly median, for the months with enough sales. */
  index: Map<string, number>;
  /** Every earlier price of each borough and category. */
  boroughPrices: Map<string, number[]>;
  /** ln(true / estimate) / spread of the months estimated so far, by borough and level (`2|0`) and by borough (`2`): the interval's calibration. */
  scores: Map<string, number[]>;
  /** Each place's outcomes of the method and the two baselines. */
  outcomes: Map<string, { method: Outcome[]; borough: Outcome[]; nearest: Outcome[] }>;
}

/** Appends `value` to the list of `key` in `map`. */
function pushTo<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The borough and category's price index at `month`: its median, or the nearest earlier month's that has one. */
function indexAt(state: BacktestState, boroughCategory: string, month: string): number | undefined {
  for (let i = state.months.indexOf(month); i >= 0; i--) {
    const found = state.index.get(`${boroughCategory}|${state.months[i]}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Each calibration with enough scores: the quantiles of the interval's share, widened to hold 0. */
function calibrationsOf(scores: Map<string, number[]>): Map<string, { low: number; high: number }> {
  const tail = (1 - INTERVAL_SHARE) / 2;
  return new Map(
    [...scores]
      .filter(([, list]) => list.length >= MIN_CALIBRATION_SCORES)
      .map(([key, list]) => {
        const sorted = [...list].sort((a, b) => a - b);
        return [key, { low: Math.min(0, quantile(sorted, tail)), high: Math.max(0, quantile(sorted, 1 - tail)) }];
      }),
  );
}

/** Estimates each sale of a month (`targets`) from what was learned up to `lastMonth`, and scores the method's intervals. */
function estimateMonth(state: BacktestState, targets: readonly RecordedSaleFacts[], lastMonth: string): void {
  const calibrations = calibrationsOf(state.scores);
  const monthScores: { borough: number; level: number; score: number }[] = [];
  const sortedBorough = new Map<string, number[]>();
  for (const sale of targets) {
    const boroughCategory = `${sale.borough_id}|${categoryOf(sale)}`;
    const building = `${boroughCategory}|b|${sale.block}|${normalAddress(sale.address)}`;
    const neighbourhood = `${boroughCategory}|n|${sale.neighborhood}`;
    const levels = [`${building}|u|${lineOf(sale.apartment_number)}`, building, `${boroughCategory}|k|${sale.block}`, neighbourhood].map(
      (key) => state.earlier.get(key) ?? [],
    );
    const level = levels.findIndex((list, i) => list.length >= MIN_AT_LEVEL[i]);
    const truth = Number(sale.sale_price);
    let method: Outcome = { truth, estimate: null };
    if (level >= 0) {
      const calibration = calibrations.get(`${sale.borough_id}|${level}`) ?? calibrations.get(`${sale.borough_id}`) ?? UNCALIBRATED;
      const found = methodEstimate(state, levels[level], boroughCategory, lastMonth, calibration, truth);
      method = found.outcome;
      monthScores.push({ borough: sale.borough_id, level, score: found.score });
    }
    let sorted = sortedBorough.get(boroughCategory);
    if (!sorted) {
      sorted = [...(state.boroughPrices.get(boroughCategory) ?? [])].sort((a, b) => a - b);
      sortedBorough.set(boroughCategory, sorted);
    }
    const borough: Outcome = { truth, estimate: sorted.length ? median(sorted) : null };
    const recent = (state.earlier.get(neighbourhood) ?? [])
      .slice(-RECENT)
      .map((c) => Number(c.sale_price))
      .sort((a, b) => a - b);
    const nearest: Outcome = { truth, estimate: recent.length ? median(recent) : null };
    for (const place of ['City', BOROUGHS[sale.borough_id] ?? 'Unknown']) {
      let o = state.outcomes.get(place);
      if (!o) {
        o = { method: [], borough: [], nearest: [] };
        state.outcomes.set(place, o);
      }
      o.method.push(method);
      o.borough.push(borough);
      o.nearest.push(nearest);
    }
  }
  for (const { borough, level, score } of monthScores) {
    for (const key of [`${borough}|${level}`, `${borough}`]) pushTo(state.scores, key, score);
  }
}

/**
 * The method's estimate of a sale worth `truth` dollars from the comparables of its level, each carried to `lastMonth`
 * by the price index: their median, the interval `calibration` makes of their spread, and the sale's score.
 */
function methodEstimate(
  state: BacktestState,
  comparables: readonly RecordedSaleFacts[],
  boroughCategory: string,
  lastMonth: string,
  calibration: { low: number; high: number },
  truth: number,
): { outcome: Outcome; score: number } {
  const now = indexAt(state, boroughCategory, lastMonth);
  const adjusted = comparables
    .slice(-RECENT)
    .map((c) => {
      const then = indexAt(state, boroughCategory, monthOf(c));
      return now !== undefined && then !== undefined ? (Number(c.sale_price) * now) / then : Number(c.sale_price);
    })
    .sort((a, b) => a - b);
  const estimate = median(adjusted);
  const spread = Math.max(MIN_SPREAD, median(adjusted.map((p) => Math.abs(Math.log(p / estimate))).sort((a, b) => a - b)));
  const low = estimate * Math.exp(calibration.low * spread);
  const high = estimate * Math.exp(calibration.high * spread);
  return { outcome: { truth, estimate, inside: truth >= low && truth <= high }, score: Math.log(truth / estimate) / spread };
}

/** Learns a month that is over: its sales become comparables, prices of their borough and category, and its index. */
function learnMonth(state: BacktestState, targets: readonly RecordedSaleFacts[], month: string): void {
  const prices = new Map<string, number[]>();
  for (const sale of targets) {
    const boroughCategory = `${sale.borough_id}|${categoryOf(sale)}`;
    pushTo(state.earlier, `${boroughCategory}|b|${sale.block}|${normalAddress(sale.address)}`, sale);
    pushTo(state.earlier, `${boroughCategory}|b|${sale.block}|${normalAddress(sale.address)}|u|${lineOf(sale.apartment_number)}`, sale);
    pushTo(state.earlier, `${boroughCategory}|k|${sale.block}`, sale);
    pushTo(state.earlier, `${boroughCategory}|n|${sale.neighborhood}`, sale);
    pushTo(state.boroughPrices, boroughCategory, Number(sale.sale_price));
    pushTo(prices, boroughCategory, Number(sale.sale_price));
  }
  for (const [boroughCategory, list] of prices) {
    if (list.length >= INDEX_MIN_SALES) state.index.set(`${boroughCategory}|${month}`, median(list.sort((a, b) => a - b)));
  }
}

/** The baselines of the recorded sales' backtest: a recorded sale has no bedroom count, nor always a position. */
export const RECORDED_SALE_BASELINES = {
  areaMedian: 'borough and category median',
  nearbyMedian: '10 latest of the neighbourhood and category',
};

/** The building's part of an address: upper case, single spaces, without a unit after a comma. */
function normalAddress(address: string | null): string {
  return (address ?? '').split(',')[0].replace(/\s+/g, ' ').trim().toUpperCase();
}

/**
 * The apartment's line: the letters that end its number (`6D`, `12-D` and `PH D` are line D, one above another
 * with the same plan), else the number without its leading floor digits; `-` without an apartment number.
 */
function lineOf(apartment: string | null): string {
  const unit = (apartment ?? '').trim().toUpperCase();
  if (!unit) return '-';
  const letters = /([A-Z]+)$/.exec(unit.replace(/[^A-Z0-9]/g, ''));
  return letters ? letters[1] : unit.replace(/^[0-9]+/, '') || unit;
}
