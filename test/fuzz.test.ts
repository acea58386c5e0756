import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzOpenApi } from './helpers/fuzz.js';
import { startTestRuntime, type TestRuntime } from './helpers/runtime.js';

// Property-based fuzzing from the app's own OpenAPI document (see helpers/fuzz.ts): requests with valid
// and invalid values for every documented parameter, random extra parameters and headers, through the
// real app on SQLite. The same runs on PostgreSQL in postgres.test.ts, over its mirror.
const RUNS = Number(process.env.FUZZ_RUNS ?? 6000);

let rt: TestRuntime;
const statuses = new Map<number, number>();

beforeAll(async () => {
  // Quotas raised out of the way: thousands of requests from one client are the point here.
  rt = await startTestRuntime(Object.fromEntries(['FREE', 'STARTER', 'PRO', 'BUSINESS'].map((p) => [`QUOTA_${p}_PER_MONTH`, '100000000'])));
});
afterAll(async () => {
  console.log(`fuzz (SQLite): ${RUNS} requests; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  await rt?.close();
});

describe('fuzzing from the OpenAPI document', () => {
  it(`SQLite: ${RUNS} generated requests, no undocumented status, no 5xx, every answer valid against its documented schema`, async () => {
    expect(await fuzzOpenApi(rt, RUNS, statuses)).toBe(RUNS);
  }, 300_000);
});
