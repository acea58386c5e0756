import { afterAll, describe, expect, it } from 'vitest';
import { drawnRuns } from '../helpers/drawn-runs.js';
import { openApiFuzzer } from '../helpers/fuzz.js';
import { startTestRuntime } from '../helpers/runtime.js';

// Property-based fuzzing from the app's own OpenAPI document (see helpers/fuzz.ts): requests with valid
// and invalid values for every documented parameter, random extra parameters and headers, through the
// real app on SQLite, a test for each operation. The same runs on PostgreSQL in postgres.test.ts, over its mirror.
const RUNS = drawnRuns(2400, 'FUZZ_RUNS');

// Quotas raised out of the way: thousands of requests from one client are the point here.
const rt = await startTestRuntime(
  Object.fromEntries(['FREE', 'STARTER', 'PRO', 'BUSINESS'].map((p) => [`QUOTA_${p}_PER_MONTH`, '100000000'])),
);
const fuzzer = await openApiFuzzer(rt);
const perRoute = Math.ceil(RUNS / fuzzer.routes.length);
const statuses = new Map<number, number>();
afterAll(async () => {
  console.log(
    `fuzz (SQLite): ${perRoute} requests on each of ${fuzzer.routes.length} operations; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
  );
  await rt.close();
});

describe('fuzzing from the OpenAPI document', () => {
  it('covers every documented operation but the event stream', () => {
    expect(fuzzer.routes.length).toBeGreaterThanOrEqual(16);
  });

  // Each generated request's answer is checked by its own assertions; fast-check reports the smallest failing one.
  it.each(fuzzer.routes)(
    `GET %s: ${perRoute} generated requests, each with no 5xx, a documented status and media type, and a body valid against its documented schema`,
    async (route) => {
      await fuzzer.fuzz([route], perRoute, statuses);
    },
    120_000,
  );
});
