import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPTIMIZATIONS_OFF, expectSameAnswers, probes } from '../helpers/optimization-equivalence.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';

// The optimizations (docs/performance.md's registry) change how fast the service answers, never what: the whole
// city answered with every optimization on (the defaults) and with every one off, over two copies of the same mirror at
// the same instant, byte for byte. The PostgreSQL side is in test/store/postgres.test.ts.
let fast: { rt: TestRuntime; key: string };
let plain: { rt: TestRuntime; key: string };

beforeAll(async () => {
  // One instant for both: days on market and the freshness of every answer are counted to it.
  const now = new Date();
  const clock = () => now;
  const started = await Promise.all([startTestRuntime({}, { clock }), startTestRuntime(OPTIMIZATIONS_OFF, { clock })]);
  [fast, plain] = await Promise.all(started.map(async (rt) => ({ rt, key: await rt.key('business') })));
  await fast.rt.reads.searcher.index?.current();
}, 120_000);
afterAll(async () => Promise.all([fast?.rt.close(), plain?.rt.close()]));

describe('every optimization off', () => {
  it('gives the very bytes of the defaults: searches, pages by cursor, clusters, details, buildings, areas, figures, sales', async () => {
    expect(fast.rt.reads.searcher.index?.state().listings).not.toBeNull();
    expect(plain.rt.reads.searcher.index).toBeNull();
    const list = await probes(fast.rt, { count: 80, recordedSales: true });
    const compared = await expectSameAnswers(fast, plain, list);
    expect(compared).toBeGreaterThan(3 * list.length);
  }, 240_000);
});
