import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_TOOLS } from '../../src/agents/mcp-tools.js';
import { RentalsQuery } from '../../src/http/schemas/search-query.js';
import { get } from '../helpers/http.js';
import { CLI, ROOT, SHARED_DATA_WITHOUT_RENTHOP, TEMPLATE_WITHOUT_RENTHOP_DB } from '../helpers/paths.js';
import { listening, useSharedTestRuntime } from '../helpers/runtime.js';

// The MCP server, through the official SDK's own client, over Streamable HTTP (/mcp) and stdio (`nyc-listings mcp`).
const t = useSharedTestRuntime('pro', { withoutRentHop: true });
let base: string;
const clients: Client[] = [];

async function httpClient(key?: string): Promise<Client> {
  const client = new Client({ name: 'nyc-listings-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} } }),
  );
  clients.push(client);
  return client;
}

const textOf = (result: Awaited<ReturnType<Client['callTool']>>) =>
  JSON.parse((result.content as { type: string; text: string }[])[0].text);

beforeAll(async () => {
  base = await listening(t.rt);
});
afterAll(async () => {
  for (const c of clients) await c.close();
});

describe('the MCP server over Streamable HTTP', () => {
  it("lists one tool per read route, each with the route's own parameters as its input schema", async () => {
    const client = await httpClient(t.key);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(MCP_TOOLS.map((tool) => tool.name));
    const rentals = tools.find((tool) => tool.name === 'search_rentals')!;
    const expected = Object.keys(RentalsQuery.properties)
      .filter((k) => !['format', 'fields'].includes(k))
      .sort();
    expect(Object.keys(rentals.inputSchema.properties ?? {}).sort()).toEqual(expected);
    expect(rentals.inputSchema.properties!.maxPrice).toEqual(JSON.parse(JSON.stringify(RentalsQuery.properties.maxPrice)));
    expect(tools.find((tool) => tool.name === 'get_listing')!.inputSchema.required).toEqual(['id']);
    for (const tool of tools) expect(tool.description!.length, tool.name).toBeGreaterThan(10);
  });

  it('a tool answers what the route answers for the same key: a 2-bedroom rental in Williamsburg under $3,500, its detail and comparables', async () => {
    const client = await httpClient(t.key);
    const args = { areas: 'williamsburg', minBeds: 2, maxBeds: 2, maxPrice: 3500, sort: 'PRICE', sortDir: 'ASC', perPage: 5 };
    const found = await client.callTool({ name: 'search_rentals', arguments: args });
    expect(found.isError).toBeFalsy();
    const http = await get(
      t.rt.app,
      '/v1/search/rentals?areas=williamsburg&minBeds=2&maxBeds=2&maxPrice=3500&sort=PRICE&sortDir=ASC&perPage=5',
      t.key,
    );
    const answer = textOf(found);
    expect(answer.data).toEqual(http.body.data);
    expect(answer.meta.total).toBe(http.body.meta.total);
    expect(answer.meta).toHaveProperty('dataAge');
    expect(found.structuredContent).toEqual(answer);
    expect(answer.data.length).toBeGreaterThan(0);
    const listing = answer.data[0];
    expect(listing.bedroomCount).toBe(2);
    expect(listing.price).toBeLessThanOrEqual(3500);
    const detail = textOf(await client.callTool({ name: 'get_listing', arguments: { id: listing.id } }));
    expect(detail.data).toEqual((await get(t.rt.app, `/v1/property/${listing.id}`, t.key)).body.data);
    const comparables = textOf(await client.callTool({ name: 'comparables', arguments: { id: listing.id, limit: 3 } }));
    expect(comparables.data.map((c: { listing: { id: string } }) => c.listing.id)).toEqual(
      (await get(t.rt.app, `/v1/property/${listing.id}/comparables?limit=3`, t.key)).body.data.map(
        (c: { listing: { id: string } }) => c.listing.id,
      ),
    );
    const estimate = textOf(await client.callTool({ name: 'estimate_listing', arguments: { id: listing.id } }));
    expect(estimate.data).toEqual((await get(t.rt.app, `/v1/property/${listing.id}/estimate`, t.key)).body.data);
    expect(estimate.data.estimate).toEqual(expect.any(Number));
    const property = { kind: 'rental', near: `${listing.geoPoint.latitude},${listing.geoPoint.longitude}`, bedrooms: 2, bathrooms: 1 };
    const estimated = textOf(await client.callTool({ name: 'estimate_property', arguments: property }));
    expect(estimated.data).toEqual(
      (await get(t.rt.app, `/v1/estimate?${new URLSearchParams({ ...property, bedrooms: '2', bathrooms: '1' })}`, t.key)).body.data,
    );
    expect(estimated.data.pricePosition).toBeNull();
  });

  it('keys, plans and validation apply as over HTTP: refusals are error results carrying the problem', async () => {
    const anonymous = await httpClient();
    expect((await anonymous.callTool({ name: 'search_sales', arguments: { perPage: 50 } })).isError).toBeFalsy();
    const capped = textOf(await anonymous.callTool({ name: 'search_sales', arguments: { perPage: 50 } }));
    expect(capped.meta.perPage).toBe(10);
    const refused = await anonymous.callTool({ name: 'get_building', arguments: { id: '44518357' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatchObject({ status: 401, code: 'MISSING_API_KEY' });
    const free = await httpClient(await t.rt.key('free'));
    expect(textOf(await free.callTool({ name: 'comparables', arguments: { id: '1545' } }))).toMatchObject({
      status: 403,
      code: 'PLAN_REQUIRED',
    });
    const client = await httpClient(t.key);
    const bad = await client.callTool({ name: 'search_rentals', arguments: { minBeds: 'two' } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatchObject({ status: 400, code: 'INVALID_PARAMS' });
    const unknown = await client.callTool({ name: 'find_areas', arguments: { q: 'williams', nope: 1 } });
    expect(textOf(unknown)).toMatchObject({ status: 400 });
  });

  it('/llms.txt describes the API, its operations and the MCP tools', async () => {
    const res = await t.rt.app.inject({ url: '/llms.txt' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/markdown/);
    expect(res.body).toMatch(/^# nyc-listings\n\n> /);
    for (const path of ['/v1/search/rentals', '/v1/property/{id}', '/v1/recorded-sales', '/v1/openapi.json'])
      expect(res.body).toContain(path);
    for (const tool of MCP_TOOLS) expect(res.body).toContain(tool.name);
  });
});

describe('the MCP server on stdio (`nyc-listings mcp`)', () => {
  it('answers the SDK client over stdio with the key given in the environment', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'mcp-')), 'mirror.db');
    copyFileSync(TEMPLATE_WITHOUT_RENTHOP_DB, db);
    const env = {
      ...process.env,
      DATABASE_URL: db,
      SHARED_DATA_DIR: SHARED_DATA_WITHOUT_RENTHOP,
      LOG_LEVEL: 'silent',
      MARKET_CLOCK: 'off',
      SYNC_INTERVAL_SECONDS: '0',
      OPEN_DATA_SYNC_INTERVAL_SECONDS: '0',
    } as Record<string, string>;
    const key = (await promisify(execFile)(process.execPath, [CLI, 'keys', 'issue', '--plan', 'pro'], { cwd: ROOT, env })).stdout.trim();
    const client = new Client({ name: 'nyc-listings-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp'],
        cwd: ROOT,
        env: { ...env, NYC_LISTINGS_API_KEY: key },
        stderr: 'ignore',
      }),
    );
    clients.push(client);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(MCP_TOOLS.map((tool) => tool.name));
    const areas = textOf(await client.callTool({ name: 'find_areas', arguments: { q: 'williamsbu' } }));
    expect(areas.data[0].name).toBe('Williamsburg');
    const building = await client.callTool({ name: 'get_building', arguments: { id: '44518357' } });
    expect(building.isError).toBeFalsy();
    expect(textOf(building).data.id).toBe('44518357');
  }, 60_000);
});
