/** What a comparable is scored on: price (dollars), bedrooms, full bathrooms, size (square feet); null when unknown. */
export interface ComparableFacts {
  price: number;
  bedroomCount: number | null;
  fullBathroomCount: number | null;
  sqft: number | null;
}

/** Radii tried in turn, metres, until enough comparables are found. */
export const COMPARABLE_RADII = [500, 1000, 2000, 5000, 10_000] as const;

const near = (a: number | null, b: number | null, scale: number) =>
  a === null || b === null ? 0.5 : Math.max(0, 1 - Math.abs(a - b) / scale);

/**
 * Similarity 0-100 of a candidate to the subject listing, `distance` metres away within `radius`:
 * 100 x (0.35 price + 0.25 bedrooms + 0.15 bathrooms + 0.15 size + 0.10 distance), each part 0-1:
 * price max(0, 1 - |p - p0| / p0); bedrooms max(0, 1 - |b - b0| / 3); bathrooms max(0, 1 - |b - b0| / 2);
 * size max(0, 1 - |s - s0| / s0); distance 1 - d / radius. A part unknown on either side counts 0.5.
 * Rounded to one decimal.
 */
export function similarity(subject: ComparableFacts, candidate: ComparableFacts, distance: number, radius: number): number {
  const score =
    0.35 * near(subject.price, candidate.price, subject.price) +
    0.25 * near(subject.bedroomCount, candidate.bedroomCount, 3) +
    0.15 * near(subject.fullBathroomCount, candidate.fullBathroomCount, 2) +
    0.15 * near(subject.sqft, candidate.sqft, subject.sqft ?? 1) +
    0.1 * Math.max(0, 1 - distance / radius);
  return Math.round(score * 1000) / 10;
}
