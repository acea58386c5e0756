import { afterAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { openApiDocument } from '../../src/http/openapi.js';
import { PLANS, type Plan } from '../../src/config.js';
import { startTestRuntime } from '../helpers/runtime.js';

// Who may call what, for every route the router knows: the answer with no key, an unknown key, a revoked
// key, a key one plan below the route's lowest plan and a key of that plan, exactly as the route's access
// rule (`config.access`, `config.minPlan`) and the OpenAPI document's `security` and `x-min-plan` say.
// Guards issue 29's first planted bug: a route given `anonymous` instead of `key` is caught here.

// The whole city's template, NYC Open Data's records included: over the one without them, the routes of recorded sales
// and buildings started their sync, and the runtime's close waited seconds for it.
const rt = await startTestRuntime();
afterAll(async () => rt.close());
const base = await rt.app.listen({ port: 0, host: '127.0.0.1' });

type Operation = {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean }[];
  responses: Record<string, unknown>;
  'x-min-plan'?: Plan;
};
const doc = openApiDocument(rt.app) as { paths: Record<string, Record<string, Operation>> };
const documentedPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');
const routes = rt.app.routeIndex.routes().filter((r) => r.method === 'GET');
const documented = routes.filter((r) => doc.paths[documentedPath(r.url)]?.get);
const undocumented = routes.filter((r) => !doc.paths[documentedPath(r.url)]?.get);

// A real value for each path and required query parameter, so that an answer past the access check is a 200.
const PATH_VALUE: Record<string, string> = {
  '/v1/areas/:id': '100',
  '/v1/building/:id': '44518357',
  '/v1/property/:id/sold-comparables': '8000000',
};
const QUERY_VALUE: Record<string, string> = {
  ids: '1545',
  url: '/rental/1545',
  kind: 'rental',
  bbox: '-74.02,40.70,-73.93,40.80',
  zoom: '12',
  near: '40.7146,-73.9566',
  bedrooms: '1',
};
// A route that needs one of two optional parameters (its description says which) is given one.
const ONE_OF: Record<string, string> = { '/v1/estimate': 'near' };
function urlOf(route: { url: string }): string {
  const operation = doc.paths[documentedPath(route.url)].get;
  const query = (operation.parameters ?? [])
    .filter((p) => p.in === 'query' && (p.required || ONE_OF[route.url] === p.name))
    .map((p) => `${p.name}=${encodeURIComponent(QUERY_VALUE[p.name])}`);
  return route.url.replace(/:\w+/, PATH_VALUE[route.url] ?? '1545') + (query.length ? `?${query.join('&')}` : '');
}

/** Status, headers and problem code of a real HTTP request; an event stream is closed once its head arrives. */
async function call(url: string, key?: string): Promise<{ status: number; type: string; code?: string; headers: Record<string, unknown> }> {
  const abort = new AbortController();
  const res = await request(`${base}${url}`, { headers: key ? { authorization: `Bearer ${key}` } : {}, signal: abort.signal });
  const type = String(res.headers['content-type'] ?? '').split(';')[0];
  let code: string | undefined;
  if (type === 'text/event-stream') abort.abort();
  else {
    const text = await res.body.text();
    if (type === 'application/problem+json') code = (JSON.parse(text) as { code: string }).code;
  }
  return { status: res.statusCode, type, code, headers: res.headers };
}

const keyOf = new Map<Plan, string>();
for (const plan of PLANS) keyOf.set(plan, await rt.key(plan));
const revoked = await rt.key('business');
await rt.keys.revoke((await rt.keys.list()).at(-1)!.id, new Date().toISOString());
const UNKNOWN = 'SERVICE_6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f';
const PUBLISHABLE = await rt.key('business', { origins: ['https://app.example'] });

describe('every route the router knows', () => {
  it("is in the OpenAPI document, or public and kept out of it on purpose (the document, its page and its assets, the MCP endpoint and llms.txt, whose calls are checked as API requests, the map explorer's page and assets, and the storefront's pages outside /v1)", () => {
    expect(documented.length).toBeGreaterThanOrEqual(17);
    for (const route of undocumented) {
      expect(route.access, route.url).toBe('public');
      expect(
        ['/v1/openapi.json', '/docs', '/mcp', '/llms.txt'].includes(route.url) ||
          route.url.startsWith('/docs/') ||
          route.url === '/explore' ||
          route.url.startsWith('/explore/') ||
          ['/pricing', '/billing/success', '/account'].includes(route.url),
        route.url,
      ).toBe(true);
    }
    // Every documented operation is a route (nothing documented that the router does not answer).
    const known = new Set(routes.map((r) => documentedPath(r.url)));
    for (const path of Object.keys(doc.paths)) expect(known.has(path), path).toBe(true);
  });

  it.each(undocumented.map((r) => [r.url]))('%s, undocumented and public, answers without a key', async (url) => {
    const res = await call(url.replace('*', 'index.css'));
    expect([401, 403]).not.toContain(res.status);
  });
});

