import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../helpers/http.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';

// Requests an attacker or a broken client sends, through the real app on loopback: every answer is a
// problem document with the expected status and code (never a 5xx), and nothing stored or fetched changes.
let rt: TestRuntime;
let key: string;
let port: number;

beforeAll(async () => {
  rt = await startTestRuntime();
  key = await rt.key('pro');
  await rt.app.listen({ port: 0, host: '127.0.0.1' });
  port = (rt.app.server.address() as { port: number }).port;
});
afterAll(async () => rt.close());

/** Everything stored, and how often the upstream was asked: a change anywhere shows. */
async function fingerprint() {
  const q = await sql<{ n: number; seen: string; prices: number; scopes: string; keys: string }>`
    select (select count(*) from listings) as n, (select max(last_seen_at) from listing_sightings) as seen,
           (select count(*) from price_history) as prices, (select group_concat(scope || last_attempt_at) from sync_scopes) as scopes`.execute(
    rt.store.db,
  );
  return { ...q.rows[0], upstreamRequests: rt.upstream!.requestCount() };
}

interface Case {
  name: string;
  /** The request head's first line without the version, e.g. `GET /v1/x` (sent as HTTP/1.1 unless `version`). */
  line: string;
  headers?: Record<string, string>;
  version?: string;
  body?: string;
  /** Send the pro key. */
  keyed?: boolean;
  status: number;
  code?: string;
  /** A parameter `errors[]` must name. */
  param?: string;
  /** No route has this path: the answer points to the documentation. */
  noRoute?: boolean;
}

function head(c: Case): string {
  const headers: Record<string, string> = {
    Host: 'x',
    Connection: 'close',
    ...(c.keyed ? { Authorization: `Bearer ${key}` } : {}),
    ...c.headers,
  };
  if (c.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(c.body));
  return `${c.line} ${c.version ?? 'HTTP/1.1'}\r\n${Object.entries(headers)
    .map(([n, v]) => `${n}: ${v}`)
    .join('\r\n')}\r\n\r\n${c.body ?? ''}`;
}

const q = (param: string, value: string, path = '/v1/search/sales'): Case => ({
  name: `${path}?${param}=${value}`,
  line: `GET ${path}?${param}=${value}`,
  keyed: true,
  status: 400,
  code: 'INVALID_PARAMS',
  param,
});

