import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { expectProblem, get } from '../helpers/http.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';

const t = useSharedTestRuntime('pro');

/** A fingerprint of everything stored: row counts and the newest write of each table. */
async function fingerprint() {
  const q = await sql<{ n: number; seen: string; prices: number; scopes: string }>`
    select (select count(*) from listings) as n, (select max(last_seen_at) from listing_sightings) as seen,
           (select count(*) from price_history) as prices, (select group_concat(scope || last_attempt_at) from sync_scopes) as scopes`.execute(
    t.rt.store.db,
  );
  return q.rows[0];
}

const BAD: [string, string][] = [
  ['/v1/search/sales?minPrice=abc', 'minPrice'],
  ['/v1/search/sales?minPrice=1.5', 'minPrice'],
  ['/v1/search/sales?maxPrice=-1', 'maxPrice'],
  ['/v1/search/sales?page=-1', 'page'],
  ['/v1/search/sales?page=0', 'page'],
  ['/v1/search/sales?perPage=0', 'perPage'],
  ['/v1/search/sales?perPage=501', 'perPage'],
  ['/v1/search/rentals?perPage=ten', 'perPage'],
  ['/v1/search/sales?listedAfter=yesterday', 'listedAfter'],
  ['/v1/search/sales?listedBefore=2024-13-45T00:00:00Z', 'listedBefore'],
  ['/v1/search/rentals?availableBefore=2024-02-30x', 'availableBefore'],
  ['/v1/search/sales?sort=CHEAPEST', 'sort'],
  ['/v1/search/sales?sortDir=UP', 'sortDir'],
  ['/v1/search/sales?saleType=AUCTION', 'saleType'],
  ['/v1/search/sales?amenities=POOL', 'amenities'],
  ['/v1/search/sales?buildingType=castle', 'buildingType'],
  ['/v1/search/sales?petsAllowed=maybe', 'petsAllowed'],
  ['/v1/search/sales?minTransitScore=101', 'minTransitScore'],
  ['/v1/search/sales?minDaysOnMarket=-3', 'minDaysOnMarket'],
  ['/v1/search/sales?maxMonthlyCost=-100', 'maxMonthlyCost'],
  ['/v1/search/sales?areas=100;200', 'areas'],
  ['/v1/search/sales?areas=99999', 'areas'],
  ['/v1/search/sales?minBeds=3&maxBeds=1', 'minBeds'],
  ['/v1/search/sales?minPrice=100000000000', 'minPrice'],
  ['/v1/search/sales?maxPrce=100', 'maxPrce'],
  ['/v1/search/rentals?saleType=RESALE', 'saleType'],
  ['/v1/search/sales?noFee=true', 'noFee'],
  [`/v1/search/sales?areas=${'1,'.repeat(300)}1`, 'areas'],
  [`/v1/search/sales?listedAfter=${'2'.repeat(100)}`, 'listedAfter'],
  ['/v1/areas?borough=600', 'borough'],
  ['/v1/areas?level=x', 'level'],
  ['/v1/property/by-url?url=ftp%3A%2F%2Fexample', 'url'],
  [`/v1/property/by-url?url=${'a'.repeat(600)}`, 'url'],
  ['/v1/property/bad%20id', 'id'],
  [`/v1/building/${'b'.repeat(200)}`, 'id'],
];

describe('bad input: 400 problem+json naming the parameter, and nothing changes', () => {
  it.each(BAD)('%s', async (url, name) => {
    const before = await fingerprint();
    const body = await expectProblem(t.rt.app, url, 400, 'INVALID_PARAMS', t.key);
    expect(body.errors.map((e: { name: string }) => e.name)).toContain(name);
    expect(await fingerprint()).toEqual(before);
  });

  it('reports every bad parameter at once', async () => {
    const body = await expectProblem(t.rt.app, '/v1/search/sales?minPrice=x&perPage=0&color=red', 400, 'INVALID_PARAMS', t.key);
    expect(body.errors.map((e: { name: string }) => e.name).sort()).toEqual(['color', 'minPrice', 'perPage']);
  });

  it('a valid search still answers after all of them', async () => {
    expect((await get(t.rt.app, '/v1/search/sales?perPage=1', t.key)).status).toBe(200);
  });
});

describe('days and months: years 1900 to 2100', () => {
  it('every day and month parameter of the OpenAPI document refuses a year outside them, and takes the bounds', async () => {
    const key = await t.rt.key('business');
    const document = (await get(t.rt.app, '/v1/openapi.json')).body as {
      paths: Record<string, { get?: { parameters?: { name: string; in: string; schema?: { format?: string; pattern?: string } }[] } }>;
    };
    // Found in the document, so that a parameter added later is tested too.
    const found: { path: string; name: string; kind: 'day' | 'month' }[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const p of item.get?.parameters ?? []) {
        if (p.in !== 'query') continue;
        if (p.schema?.format === 'date') found.push({ path, name: p.name, kind: 'day' });
        else if (p.schema?.pattern?.includes('0[1-9]|1[0-2]')) found.push({ path, name: p.name, kind: 'month' });
      }
    }
    const names = found.map((f) => `${f.path} ${f.name}`);
    for (const known of [
      '/v1/market/recorded-sales from',
      '/v1/market/recorded-sales to',
      '/v1/market/history from',
      '/v1/recorded-sales from',
      '/v1/search/rentals availableBefore',
    ]) {
      expect(names).toContain(known);
    }
    const url = (path: string, query: string) =>
      `${path.replace('{id}', '8000000')}?${path === '/v1/market/history' ? 'kind=rental&' : ''}${query}`;
    for (const { path, name, kind } of found) {
      const formatOf = (errors: { name: string; message: string }[] | undefined) =>
        (errors ?? []).filter((e) => e.name === name && /must match (format|pattern)/.test(e.message));
      for (const bad of kind === 'day' ? ['1899-12-31', '2101-01-01', '0000-01-01'] : ['1899-12', '2101-01', '0000-01']) {
        const problem = await expectProblem(t.rt.app, url(path, `${name}=${bad}`), 400, 'INVALID_PARAMS', key);
        expect(formatOf(problem.errors)).toHaveLength(1);
      }
      // The bounds themselves are well-formed days and months: the answer may refuse a range (a start after today's
      // end), never the value's form.
      for (const good of kind === 'day' ? ['1900-01-01', '2100-12-31'] : ['1900-01', '2100-12']) {
        const res = await get(t.rt.app, url(path, `${name}=${good}`), key);
        expect(formatOf(res.body.errors)).toEqual([]);
      }
    }
  });
});
