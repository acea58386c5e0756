import { describe, expect, it } from 'vitest';
import { get, walk } from '../helpers/http.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';
import { rentalRows } from '../helpers/source-rows.js';

const t = useSharedTestRuntime('pro');

describe('pagination', () => {
  it('walking every page of Brooklyn rentals by price returns each listing exactly once, in order', async () => {
    const expected = rentalRows().filter((r) => r.borough === 'Brooklyn');
    const { items, total, pages } = await walk(t.rt.app, '/v1/search/rentals?areas=200&sort=PRICE&sortDir=ASC&perPage=100', t.key);
    expect(total).toBe(expected.length);
    expect(pages).toBe(Math.ceil(expected.length / 100));
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
    expect(items.map((i) => i.id).sort()).toEqual(expected.map((r) => r.rental_id).sort());
    const prices = items.map((i) => i.price);
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
  });

  it('the default RECOMMENDED order never repeats a listing across pages', async () => {
    const { items, total } = await walk(t.rt.app, '/v1/search/sales?areas=117&perPage=37', t.key);
    expect(items.length).toBe(total);
    expect(new Set(items.map((i) => i.id)).size).toBe(total);
  });

  it('links echo the filters with page and the perPage in effect; prev and next are null at the ends', async () => {
    const first = await get(t.rt.app, '/v1/search/rentals?maxPrice=2500&areas=300&perPage=20', t.key);
    const last = Math.ceil(first.body.meta.total / 20);
    expect(first.body.meta.links).toEqual({
      self: '/v1/search/rentals?maxPrice=2500&areas=300&page=1&perPage=20',
      first: '/v1/search/rentals?maxPrice=2500&areas=300&page=1&perPage=20',
      last: `/v1/search/rentals?maxPrice=2500&areas=300&page=${last}&perPage=20`,
      prev: null,
      next: expect.stringMatching(/^\/v1\/search\/rentals\?maxPrice=2500&areas=300&page=2&perPage=20&cursor=[A-Za-z0-9_-]+$/),
    });
    const end = await get(t.rt.app, first.body.meta.links.last, t.key);
    expect(end.body.meta.links.next).toBeNull();
    expect(end.body.meta.links.prev).toBe(`/v1/search/rentals?maxPrice=2500&areas=300&page=${last - 1}&perPage=20`);
    expect(end.body.data.length).toBe(first.body.meta.total - (last - 1) * 20);
  });

  it('a page past the end is empty, with prev pointing at the last page', async () => {
    const res = await get(t.rt.app, '/v1/search/rentals?areas=300&page=999&perPage=50', t.key);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.links.next).toBeNull();
    expect(res.body.meta.links.prev).toBe(res.body.meta.links.last);
  });

  it('nothing matching: total 0, last is page 1', async () => {
    const res = await get(t.rt.app, '/v1/search/rentals?minPrice=99999999', t.key);
    expect(res.body.meta).toMatchObject({ total: 0, page: 1 });
    expect(res.body.meta.links.last).toBe('/v1/search/rentals?minPrice=99999999&page=1&perPage=50');
  });

  it.each([
    ['PRICE', 'ASC'],
    ['LISTED_AT', 'ASC'],
    ['LISTED_AT', 'DESC'],
    ['PRICE_PER_SQFT', 'ASC'],
    ['RECOMMENDED', 'DESC'],
  ])('following links.next by cursor (sort %s %s) gives the same order as numbered pages, unknown values last', async (sort, dir) => {
    const url = `/v1/search/sales?areas=102&sort=${sort}&sortDir=${dir}&perPage=23`;
    const byCursor = await walk(t.rt.app, url, t.key);
    const byNumber: any[] = [];
    for (let page = 1; page <= byCursor.pages; page++) byNumber.push(...(await get(t.rt.app, `${url}&page=${page}`, t.key)).body.data);
    expect(byCursor.pages).toBeGreaterThan(2);
    expect(byCursor.items.map((i) => i.id)).toEqual(byNumber.map((i) => i.id));
    expect(byCursor.items.length).toBe(byCursor.total);
  });

  it('a cursor of another search, a forged one, or one with sort=DISTANCE is 400 naming cursor', async () => {
    const first = await get(t.rt.app, '/v1/search/rentals?areas=300&sort=PRICE&perPage=10', t.key);
    const cursor = new URL(first.body.meta.links.next, 'http://x').searchParams.get('cursor')!;
    for (const url of [
      `/v1/search/rentals?areas=200&sort=PRICE&perPage=10&cursor=${cursor}`,
      `/v1/search/rentals?areas=300&sort=PRICE&sortDir=ASC&perPage=10&cursor=${cursor}`,
      `/v1/search/rentals?areas=300&sort=PRICE&perPage=10&cursor=${Buffer.from('{"k":[1],"id":"1","f":"x"}').toString('base64url')}`,
      '/v1/search/rentals?areas=300&sort=PRICE&perPage=10&cursor=notacursor',
      `/v1/search/rentals?near=40.7128,-74.006&sort=DISTANCE&perPage=10&cursor=${cursor}`,
    ]) {
      const res = await get(t.rt.app, url, t.key);
      expect(res.status, url).toBe(400);
      expect(res.body.errors.map((e: any) => e.name)).toEqual(['cursor']);
    }
    // The same search with another page size keeps the cursor.
    expect((await get(t.rt.app, `/v1/search/rentals?areas=300&sort=PRICE&perPage=5&cursor=${cursor}`, t.key)).status).toBe(200);
  });
});
