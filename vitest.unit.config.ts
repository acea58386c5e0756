import { defineConfig } from 'vitest/config';

/**
 * The fast tests of pure parts (test/unit/), with no server and no synced mirror: what `npm run mutation`
 * runs for each mutant. `npm test` runs them too, with everything else (vitest.config.ts).
 */
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
  },
});
