import { describe, expect, it } from 'vitest';
import { expectProblem, get } from '../helpers/http.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';

const fold = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();

describe('areas by name', () => {
  const t = useSharedTestRuntime('pro');

  it('/v1/areas?q= finds areas whose name or a word of it starts with the text, ignoring case and accents, whole-name matches first', async () => {
    const all = (await get(t.rt.app, '/v1/areas?perPage=500', t.key)).body.data as { id: number; name: string; slug: string }[];
    for (const q of ['williams', 'WILLIAMS', 'Wíllíams', 'side', 'upper w']) {
      const res = await get(t.rt.app, `/v1/areas?q=${encodeURIComponent(q)}`, t.key);
      expect(res.status).toBe(200);
      const f = fold(q);
      const expected = all.filter(
        (a) =>
          fold(a.name).startsWith(f) ||
          fold(a.name)
            .split(/[\s-]+/)
            .some((w) => w.startsWith(f)),
      );
      expect(res.body.data.map((a: { id: number }) => a.id).sort()).toEqual(expected.map((a) => a.id).sort());
      const whole = res.body.data.map((a: { name: string }) => fold(a.name).startsWith(f));
      expect(whole).toEqual([...whole].sort((a, b) => Number(b) - Number(a)));
      expect(res.body.meta.total).toBe(expected.length);
    }
    expect((await get(t.rt.app, '/v1/areas?q=williams', t.key)).body.data.map((a: { name: string }) => a.name)).toEqual(
      expect.arrayContaining(['Williamsburg', 'Williamsbridge']),
    );
    expect((await get(t.rt.app, '/v1/areas?q=williamsbu', t.key)).body.data[0].name).toBe('Williamsburg');
    expect((await get(t.rt.app, '/v1/areas?q=williams&level=0', t.key)).body.data).toEqual([]);
  });

  it('areas= takes slugs beside ids, in any case, in searches, market figures and the change feed', async () => {
    const williamsburg = (await get(t.rt.app, '/v1/areas?q=williamsburg', t.key)).body.data.find(
      (a: { slug: string }) => a.slug === 'williamsburg',
    );
    expect(williamsburg).toBeDefined();
    const byId = await get(t.rt.app, `/v1/search/rentals?areas=${williamsburg.id}&perPage=50`, t.key);
    const bySlug = await get(t.rt.app, '/v1/search/rentals?areas=Williamsburg&perPage=50', t.key);
    expect(byId.body.meta.total).toBeGreaterThan(0);
    expect(bySlug.body.meta.total).toBe(byId.body.meta.total);
    expect(bySlug.body.data.map((l: { id: string }) => l.id)).toEqual(byId.body.data.map((l: { id: string }) => l.id));
    const mixed = await get(t.rt.app, `/v1/search/rentals?areas=${williamsburg.id},upper-west-side&perPage=1`, t.key);
    const uws = await get(t.rt.app, '/v1/search/rentals?areas=upper-west-side&perPage=1', t.key);
    expect(mixed.body.meta.total).toBe(byId.body.meta.total + uws.body.meta.total);
    const market = await get(t.rt.app, '/v1/market?kind=rental&areas=williamsburg', t.key);
    expect(market.body.data.activeCount).toBe(byId.body.meta.total);
    expect((await get(t.rt.app, '/v1/changes?since=0&areas=williamsburg', t.key)).status).toBe(200);
  });

  it('an unknown name is a 400 that suggests the nearest known slug', async () => {
    const body = await expectProblem(t.rt.app, '/v1/search/rentals?areas=wiliamsburg', 400, 'INVALID_PARAMS');
    expect(body.errors[0]).toMatchObject({ name: 'areas', in: 'query' });
    expect(body.errors[0].message).toMatch(/unknown area wiliamsburg \(did you mean williamsburg\?\)/);
    const far = await expectProblem(t.rt.app, '/v1/search/rentals?areas=zzzzzzzzzzzz', 400, 'INVALID_PARAMS');
    expect(far.errors[0].message).not.toMatch(/did you mean/);
    await expectProblem(t.rt.app, '/v1/search/rentals?areas=999999', 400, 'INVALID_PARAMS');
  });
});
