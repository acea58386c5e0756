import { Type, type TString } from 'typebox';

/**
 * The city's districts a listing or a recorded sale lies in, by point in polygon on its position (the shared
 * folder's polygon files, provenance in its README; `dataset/city-polygons.ts`): each an integer, null when the
 * position lies in none (water, a joint-interest area such as Central Park for community districts) or is unknown.
 */
export interface Districts {
  /** Community district as PLUTO writes it: the borough's digit and the district (105 is Manhattan's fifth). */
  communityDistrict: number | null;
  /** NYPD police precinct, 1-123. */
  policePrecinct: number | null;
  /** Community school district, 1-32. */
  schoolDistrict: number | null;
}

/** A district's name as the filters and `nycData` call it. */
export type DistrictName = keyof Districts;

/** The districts, each with how many digits its numbers have at most and what it is (the filters' descriptions). */
const DISTRICT_NUMBERS: Record<DistrictName, { digits: number; what: string; example: string }> = {
  communityDistrict: {
    digits: 3,
    what: 'community districts as PLUTO writes them, the borough digit then the district (`105` is Manhattan 5, `301` Brooklyn 1); a joint-interest area (parks, airports) is none',
    example: '105,106',
  },
  policePrecinct: { digits: 3, what: 'NYPD police precincts, 1-123', example: '13,14' },
  schoolDistrict: { digits: 2, what: 'community school districts, 1-32', example: '2' },
};

/** The district names, in the order of {@link Districts}. */
export const DISTRICT_NAMES = Object.keys(DISTRICT_NUMBERS) as DistrictName[];

/** At most this many districts in one list. */
const MAX_LISTED = 50;

/**
 * The query parameter of each district filter: a comma list of numbers. One definition, which the listing
 * searches and the recorded sales' search both take, `where` saying what is matched by its position.
 */
export function districtParameters(where: string): Record<DistrictName, TString> {
  return Object.fromEntries(
    DISTRICT_NAMES.map((name) => {
      const { digits, what, example } = DISTRICT_NUMBERS[name];
      const number = `[0-9]{1,${digits}}`;
      return [
        name,
        Type.String({
          pattern: `^${number}(,${number}){0,${MAX_LISTED - 1}}$`,
          maxLength: MAX_LISTED * (digits + 1),
          description: `Comma-separated ${what} (at most ${MAX_LISTED}, such as \`${example}\`): any may match. ${where} An unknown number matches nothing.`,
        }),
      ];
    }),
  ) as Record<DistrictName, TString>;
}

/** A district list as its parameter writes it (validated by {@link districtParameters}) -> its distinct numbers. */
export function parseDistrictList(text: string): number[] {
  return [...new Set(text.split(',').map(Number))];
}

/** The district filters a validated query sets, as lists of numbers (absent ones left out). */
export function districtFilters(query: Partial<Record<DistrictName, string>>): Partial<Record<DistrictName, number[]>> {
  return Object.fromEntries(
    DISTRICT_NAMES.filter((name) => query[name] !== undefined).map((name) => [name, parseDistrictList(query[name]!)]),
  );
}
