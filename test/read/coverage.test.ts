import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { mirrorCoverage, coverageMarkdown } from '../../src/read/mirror-coverage.js';
import { get } from '../helpers/http.js';
import { CLI, ROOT, SHARED_DATA } from '../helpers/paths.js';
import { startTestRuntime, useSharedTestRuntime } from '../helpers/runtime.js';
import { rentalRows, saleRows } from '../helpers/source-rows.js';

// Field coverage of the mirror (`npm run data:coverage`) against shares computed here from the source rows.
const t = useSharedTestRuntime('pro');
const BOROUGHS = ['Manhattan', 'Brooklyn', 'Queens', 'Bronx', 'Staten Island'];
const share = <T>(rows: T[], holds: (r: T) => boolean) => rows.filter(holds).length / rows.length;

describe('field coverage of the mirror', () => {
  it('counts, and the shares of sales with bedrooms, baths and size, equal the source rows in every borough', async () => {
    const coverage = await mirrorCoverage(t.rt.store, SHARED_DATA);
    const sales = saleRows();
    const rentals = rentalRows();
    for (const borough of BOROUGHS) {
      const s = sales.filter((r) => r.borough === borough);
      const r = rentals.filter((row) => row.borough === borough);
      expect(s.length, borough).toBeGreaterThan(100);
      expect(r.length, borough).toBeGreaterThan(0);
      expect(coverage.sale.records(borough), borough).toBe(s.length);
      expect(coverage.rental.records(borough), borough).toBe(r.length);
      expect(coverage.sale.share(borough, 'bedroomCount'), borough).toBeCloseTo(
        share(s, (row) => row.bedrooms !== null),
        12,
      );
      expect(coverage.sale.share(borough, 'fullBathroomCount'), borough).toBeCloseTo(
        share(s, (row) => row.fullBaths !== null),
        12,
      );
      expect(coverage.sale.share(borough, 'sqft'), borough).toBeCloseTo(
        share(s, (row) => row.sqft !== null && row.sqft > 0),
        12,
      );
      expect(coverage.sale.share(borough, 'sourceGroupLabel'), borough).toBe(1);
      expect(coverage.rental.share(borough, 'geoPoint'), borough).toBe(1);
      expect(coverage.rental.share(borough, 'noFee'), borough).toBeCloseTo(
        share(r, (row) => row.no_fee !== ''),
        12,
      );
    }
    // Below one in a hundred sales lacks bedrooms (land); the StreetEasy sample alone knows the rentals' sizes.
    expect(coverage.sale.share('all', 'bedroomCount')).toBeGreaterThan(0.98);
    expect(coverage.rental.share('all', 'sqft')).toBeCloseTo(
      share(rentals, (row) => Number(row.size_sqft) > 0),
      12,
    );
  });

  it('the command line prints the same tables from the database it is given', async () => {
    // A mirror of its own, without the RentHop rentals (the tables' figures are checked above; here, that the
    // command reads the database it is given), as it holds it now: nothing is written between the two reads.
    const rt = await startTestRuntime({}, { withoutRentHop: true });
    try {
      expect((await get(rt.app, '/v1/health')).status).toBe(200);
      const expected = coverageMarkdown(await mirrorCoverage(rt.store, SHARED_DATA));
      const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'coverage'], {
        cwd: ROOT,
        env: { ...process.env, SHARED_DATA_DIR: SHARED_DATA, DATABASE_URL: rt.config.databaseUrl, LOG_LEVEL: 'silent' },
      });
      expect(stdout.trim()).toBe(expected.trim());
      expect(stdout).toContain('| `bedroomCount` |');
      expect(stdout).toContain('### Buildings');
    } finally {
      await rt.close();
    }
  });
});
