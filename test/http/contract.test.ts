import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { get } from '../helpers/http.js';
import { type TestRuntime, useSharedTestRuntime } from '../helpers/runtime.js';

// Sweeps every endpoint through the real app and validates each answer against the app's own
// OpenAPI document (JSON Schema 2020-12 via Ajv).
let rt: TestRuntime;
let key: string;
let openapi: any;
let ajv: any;

const shared = useSharedTestRuntime('business');
beforeAll(async () => {
  ({ rt, key } = shared);
  openapi = (await get(rt.app, '/v1/openapi.json')).body;
  ajv = new (Ajv2020 as any)({ strict: false, allErrors: true });
  (addFormats as any)(ajv);
  ajv.addSchema({ ...openapi, $id: 'openapi' });
});

const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Validates `body` against the documented response of `route` for `status`. */
function conforms(route: string, status: number, body: unknown, contentType: string) {
  const responses = openapi.paths[route]?.get?.responses;
  expect(responses, `route ${route} documented`).toBeDefined();
  expect(responses[String(status)], `${route} documents ${status}`).toBeDefined();
  const media = status >= 400 ? 'application/problem+json' : 'application/json';
  const content = responses[String(status)].content;
  expect(content[media], `${route} ${status} documented as ${media}`).toBeDefined();
  const type = media;
  const validate = ajv.getSchema(`openapi#/paths/${pointer(route)}/get/responses/${status}/content/${pointer(type)}/schema`);
  expect(validate, `schema for ${route} ${status}`).toBeTruthy();
  const ok = validate(body);
  expect(ok, `${route} ${status}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
  if (status >= 400) expect(contentType).toMatch(/^application\/problem\+json/);
  else expect(contentType).toMatch(/^application\/json/);
}

async function check(route: string, url: string, status: number, withKey: string | null = key) {
  const res = await get(rt.app, url, withKey ?? undefined);
  expect(res.status, `${url}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(status);
  conforms(route, status, res.body, String(res.headers['content-type']));
  expect(res.headers['x-request-id']).toBeTruthy();
  return res.body;
}

describe('contract: every endpoint, envelope and meta', () => {
  it('documents all six endpoints and the bearer scheme in OpenAPI 3.1', () => {
    expect(openapi.openapi).toBe('3.1.0');
    for (const path of [
      '/v1/search/sales',
      '/v1/search/rentals',
      '/v1/property/{id}',
      '/v1/property/by-url',
      '/v1/building/{id}',
      '/v1/areas',
    ]) {
      expect(openapi.paths[path]?.get, path).toBeDefined();
    }
    expect(openapi.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('search endpoints: list envelope with pagination meta', async () => {
    for (const [route, url] of [
      ['/v1/search/sales', '/v1/search/sales?areas=100&perPage=5'],
      ['/v1/search/rentals', '/v1/search/rentals?maxPrice=3000&minBeds=1&page=2&perPage=3'],
    ]) {
      const body = await check(route, url, 200);
      expect(Object.keys(body).sort()).toEqual(['data', 'meta']);
      expect(body.meta).toMatchObject({ source: 'cached', refreshTriggered: false, freshnessThreshold: 3600 });
      expect(Date.parse(body.meta.dataAge)).not.toBeNaN();
      expect(body.meta.total).toBeGreaterThan(0);
      expect(body.meta.links.self).toMatch(/^\/v1\//);
    }
    await check('/v1/search/sales', '/v1/search/sales?perPage=2', 200, null);
  });

  it('property by id and by url, building by id and slug, areas', async () => {
    const sale = await check('/v1/property/{id}', '/v1/property/8000000', 200);
    expect(sale.data).toMatchObject({ id: '8000000', status: 'ACTIVE', address: { street: '2 E 55th St', unit: '803', zipCode: '10022' } });
    expect(Object.keys(sale.meta).sort()).toEqual(['dataAge', 'freshnessThreshold', 'refreshTriggered', 'source']);
    const byUrl = await check('/v1/property/by-url', `/v1/property/by-url?url=${encodeURIComponent(sale.data.urlPath)}`, 200);
    expect(byUrl.data.id).toBe('8000000');
    const withHost = await check(
      '/v1/property/by-url',
      `/v1/property/by-url?url=${encodeURIComponent('https://upstream.example/rental/1545')}`,
      200,
    );
    expect(withHost.data).toMatchObject({ id: '1545', price: 2550, bedroomCount: 0, noFee: true });
    expect(withHost.data.amenities).toContainEqual({ name: 'DOORMAN', available: false });
    expect(withHost.data.amenities).toContainEqual({ name: 'GYM', available: true });

    const building = await check('/v1/building/{id}', `/v1/building/${sale.data.buildingId}`, 200);
    expect(building.data.slug).toBe('2-e-55th-st-manhattan');
    expect(building.data.saleInventory.activeCount).toBeGreaterThan(0);
    const bySlug = await check('/v1/building/{id}', '/v1/building/2-e-55th-st-manhattan', 200);
    expect(bySlug.data.id).toBe(building.data.id);

    const areas = await check('/v1/areas', '/v1/areas', 200);
    expect(areas.meta.total).toBe(320); // the site's areas.json: 346 areas less the root and New Jersey
    await check('/v1/areas', '/v1/areas?level=0', 200);
  });

  it('every 4xx is problem+json and documented', async () => {
    await check('/v1/search/sales', '/v1/search/sales?bogus=1', 400);
    await check('/v1/search/rentals', '/v1/search/rentals?perPage=0', 400);
    await check('/v1/property/{id}', '/v1/property/999999999', 404);
    await check('/v1/property/{id}', '/v1/property/1545', 401, null);
    await check('/v1/property/by-url', '/v1/property/by-url?url=/building/nowhere/1a', 404);
    await check('/v1/property/by-url', '/v1/property/by-url', 400);
    await check('/v1/building/{id}', '/v1/building/no-such-building', 404);
    await check('/v1/areas', '/v1/areas?level=7', 400);
    await check('/v1/areas', '/v1/areas', 401, null);
    const unknown = await get(rt.app, '/v1/nothing-here', key);
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('health and docs are served', async () => {
    const health = await get(rt.app, '/v1/health');
    expect(health.body.status).toBe('ok');
    expect(health.body.scopes.map((s: any) => s.scope)).toContain('sale:100');
    const docs = await rt.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('swagger');
  });
});
