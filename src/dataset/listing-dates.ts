const DAY_MS = 86_400_000;

/**
 * The listing date of a listing whose source gives none (the StreetEasy and RentHop rentals, the
 * NY-House sales): `id mod 60` whole days before the build day (UTC), so dates spread over two months
 * and the same id always gets the same date. Returns UTC ISO 8601.
 */
export function undatedListedAt(id: number, asOf: Date): string {
  return new Date(asOf.getTime() - (id % 60) * DAY_MS).toISOString();
}
