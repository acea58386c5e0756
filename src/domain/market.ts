import type { MarketFigures } from '../wire/market.js';

/**
 * The `q`-quantile (0-1) of `values` by linear interpolation between the closest ranks (the common
 * "type 7" definition: the median of an even count is the mean of the two middle values). Null when empty.
 */
export function quantile(values: number[], q: number): number | null {
  return sortedQuantile([...values].sort((a, b) => a - b), q);
}

/** {@link quantile} of values already sorted ascending (no copy, no sort). */
function sortedQuantile(sorted: number[], q: number): number | null {
  if (!sorted.length) return null;
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  return sorted[below] + (sorted[above] - sorted[below]) * (position - below);
}

const round2 = (v: number | null) => (v === null ? null : Math.round(v * 100) / 100);

/** Market figures of these listings (each: price, price per square foot and days on market when known, bedrooms). */
export function marketFigures(listings: { price: number; pricePerSqft: number | null; daysOnMarket: number | null; bedroomCount: number | null }[]): MarketFigures {
  const known = <T>(xs: (T | null)[]) => xs.filter((x): x is T => x !== null);
  const groups = new Map<string, number[]>();
  for (const l of listings) {
    const label = l.bedroomCount === null ? 'UNKNOWN' : l.bedroomCount === 0 ? 'STUDIO' : String(l.bedroomCount);
    let prices = groups.get(label);
    if (!prices) groups.set(label, (prices = []));
    prices.push(l.price);
  }
  const prices = listings.map((l) => l.price).sort((a, b) => a - b);
  return {
    activeCount: listings.length,
    medianPrice: round2(sortedQuantile(prices, 0.5)),
    p25Price: round2(sortedQuantile(prices, 0.25)),
    p75Price: round2(sortedQuantile(prices, 0.75)),
    medianPricePerSqft: round2(quantile(known(listings.map((l) => l.pricePerSqft)), 0.5)),
    medianDaysOnMarket: round2(quantile(known(listings.map((l) => l.daysOnMarket)), 0.5)),
    byBedroom: [...groups.entries()]
      .sort(([a], [b]) => (a === 'STUDIO' ? -1 : b === 'STUDIO' ? 1 : a.localeCompare(b, 'en', { numeric: true })))
      .map(([bedrooms, prices]) => ({ bedrooms, activeCount: prices.length, medianPrice: round2(quantile(prices, 0.5)) })),
  };
}
