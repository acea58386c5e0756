/**
 * How many cases a drawn test (fast-check, the OpenAPI fuzzing, the search index's equivalence) tries: `base` in
 * `npm test`, five times as many in `npm run test:deep` (`TEST_DEEP=1`), or what the variable `override` names says
 * (such as `FUZZ_RUNS=20000`). The cases are drawn afresh each run unless a test fixes its seed, so `npm test` runs
 * enough to catch a broken rule in one run and the deep run looks further (docs/testing.md).
 * @throws Error when the override's value is not a positive number.
 */
export function drawnRuns(base: number, override?: string): number {
  const given = override === undefined ? undefined : process.env[override];
  if (given !== undefined && given !== '') {
    const runs = Number(given);
    if (!(runs > 0)) throw new Error(`${override} must be a positive number, not "${given}"`);
    return runs;
  }
  return process.env.TEST_DEEP === '1' ? base * DEEP_FACTOR : base;
}

/** How many times `npm run test:deep` multiplies each drawn test's cases. */
export const DEEP_FACTOR = 5;