const CASES: Case[] = [
  // 1. the key check cannot be bypassed with an absolute-form request target
  { name: 'absolute-form target, no key', line: 'GET http://x/v1/property/8000000', status: 401, code: 'MISSING_API_KEY' },
  {
    name: 'absolute-form target of a listing not mirrored, no key',
    line: 'GET http://x/v1/property/987654321',
    status: 401,
    code: 'MISSING_API_KEY',
  },
  { name: 'absolute-form /v1/usage, no key', line: 'GET http://x/v1/usage', status: 401, code: 'MISSING_API_KEY' },
  {
    name: 'absolute-form building, no key',
    line: 'GET http://x/v1/building/80-elizabeth-street-manhattan',
    status: 401,
    code: 'MISSING_API_KEY',
  },
  {
    name: 'absolute-form areas with a bad key',
    line: 'GET https://other.example/v1/areas',
    headers: { Authorization: 'Bearer nope' },
    status: 401,
    code: 'INVALID_API_KEY',
  },
  // 2. an empty Authorization header is a malformed credential
  {
    name: 'empty Authorization on a search',
    line: 'GET /v1/search/sales?perPage=1',
    headers: { Authorization: '' },
    status: 401,
    code: 'INVALID_API_KEY',
  },
  {
    name: 'Authorization of spaces',
    line: 'GET /v1/search/rentals',
    headers: { Authorization: '   ' },
    status: 401,
    code: 'INVALID_API_KEY',
  },
  {
    name: 'Basic scheme',
    line: 'GET /v1/search/sales',
    headers: { Authorization: 'Basic dXNlcjpwYXNz' },
    status: 401,
    code: 'INVALID_API_KEY',
  },
  {
    name: 'Bearer without a key',
    line: 'GET /v1/search/sales',
    headers: { Authorization: 'Bearer' },
    status: 401,
    code: 'INVALID_API_KEY',
  },
  // 3. numbers: plain decimal digits within range, nothing else
  q('page', 'Infinity'),
  q('perPage', 'Infinity'),
  q('minDaysOnMarket', 'Infinity'),
  q('minPrice', '1e400'),
  q('minPrice', '-Infinity'),
  q('maxPrice', 'NaN'),
  q('minPrice', '0x10'),
  q('minPrice', '%201'),
  q('minPrice', '1%20'),
  q('minPrice', '%EF%BB%BF1'),
  q('minPrice', '1e3'),
  q('minPrice', '%2B5'),
  q('minPrice', '1_000'),
  q('minBeds', '2.0'),
  q('page', '999999999999'),
  q('page', '99999999999999999999999'),
  q('petsAllowed', '1'),
  q('petsAllowed', 'TRUE'),
  q('level', 'Infinity', '/v1/areas'),
  // 4. instants: validated, then normalised
  q('listedAfter', '2016-12-31T23:59:60Z'),
  q('listedAfter', '2020-01-01T00:00:00%2B05'),
  q('listedAfter', '9999-12-31T23:59:59-23:59'),
  q('listedBefore', '0999-01-01T00:00:00Z'),
  q('listedAfter', '2020-02-30T00:00:00Z'),
  q('listedAfter', '2020-01-01T24:00:00Z'),
  q('listedAfter', '99999-01-01T00:00:00Z'),
  q('listedAfter', '2020-01-01'),
  q('availableBefore', '2021-02-29', '/v1/search/rentals'),
  // 5. control characters in any parameter
  q('url', '/rental/1545%00', '/v1/property/by-url'),
  q('url', '/rental/1545%0A', '/v1/property/by-url'),
  q('url', '%1F/rental/1545', '/v1/property/by-url'),
  q('areas', '100%00'),
  q('sort', 'PRICE%0D'),
  { name: 'NUL in a path parameter', line: 'GET /v1/property/1545%00', keyed: true, status: 400, code: 'INVALID_PARAMS', param: 'id' },
  { name: 'DEL in a building slug', line: 'GET /v1/building/a%7Fb', keyed: true, status: 400, code: 'INVALID_PARAMS', param: 'id' },
  // 6. framework-level errors are problem documents too
  { name: 'bad percent-escape in the path', line: 'GET /v1/property/%zz', keyed: true, status: 400, code: 'BAD_REQUEST' },
  {
    name: 'path parameter over the router limit',
    line: `GET /v1/building/${'b'.repeat(3000)}`,
    keyed: true,
    status: 414,
    code: 'URI_TOO_LONG',
  },
  {
    name: 'request head over the size limit',
    line: 'GET /v1/search/sales',
    headers: { 'X-Padding': 'a'.repeat(20_000) },
    status: 431,
    code: 'HEADERS_TOO_LARGE',
  },
  {
    name: 'control character in a header',
    line: 'GET /v1/search/sales',
    headers: { 'X-Thing': 'a\u0001b' },
    status: 400,
    code: 'BAD_REQUEST',
  },
  {
    name: 'large body on POST',
    line: 'POST /v1/search/sales',
    headers: { 'Content-Type': 'application/json' },
    body: `"${'a'.repeat(2_000_000)}"`,
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  { name: 'POST a search', line: 'POST /v1/search/sales', body: '', status: 405, code: 'METHOD_NOT_ALLOWED' },
  {
    name: 'POST JSON with no body',
    line: 'POST /v1/search/sales',
    headers: { 'Content-Type': 'application/json' },
    body: '',
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },
  {
    name: 'POST malformed JSON',
    line: 'POST /v1/search/rentals',
    headers: { 'Content-Type': 'application/json' },
    body: '{"a":',
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },
  {
    name: 'PUT a body of an unknown type',
    line: 'PUT /v1/areas',
    headers: { 'Content-Type': 'application/x-thing' },
    body: 'x',
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },
  { name: 'DELETE a listing without a key', line: 'DELETE /v1/property/8000000', status: 405, code: 'METHOD_NOT_ALLOWED' },
  {
    name: 'PUT a building',
    line: 'PUT /v1/building/80-elizabeth-street-manhattan',
    keyed: true,
    body: '{}',
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },
  { name: 'PATCH the health', line: 'PATCH /v1/health', body: '', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { name: 'an unknown path', line: 'GET /v1/listings', status: 404, code: 'NOT_FOUND', noRoute: true },
  { name: 'an unknown path under a known one', line: 'GET /v1/search/sales/extra', status: 404, code: 'NOT_FOUND', noRoute: true },
  // already answered well: they stay so
  q('areas', '%E2%91%A0'),
  q('areas', '100%E2%80%8F'),
  q('__proto__', '1'),
  q('constructor', '1'),
  q('minPrice', '100&minPrice=200'),
  {
    name: 'RTL mark in a listing URL',
    line: 'GET /v1/property/by-url?url=/rental/1545%E2%80%8F',
    keyed: true,
    status: 404,
    code: 'NOT_FOUND',
  },
  { name: 'unicode listing id', line: 'GET /v1/property/%E2%98%83', keyed: true, status: 400, code: 'INVALID_PARAMS', param: 'id' },
];

describe('hostile input: a problem document with a stable code, never a 5xx, and nothing changes', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const before = await fingerprint();
    const res = await rawRequest(port, head(c));
    expect(res.status, res.body.slice(0, 300)).toBe(c.status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ status: c.status, code: c.code });
    expect(typeof body.title).toBe('string');
    expect(body.detail.length).toBeLessThan(700);
    if (c.param) expect(body.errors.map((e: { name: string }) => e.name)).toContain(c.param);
    if (c.status === 405) expect(res.headers.allow).toBe('GET, HEAD');
    if (c.noRoute) expect(body.detail).toContain('/docs');
    expect(res.body).not.toContain('b'.repeat(700)); // an over-long target is never echoed whole
    expect(await fingerprint()).toEqual(before);
  });

  it('an absolute-form target is judged by the route it matches: rate-limit headers, and the key counted', async () => {
    const res = await rawRequest(port, head({ name: '', line: 'GET http://x/v1/search/sales?perPage=1', keyed: true, status: 200 }));
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    const anonymous = await rawRequest(port, head({ name: '', line: 'GET http://x/v1/search/rentals?perPage=1', status: 200 }));
    expect(anonymous.status).toBe(200);
    expect(JSON.parse(anonymous.body).meta.perPage).toBe(1);
    expect(anonymous.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('an instant with an offset is normalised to UTC before it is compared', async () => {
    const total = async (instant: string) => {
      const res = await rt.app.inject({
        url: `/v1/search/sales?perPage=1&listedAfter=${encodeURIComponent(instant)}`,
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      return JSON.parse(res.body).meta.total as number;
    };
    const listed = (
      await rt.store.db.selectFrom('listings').select('listed_at').where('kind', '=', 'sale').where('status', '=', 'ACTIVE').execute()
    )
      .map((r) => r.listed_at)
      .filter((d): d is string => d !== null)
      .sort();
    const middle = new Date(listed[Math.floor(listed.length / 2)]);
    const offset = `${new Date(middle.getTime() - 5 * 3_600_000).toISOString().slice(0, 19)}-05:00`;
    const expected = listed.filter((d) => d > middle.toISOString()).length;
    expect(await total(middle.toISOString())).toBe(expected);
    expect(await total(offset)).toBe(expected);
  });

  it('HTTP/1.0, HEAD and two Authorization headers are answered', async () => {
    const old = await rawRequest(port, head({ name: '', line: 'GET /v1/search/sales?perPage=1', version: 'HTTP/1.0', status: 200 }));
    expect(old.status).toBe(200);
    const headOnly = await rawRequest(port, head({ name: '', line: 'HEAD /v1/search/sales?perPage=1', status: 200 }));
    expect(headOnly.status).toBe(200);
    expect(headOnly.body).toBe('');
    const headProperty = await rawRequest(port, head({ name: '', line: 'HEAD /v1/property/8000000', status: 401 }));
    expect(headProperty.status).toBe(401);
    const twice = await rawRequest(
      port,
      `GET /v1/property/8000000 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nAuthorization: Bearer nope\r\nConnection: close\r\n\r\n`,
    );
    expect([200, 401]).toContain(twice.status);
  });
});

describe('a limited key stays limited whatever the request target looks like', () => {
  it('after its 10 searches a minute, an absolute-form target is refused too (429)', async () => {
    const limited = await startTestRuntime({}, { realLimits: true });
    try {
      await limited.app.listen({ port: 0, host: '127.0.0.1' });
      const limitedPort = (limited.app.server.address() as { port: number }).port;
      const free = await limited.key('free');
      const auth = { Authorization: `Bearer ${free}` };
      for (let i = 0; i < 10; i++)
        expect(
          (await rawRequest(limitedPort, head({ name: '', line: 'GET /v1/search/sales?perPage=1', headers: auth, status: 200 }))).status,
        ).toBe(200);
      for (const line of ['GET http://x/v1/search/sales?perPage=1', 'GET http://x/v1/property/8000000', 'GET /v1/search/sales?perPage=1']) {
        const res = await rawRequest(limitedPort, head({ name: '', line, headers: auth, status: 429 }));
        expect(res.status, line).toBe(429);
        expect(JSON.parse(res.body).code).toBe('RATE_LIMIT_EXCEEDED');
      }
    } finally {
      await limited.close();
    }
  });
});
