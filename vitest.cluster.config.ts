import { defineConfig } from 'vitest/config';

/**
 * Several instances behind HAProxy (test/cluster/): separate processes, a load of LOAD_SECONDS and a kill, on
 * the machine's PostgreSQL and Redis. `npm run test:cluster` runs it after building the command line; `.ci/run`
 * runs it after `npm test`, which leaves it out (it wants the machine's two cores to itself).
 */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default', ['json', { outputFile: '.cache/vitest-cluster-report.json' }]],
  },
});
