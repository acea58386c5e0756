import type { ListingKind } from '../domain/listing.js';
import type { GeoPoint } from '../wire/common.js';
import type { ComparablePool, NearProperty } from './comparable-pool.js';

/** Properties of the subject's bedrooms but other bathrooms in its building: how many at most, how close (metres), and their weight's share. */
interface OtherBathrooms {
  comparables: number;
  radius: number;
  weight: number;
}

/**
 * The rule of each kind (docs/estimates.md): how many comparables, how far, how few make no estimate, how fast
 * a comparable's weight falls with distance, and which properties of another layout count too. Chosen by the backtest
 * (`nyc-listings estimate backtest`).
 */
export const ESTIMATE_RULES: Readonly<
  Record<
    ListingKind,
    {
      comparables: number;
      radius: number;
      minComparables: number;
      distanceScale: number;
      sizeFirst: boolean;
      otherBathrooms: OtherBathrooms | null;
    }
  >
> = {
  // Rents vary most from building to building: the nearest properties of the same layout, the same building far ahead, and
  // the building's properties with as many bedrooms but other bathrooms, at under a third of the weight.
  rental: {
    comparables: 10,
    radius: 2000,
    minComparables: 3,
    distanceScale: 10,
    sizeFirst: false,
    otherBathrooms: { comparables: 5, radius: 25, weight: 0.3 },
  },
  // Properties for sale differ in size far more than in position: price per square foot where the size is known.
  sale: { comparables: 10, radius: 5000, minComparables: 3, distanceScale: 1000, sizeFirst: true, otherBathrooms: null },
};

/** The property whose worth is estimated: a listing of the pool (then `exclude` is its property) or a property not listed. */
export interface Subject {
  kind: ListingKind;
  point: GeoPoint;
  bedrooms: number | null;
  /** Full bathrooms plus a half for each half bath. */
  bathrooms: number | null;
  /** Square feet. */
  sqft: number | null;
  /** The site's building type (CONDO, CO_OP, HOUSE, ...). */
  buildingType: string | null;
  /** A property of the pool never used: the subject's own, with every copy of its listing. */
  exclude?: number;
}

/** How comparables were combined: the same layout's prices, or prices per square foot times the subject's size. */
export type EstimateMethod = 'same-layout-weighted-median' | 'price-per-sqft-weighted-median';

/** A comparable as used: its property, distance (metres), weight (0-1), own price and price adjusted to the subject (dollars). */
export interface UsedComparable {
  property: number;
  distance: number;
  weight: number;
  price: number;
  adjustedPrice: number;
  /** Dollars added to the price for the subject's size, layout and date; they sum to `adjustedPrice - price`. */
  adjustments: { size: number; layout: number; time: number };
}

/** The point estimate (dollars) with its comparables and their spread, or null with the reason. */
export type PointEstimate =
  | { estimate: number; spread: number; method: EstimateMethod; comparables: UsedComparable[]; radius: number; reason: null }
  | { estimate: null; spread: null; method: EstimateMethod; comparables: UsedComparable[]; radius: number; reason: string };

/** The value below which half of the weight lies (the lower one at an exact half), of values with positive weights. */
export function weightedMedian(values: readonly number[], weights: readonly number[]): number {
  const order = values.map((_, i) => i).sort((a, b) => values[a] - values[b] || a - b);
  const total = weights.reduce((sum, w) => sum + w, 0);
  let seen = 0;
  for (const i of order) {
    seen += weights[i];
    if (seen >= total / 2) return values[i];
  }
  return values[order[order.length - 1]];
}

/** Weight of a comparable `distance` metres away: (1 / (1 + distance / scale))², so the same building weighs most. */
const distanceWeight = (distance: number, scale: number) => (1 / (1 + distance / scale)) ** 2;

/** The smallest spread assumed (natural log of price), so that a few identical prices do not make a zero-width interval. */
export const MIN_SPREAD = 0.02;

