import type { MarketFigures } from '../wire/market.js';
import { daysOnMarket } from './listing.js';

/**
 * Where the `q`-quantile (0-1) of `count` sorted values lies, by linear interpolation between the
 * closest ranks (the common "type 7" definition: the median of an even count is the mean of the two
 * middle values): the 0-based rank below it and how far (0-1) toward the next rank. Null when there are none.
 */
export function quantileRank(count: number, q: number): { rank: number; fraction: number } | null {
  if (count <= 0) return null;
  const position = (count - 1) * q;
  const rank = Math.floor(position);
  return { rank, fraction: position - rank };
}

/**
 * The quantile at `at` ({@link quantileRank}) from the values at its rank and the next (`values[1]` needed
 * only when `fraction` > 0); null when none were read (a listing removed between the count and the read).
 */
function interpolate(at: { fraction: number }, values: number[]): number | null {
  if (!values.length) return null;
  return at.fraction > 0 && values.length > 1 ? values[0] + (values[1] - values[0]) * at.fraction : values[0];
}

const round2 = (v: number | null) => (v === null ? null : Math.round(v * 100) / 100);

/** A bedroom count as the figures label it: STUDIO (0), 1, 2, ..., UNKNOWN (null). */
const bedroomLabel = (bedrooms: number | null) => (bedrooms === null ? 'UNKNOWN' : bedrooms === 0 ? 'STUDIO' : String(bedrooms));

/**
 * A set of active listings as market figures read it: counts, and the values at a rank of one order, so
 * that a figure never needs every listing (a city's rentals at a million listings are 244,867 rows). The
 * store implements it; each order is that of an index.
 */
export interface RankedListings {
  /** How many listings of each bedroom count (null: unknown). */
  bedroomCounts(): Promise<{ bedrooms: number | null; count: number }[]>;
  /** How many listings have a known price per square foot (sizes are often unknown: the smaller side to count). */
  sizedCount(): Promise<number>;
  /** How many listings have no known listing date (dates are nearly always known: the smaller side to count). */
  undatedCount(): Promise<number>;
  /**
   * The values at 0-based `rank` and the one after (fewer at the end) of: prices ascending (of one bedroom
   * count when `bedrooms` is given), known prices per square foot ascending, or known listing dates (UTC
   * ISO) newest first, which is days on market ascending.
   */
  valuesAt(order: 'price' | 'pricePerSqft' | 'listedAt', rank: number, bedrooms?: number | null): Promise<(number | string)[]>;
}

/**
 * Market figures of a set of listings, read by rank: counts, the price quartiles, the median price per
 * square foot and days on market (of the listings where known), and each bedroom count's median price;
 * days on market counted to `now`. Every figure equals the type-7 quantile of the values (see {@link quantileRank}),
 * rounded to cents.
 */
export async function marketFiguresByRank(listings: RankedListings, now: Date): Promise<MarketFigures> {
  const [groups, sized, undated] = await Promise.all([listings.bedroomCounts(), listings.sizedCount(), listings.undatedCount()]);
  const activeCount = groups.reduce((sum, g) => sum + g.count, 0);
  const dated = activeCount - undated;
  const figure = async (count: number, q: number, read: (rank: number) => Promise<number[]>) => {
    const at = quantileRank(count, q);
    return at ? round2(interpolate(at, await read(at.rank))) : null;
  };
  const prices = (bedrooms?: number | null) => async (rank: number) => (await listings.valuesAt('price', rank, bedrooms)).map(Number);
  const [medianPrice, p25Price, p75Price, medianPricePerSqft, medianDaysOnMarket, groupMedians] = await Promise.all([
    figure(activeCount, 0.5, prices()),
    figure(activeCount, 0.25, prices()),
    figure(activeCount, 0.75, prices()),
    figure(sized, 0.5, async (rank) => (await listings.valuesAt('pricePerSqft', rank)).map(Number)),
    figure(dated, 0.5, async (rank) => (await listings.valuesAt('listedAt', rank)).map((listedAt) => daysOnMarket(String(listedAt), now)!)),
    Promise.all(groups.map((g) => figure(g.count, 0.5, prices(g.bedrooms)))),
  ]);
  const byBedroom = groups
    .map((g, i) => ({ bedrooms: bedroomLabel(g.bedrooms), activeCount: g.count, medianPrice: groupMedians[i] }))
    .sort((a, b) =>
      a.bedrooms === 'STUDIO' ? -1 : b.bedrooms === 'STUDIO' ? 1 : a.bedrooms.localeCompare(b.bedrooms, 'en', { numeric: true }),
    );
  return { activeCount, medianPrice, p25Price, p75Price, medianPricePerSqft, medianDaysOnMarket, byBedroom };
}

/** The median of `values` (any order) by {@link quantileRank}, rounded to cents; null when there are none. */
export function median(values: number[]): number | null {
  const sorted = [...values].sort((a, b) => a - b);
  const at = quantileRank(sorted.length, 0.5);
  return at ? round2(interpolate(at, sorted.slice(at.rank, at.rank + 2))) : null;
}

/**
 * Monthly figures of recorded sales (with consideration) from `fromMonth` to `toMonth` (`YYYY-MM`,
 * inclusive), every month listed, a month without sales with count 0 and null medians.
 */
export function recordedSalesByMonth(
  sales: { sale_date: string; sale_price: number; price_per_sqft: number | null }[],
  fromMonth: string,
  toMonth: string,
): { month: string; saleCount: number; medianPrice: number | null; medianPricePerSqft: number | null }[] {
  const byMonth = new Map<string, { prices: number[]; perSqft: number[] }>();
  for (const s of sales) {
    const month = s.sale_date.slice(0, 7);
    let m = byMonth.get(month);
    if (!m) {
      m = { prices: [], perSqft: [] };
      byMonth.set(month, m);
    }
    m.prices.push(s.sale_price);
    if (s.price_per_sqft !== null) m.perSqft.push(s.price_per_sqft);
  }
  const out = [];
  let [y, mo] = fromMonth.split('-').map(Number);
  for (let month = fromMonth; month <= toMonth; month = `${y}-${String(mo).padStart(2, '0')}`) {
    const m = byMonth.get(month);
    out.push({
      month,
      saleCount: m?.prices.length ?? 0,
      medianPrice: m ? median(m.prices) : null,
      medianPricePerSqft: m ? median(m.perSqft) : null,
    });
    if (mo === 12) {
      y += 1;
      mo = 1;
    } else {
      mo += 1;
    }
  }
  return out;
}
