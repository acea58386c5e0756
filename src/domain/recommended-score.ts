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
    Math.round(0.6 * (input.transitScore ?? 0)) +
    (input.sqft && input.sqft > 0 ? 20 : 0) +
    (input.leadPhotoKey ? 10 : 0) +
    (input.noFee ? 10 : 0)
  );
}