describe.each(documented.map((r) => [`${r.method} ${r.url}`, r] as const))('%s', (_name, route) => {
  const operation = doc.paths[documentedPath(route.url)].get;
  const url = urlOf(route);
  const lowest: Plan = route.minPlan ?? 'free';

  it('the document says what the route enforces: security, x-min-plan and the documented refusals', () => {
    const security = operation.security ?? [];
    const optional = security.some((requirement) => Object.keys(requirement).length === 0);
    const bearer = security.some((requirement) => 'bearerAuth' in requirement);
    expect({ optional, bearer }).toEqual(
      { public: { optional: false, bearer: false }, anonymous: { optional: true, bearer: true }, key: { optional: false, bearer: true } }[
        route.access
      ],
    );
    expect(operation['x-min-plan']).toBe(route.minPlan);
    expect('401' in operation.responses).toBe(route.access !== 'public');
    // Every keyed route may refuse a publishable key from another origin; a public one never reads keys.
    expect('403' in operation.responses).toBe(route.access !== 'public');
  });

  it(`no key: ${route.access === 'key' ? '401 MISSING_API_KEY' : 'an answer'}`, async () => {
    const res = await call(url);
    if (route.access === 'key') {
      expect({ status: res.status, code: res.code, challenge: res.headers['www-authenticate'] }).toEqual({
        status: 401,
        code: 'MISSING_API_KEY',
        challenge: 'Bearer',
      });
    } else if (route.minPlan && route.minPlan !== 'free') {
      expect({ status: res.status, code: res.code }).toEqual({ status: 403, code: 'PLAN_REQUIRED' });
    } else {
      expect(res.status).toBe(200);
      // Anonymous callers are Free, limited per address.
      if (route.access === 'anonymous') expect(res.headers['x-ratelimit-limit']).toBe(String(rt.config.plans.free.perMinute));
    }
  });

  it.each([
    ['an unknown key', UNKNOWN],
    ['a revoked key', revoked],
  ])(
    `%s: ${route.access === 'public' ? 'an answer (the key is not read)' : '401 INVALID_API_KEY, never anonymous'}`,
    async (_what, key) => {
      const res = await call(url, key);
      if (route.access === 'public') expect(res.status).toBe(200);
      else
        expect({ status: res.status, code: res.code, type: res.type }).toEqual({
          status: 401,
          code: 'INVALID_API_KEY',
          type: 'application/problem+json',
        });
    },
  );

  if (route.access !== 'public' && lowest !== 'free') {
    const below = PLANS[PLANS.indexOf(lowest) - 1];
    it(`a ${below} key: 403 PLAN_REQUIRED`, async () => {
      expect(await call(url, keyOf.get(below))).toMatchObject({ status: 403, code: 'PLAN_REQUIRED' });
    });
  }

  if (route.access !== 'public') {
    it('a publishable key: 403 ORIGIN_NOT_ALLOWED from another origin, an answer from its own', async () => {
      const abort = new AbortController();
      const from = async (origin: string) => {
        const res = await request(`${base}${url}`, { headers: { authorization: `Bearer ${PUBLISHABLE}`, origin }, signal: abort.signal });
        if (String(res.headers['content-type']).startsWith('text/event-stream')) abort.abort();
        else await res.body.text();
        return res.statusCode;
      };
      expect(await from('https://evil.example')).toBe(403);
      expect(await from('https://app.example')).toBe(200);
    });
  }

  it(`a ${lowest} key: an answer${route.access === 'public' ? '' : `, limited as the ${lowest} plan`}`, async () => {
    const res = await call(url, keyOf.get(lowest));
    expect(res.status).toBe(200);
    if (route.access !== 'public' && route.url !== '/v1/usage')
      expect(res.headers['x-ratelimit-limit']).toBe(String(rt.config.plans[lowest].perMinute));
  });
});
