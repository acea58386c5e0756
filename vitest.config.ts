import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Several processes behind HAProxy, under load: its own run (vitest.cluster.config.ts, npm run test:cluster).
    // The fault matrix of real processes too (vitest.faults.config.ts, npm run test:faults).
    exclude: ['test/cluster/**', 'test/faults/**', '**/node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    // Each worker process runs its files one after another without loading the app again for each: the
    // loading took 57 s of a 318 s run (35 files), against 12 s so. Nothing in the tests mocks a module or
    // changes a global, and the app's module-level state is caches of pure answers, so a file's outcome
    // does not depend on the files before it. Every file still starts its own runtimes and databases.
    isolate: false,
    // The JSON report lets .ci/run print a plain 'N passed, N failed' closing line.
    reporters: ['default', ['json', { outputFile: '.cache/vitest-report.json' }]],
  },
});
