import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { get } from '../helpers/http.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';

// What an app developer expects of an HTTP API: browser access, compression, conditional requests,
// pagination headers, an index. Through the real app.
const t = useSharedTestRuntime('pro');
const ORIGIN = 'https://app.example';

describe('browser access (CORS)', () => {
  it('a preflight of a search is answered without a key, allowing Authorization from any origin', async () => {
    const res = await t.rt.app.inject({
      method: 'OPTIONS',
      url: '/v1/property/8000000',
      headers: { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('answers carry Access-Control-Allow-Origin and expose the rate-limit, request-id, ETag and Link headers', async () => {
    const res = await t.rt.app.inject({
      url: '/v1/search/rentals?perPage=2',
      headers: { origin: ORIGIN, authorization: `Bearer ${t.key}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase();
    for (const name of ['ratelimit', 'ratelimit-policy', 'retry-after', 'x-request-id', 'etag', 'link']) expect(exposed).toContain(name);
  });
});

describe('compression', () => {
  it('a page of 500 sales comes gzip- and br-compressed on request, and decompresses to the same JSON', async () => {
    const url = '/v1/search/sales?perPage=500';
    const plain = await t.rt.app.inject({ url, headers: { authorization: `Bearer ${t.key}` } });
    const gzip = await t.rt.app.inject({ url, headers: { authorization: `Bearer ${t.key}`, 'accept-encoding': 'gzip' } });
    const br = await t.rt.app.inject({ url, headers: { authorization: `Bearer ${t.key}`, 'accept-encoding': 'br' } });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(br.headers['content-encoding']).toBe('br');
    const json = JSON.parse(plain.body);
    expect(JSON.parse(gunzipSync(gzip.rawPayload).toString()).data).toEqual(json.data);
    expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString()).data).toEqual(json.data);
    console.log(`compression: ${plain.rawPayload.length} bytes plain, ${gzip.rawPayload.length} gzip, ${br.rawPayload.length} br`);
    expect(gzip.rawPayload.length).toBeLessThan(plain.rawPayload.length / 5);
  });
});

describe('conditional requests and caching headers', () => {
  it('a strong ETag; If-None-Match answers 304, which counts toward neither limit', async () => {
    const key = await t.rt.key('starter');
    const url = '/v1/property/8000000';
    const first = await t.rt.app.inject({ url, headers: { authorization: `Bearer ${key}` } });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    const usage = async () => (await get(t.rt.app, '/v1/usage', key)).body.data;
    const before = await usage();
    const again = await t.rt.app.inject({ url, headers: { authorization: `Bearer ${key}`, 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const after = await usage();
    expect(after.month.used).toBe(before.month.used);
    expect(after.minute.used).toBe(before.minute.used);
    const changed = await t.rt.app.inject({ url, headers: { authorization: `Bearer ${key}`, 'if-none-match': '"other"' } });
    expect(changed.statusCode).toBe(200);
    expect((await usage()).month.used).toBe(before.month.used + 1);
  });

  it('Last-Modified is meta.dataAge; Cache-Control private with the seconds left in the freshness window; Vary', async () => {
    const res = await t.rt.app.inject({ url: '/v1/search/sales?perPage=1', headers: { authorization: `Bearer ${t.key}` } });
    const meta = JSON.parse(res.body).meta;
    expect(res.headers['last-modified']).toBe(new Date(meta.dataAge).toUTCString());
    const left = Number(/^private, max-age=(\d+)$/.exec(String(res.headers['cache-control']))![1]);
    const expected = meta.freshnessThreshold - (Date.now() - Date.parse(meta.dataAge)) / 1000;
    expect(Math.abs(left - expected)).toBeLessThan(5);
    expect(res.headers.vary).toMatch(/Authorization/i);
    expect(res.headers.vary).toMatch(/Accept-Encoding/i);
  });
});

describe('pagination headers', () => {
  it('RFC 8288 Link has first, prev, next and last, equal to meta.links', async () => {
    const res = await t.rt.app.inject({
      url: '/v1/search/rentals?areas=300&page=2&perPage=5',
      headers: { authorization: `Bearer ${t.key}` },
    });
    const links = JSON.parse(res.body).meta.links;
    const parsed = Object.fromEntries(
      String(res.headers.link)
        .split(', ')
        .map((part) => /^<([^>]+)>; rel="(\w+)"$/.exec(part)!)
        .map((m) => [m[2], m[1]]),
    );
    expect(parsed).toEqual({ first: links.first, prev: links.prev, next: links.next, last: links.last });
    const firstPage = await t.rt.app.inject({
      url: '/v1/search/rentals?areas=300&perPage=5',
      headers: { authorization: `Bearer ${t.key}` },
    });
    expect(String(firstPage.headers.link)).not.toContain('rel="prev"');
  });
});

describe('the index', () => {
  it('/ and /v1 answer a small JSON index without a key, pointing to the docs and every endpoint', async () => {
    for (const url of ['/', '/v1']) {
      const res = await get(t.rt.app, url);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'nyc-listings', links: { docs: '/docs', openapi: '/v1/openapi.json' } });
      expect(res.body.endpoints.map((e: { path: string }) => e.path)).toContain('/v1/search/sales');
    }
  });

  it('the OpenAPI document names every operation, its servers, tags and licence', async () => {
    const doc = (await get(t.rt.app, '/v1/openapi.json')).body;
    const operations = Object.values(doc.paths).flatMap((item: any) => Object.values(item)) as { operationId?: string; tags?: string[] }[];
    expect(operations.length).toBeGreaterThanOrEqual(10);
    expect(operations.every((o) => o.operationId && o.tags?.length)).toBe(true);
    expect(new Set(operations.map((o) => o.operationId)).size).toBe(operations.length);
    // The response headers are documented, and a real answer carries every one documented for it.
    const documented = Object.keys(doc.paths['/v1/search/sales'].get.responses['200'].headers);
    expect(documented).toEqual(
      expect.arrayContaining(['X-Request-Id', 'RateLimit', 'RateLimit-Policy', 'ETag', 'Last-Modified', 'Cache-Control', 'Link']),
    );
    expect(Object.keys(doc.paths['/v1/search/sales'].get.responses['429'].headers)).toContain('Retry-After');
    const real = await t.rt.app.inject({ url: '/v1/search/sales?perPage=2', headers: { authorization: `Bearer ${t.key}` } });
    for (const name of documented) expect(real.headers[name.toLowerCase()], name).toBeDefined();
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    // Every /v1 operation shows a real answer of the default data set (Redocly checks it against the schema).
    for (const [path, item] of Object.entries(doc.paths) as [string, any][]) {
      if (!path.startsWith('/v1/')) continue;
      const content = item.get.responses['200'].content;
      expect((content['application/json'] ?? content['text/event-stream']).examples?.realAnswer?.value, path).toBeDefined();
    }
    expect(doc.info.license.name).toBe('MIT');
  });
});

describe('sparse fields', () => {
  it('fields= keeps only those fields (and id) on searches, details and batches; the rest of the answer is whole', async () => {
    const whole = await get(t.rt.app, '/v1/search/rentals?areas=300&sort=PRICE&perPage=5', t.key);
    const sparse = await get(t.rt.app, '/v1/search/rentals?areas=300&sort=PRICE&perPage=5&fields=price,address', t.key);
    expect(sparse.status).toBe(200);
    expect(sparse.body.data).toEqual(whole.body.data.map((l: any) => ({ id: l.id, price: l.price, address: l.address })));
    expect(sparse.body.meta.total).toBe(whole.body.meta.total);
    const detail = await get(t.rt.app, '/v1/property/1545?fields=priceHistory,amenities', t.key);
    const full = await get(t.rt.app, '/v1/property/1545', t.key);
    expect(detail.body.data).toEqual({ id: '1545', priceHistory: full.body.data.priceHistory, amenities: full.body.data.amenities });
    expect((await get(t.rt.app, '/v1/property/by-url?url=/rental/1545&fields=price', t.key)).body.data).toEqual({
      id: '1545',
      price: full.body.data.price,
    });
    expect(
      (await get(t.rt.app, '/v1/properties?ids=1545,8000000&fields=status', t.key)).body.data.map((l: any) => Object.keys(l).sort()),
    ).toEqual([
      ['id', 'status'],
      ['id', 'status'],
    ]);
    const geo = await t.rt.app.inject({
      url: '/v1/search/rentals?areas=300&perPage=2&fields=price&format=geojson',
      headers: { authorization: `Bearer ${t.key}` },
    });
    expect(JSON.parse(geo.body).features.map((f: any) => Object.keys(f.properties).sort())).toEqual([
      ['id', 'price'],
      ['id', 'price'],
    ]);
  });

  it('an unknown field is 400 naming it; fields with CSV is 400', async () => {
    for (const [url, named] of [
      ['/v1/search/sales?fields=price,colour', 'colour'],
      ['/v1/property/1545?fields=pricehistory', 'pricehistory'],
      ['/v1/search/sales?fields=price&format=csv', 'CSV'],
    ]) {
      const res = await get(t.rt.app, url, t.key);
      expect(res.status, url).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ name: 'fields', message: expect.stringContaining(named) })]);
    }
  });
});