/**
 * Estimates the subject's price (a month's rent for a rental, the price for a sale) from the properties of `pool`:
 * - price per square foot (sales, when the subject's size is known and enough comparables know theirs): the
 *   nearest properties with a known size, of the subject's building type when known, weighted by distance and by
 *   size likeness exp(-|ln(size / subject's size)|); each comparable's price per square foot times the
 *   subject's size, the difference being its size adjustment;
 * - otherwise the same layout: the nearest properties with the subject's bedrooms (and bathrooms for rentals, the
 *   building type for sales, when the subject knows them), weighted by distance, unadjusted; for rentals, also
 *   the properties within `otherBathrooms.radius` with its bedrooms and other bathrooms, at `otherBathrooms.weight` of
 *   their distance weight (a property of the building with one bathroom more tells more than one streets away).
 * The estimate is the weighted median of the adjusted prices; the spread is their weighted median absolute
 * deviation in natural log, at least {@link MIN_SPREAD}. The comparables are active listings priced now, so
 * their time adjustment is 0. Fewer than `minComparables` within the radius: no estimate, with the reason.
 */
export function estimateFor(pool: ComparablePool, subject: Subject): PointEstimate {
  const rule = ESTIMATE_RULES[subject.kind];
  const accept = (property: number) => property !== subject.exclude;
  const sameType = (property: number) => subject.buildingType === null || pool.buildingTypeOf(property) === subject.buildingType;
  if (rule.sizeFirst && subject.sqft !== null && subject.sqft > 0) {
    const sqft = subject.sqft;
    const near = pool.nearest(subject.point, (h) => accept(h) && sameType(h) && pool.sqft[h] > 0, rule.comparables, rule.radius);
    if (near.length >= rule.minComparables) {
      return combine(
        'price-per-sqft-weighted-median',
        near.map((n) => {
          const price = pool.prices[n.property];
          const adjustedPrice = Math.round((price / pool.sqft[n.property]) * sqft);
          const likeness = Math.exp(-Math.abs(Math.log(pool.sqft[n.property] / sqft)));
          return used(n, distanceWeight(n.distance, rule.distanceScale) * likeness, price, adjustedPrice - price, 0);
        }),
        rule.radius,
      );
    }
  }
  if (subject.bedrooms === null) {
    return {
      estimate: null,
      spread: null,
      method: 'same-layout-weighted-median',
      comparables: [],
      radius: rule.radius,
      reason: 'bedrooms unknown',
    };
  }
  const bedrooms = subject.bedrooms;
  const bathrooms = subject.kind === 'rental' ? subject.bathrooms : null;
  const near = pool.nearest(
    subject.point,
    (h) =>
      accept(h) &&
      pool.bedrooms[h] === bedrooms &&
      (bathrooms === null || pool.bathrooms[h] === bathrooms) &&
      (subject.kind === 'rental' || sameType(h)),
    rule.comparables,
    rule.radius,
    bedrooms,
  );
  const comparables = near.map((n) => used(n, distanceWeight(n.distance, rule.distanceScale), pool.prices[n.property], 0, 0));
  if (near.length < rule.minComparables) {
    return {
      estimate: null,
      spread: null,
      method: 'same-layout-weighted-median',
      comparables,
      radius: rule.radius,
      reason: `fewer than ${rule.minComparables} comparable properties within ${rule.radius} m`,
    };
  }
  const other = rule.otherBathrooms;
  if (other && bathrooms !== null) {
    const inBuilding = pool.nearest(
      subject.point,
      (h) => accept(h) && pool.bedrooms[h] === bedrooms && pool.bathrooms[h] !== bathrooms,
      other.comparables,
      other.radius,
      bedrooms,
    );
    for (const n of inBuilding)
      comparables.push(used(n, distanceWeight(n.distance, rule.distanceScale) * other.weight, pool.prices[n.property], 0, 0));
  }
  return combine('same-layout-weighted-median', comparables, rule.radius);
}

function used(near: NearProperty, weight: number, price: number, size: number, layout: number): UsedComparable {
  return {
    property: near.property,
    distance: near.distance,
    weight,
    price,
    adjustedPrice: price + size + layout,
    adjustments: { size, layout, time: 0 },
  };
}

function combine(method: EstimateMethod, comparables: UsedComparable[], radius: number): PointEstimate {
  const prices = comparables.map((c) => c.adjustedPrice);
  const weights = comparables.map((c) => c.weight);
  const estimate = weightedMedian(prices, weights);
  const spread = Math.max(
    MIN_SPREAD,
    weightedMedian(
      prices.map((p) => Math.abs(Math.log(p / estimate))),
      weights,
    ),
  );
  const top = Math.max(...weights);
  return { estimate, spread, method, radius, reason: null, comparables: comparables.map((c) => ({ ...c, weight: c.weight / top })) };
}
