import { defineConfig } from 'vitest/config';

/**
 * The fast tests of pure parts, with no server and no synced mirror, each beside the tests of its folder: what
 * `npm run test:unit` runs, and `npm run mutation` for each mutant. `npm test` runs them too, with everything else
 * (vitest.config.ts).
 */
export const UNIT_TESTS = [
  'test/config.test.ts',
  'test/settings.test.ts',
  'test/access/key-resolver.test.ts',
  'test/access/plan-limiters.test.ts',
  'test/access/quota-meter.test.ts',
  'test/billing/billing-repository.test.ts',
  'test/domain/api-key.test.ts',
  'test/domain/city-records.test.ts',
  'test/domain/market.test.ts',
  'test/freshness/coordinator.test.ts',
  'test/freshness/policy.test.ts',
  'test/http/auth.test.ts',
  'test/lib/single-flight.test.ts',
  'test/lib/stepwise.test.ts',
  'test/lib/keyset-pages.test.ts',
  'test/lib/read-memo.test.ts',
  'test/lib/text-list.test.ts',
  'test/search/listing-columns.test.ts',
  'test/notify/webhook-signature.test.ts',
  'test/search/cursor.test.ts',
  'test/search/filters.test.ts',
  'test/upstream/mappers.test.ts',
  'test/upstream/soql.test.ts',
  'test/upstream/stripe-emulator.test.ts',
];

export default defineConfig({
  test: {
    include: UNIT_TESTS,
    pool: 'forks',
    maxWorkers: 2,
  },
});
