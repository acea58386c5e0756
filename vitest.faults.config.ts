import { defineConfig } from 'vitest/config';

/**
 * The fault matrix of real processes (test/faults/): the local upstream failing and stalling detail requests
 * through a first sync, a webhook receiver down two minutes, a worker killed mid-hydration, a PostgreSQL and a
 * Redis of the test's own restarted under load. `npm run test:faults` runs it after building the command line;
 * `.ci/run` runs it after `npm test`, which leaves it out (its cases take minutes of real time each). Its files run
 * two at a time, as their cases wait more than they work: the cases on the city's mirror (city-faults), the webhook
 * receiver's two-minute outage (webhook-outage) and the restarts (restarts).
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', ['json', { outputFile: '.cache/vitest-faults-report.json' }]],
  },
});
