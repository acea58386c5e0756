/**
 * Score behind the `RECOMMENDED` sort, 0-100, from what makes a listing useful to a searcher:
 * `round(0.6 x transitScore) + 20 if the floor area is known + 10 if it has a lead photo + 10 if no fee`.
 * An unknown transit score counts as 0. Ties are broken by listing date, then id, in the sort's direction.
 */
export function recommendedScore(input: {
  transitScore: number | null;
  sqft: number | null;
  leadPhotoKey: string | null;
  noFee: boolean | null;
}): number {
  return (
    transitPart(input.transitScore ?? 0) + (input.sqft && input.sqft > 0 ? 20 : 0) + (input.leadPhotoKey ? 10 : 0) + (input.noFee ? 10 : 0)
  );
}

/** The transit score's part of the recommended score: 0.6 x the transit score (0-100), rounded. */
function transitPart(transitScore: number): number {
  return Math.round(0.6 * transitScore);
}

/**
 * The lowest recommended score a listing whose transit score is at least `minTransitScore` can have:
 * the transit part alone, since it never falls as the transit score rises and the other parts are never
 * negative. A search with that filter in the default order can start its walk there.
 */
export function lowestRecommendedScore(minTransitScore: number): number {
  return transitPart(minTransitScore);
}
