// Captures real answers of the embedded default data set (local upstream, market clock off, a fresh start) as the
// OpenAPI document's examples and the README's "Real answers" block: `npm run openapi:examples` rewrites
// docs/openapi-examples.json (lists cut to two items so the document stays small; each request's parameters become
// the operation's parameter examples) and the README between its markers (abridged further, see `abridge`).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { request } from 'undici';
import { loadConfig } from '../src/config.js';
import { issueKey } from '../src/keys/key-admin.js';
import { startRuntime } from '../src/runtime.js';
import { abridge, README_CALLS, README_MARKERS } from './readme-answers.js';

const REQUESTS: [string, string][] = [
  ['/v1/search/sales', '/v1/search/sales?areas=108&sort=PRICE&sortDir=ASC&perPage=2'],
  ['/v1/search/rentals', '/v1/search/rentals?areas=300&amenities=DOORMAN&noFee=true&sort=PRICE&sortDir=ASC&perPage=2'],
  ['/v1/search/sales/clusters', '/v1/search/sales/clusters?bbox=-74.02,40.70,-73.93,40.80&zoom=12&minBeds=2'],
  ['/v1/search/rentals/clusters', '/v1/search/rentals/clusters?bbox=-74.02,40.70,-73.93,40.80&zoom=12&maxPrice=3000'],
  ['/v1/property/{id}', '/v1/property/8000000'],
  ['/v1/property/by-url', '/v1/property/by-url?url=/rental/1545'],
  ['/v1/property/{id}/comparables', '/v1/property/1545/comparables?limit=2'],
  ['/v1/property/{id}/estimate', '/v1/property/1545/estimate'],
  ['/v1/estimate', '/v1/estimate?kind=rental&near=40.7146,-73.9566&bedrooms=1&bathrooms=1'],
  ['/v1/property/{id}/sold-comparables', '/v1/property/8000000/sold-comparables?limit=2'],
  ['/v1/properties', '/v1/properties?ids=1545,8000000,nope'],
  ['/v1/building/{id}', '/v1/building/2-e-55th-st-manhattan'],
  ['/v1/areas', '/v1/areas?level=0'],
  ['/v1/areas/{id}', '/v1/areas/108'],
  ['/v1/market', '/v1/market?kind=rental&areas=200&bedrooms=1'],
  ['/v1/market/history', '/v1/market/history?kind=rental&area=200'],
  ['/v1/recorded-sales', '/v1/recorded-sales?areas=139&from=2023-06-01&to=2023-06-30&noConsideration=false&sort=salePrice&perPage=2'],
  ['/v1/market/recorded-sales', '/v1/market/recorded-sales?areas=200&from=2023-10&to=2024-01'],
  ['/v1/changes', '/v1/changes?since=0&perPage=2'],
  ['/v1/usage', '/v1/usage'],
  ['/v1/health', '/v1/health'],
  ['/', '/'],
  ['/v1', '/v1'],
];

// biome-ignore lint/suspicious/noExplicitAny: an answer of any route, cut to two rows when it is a list.
const cut = (body: any) => (Array.isArray(body?.data) ? { ...body, data: body.data.slice(0, 2) } : body);

const config = loadConfig({ DATABASE_URL: ':memory:', SYNC_INTERVAL_SECONDS: '0', MARKET_CLOCK: 'off', LOG_LEVEL: 'warn' });
const runtime = await startRuntime(config, { logger: pino({ level: 'warn' }), scheduler: false });
await runtime.coordinator.idle();
const key = await issueKey(runtime.keys, config, { plan: 'business', label: 'examples', expires: null });
const examples: Record<string, unknown> = {};
for (const [route, url] of REQUESTS) {
  const res = await runtime.app.inject({ url, headers: { authorization: `Bearer ${key}` } });
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body}`);
  let body = cut(JSON.parse(res.body));
  if (route === '/v1/health') body = { ...body, scopes: body.scopes.slice(0, 2) };
  if (route === '/v1/areas/{id}')
    body = {
      ...body,
      data: {
        ...body.data,
        boundary: {
          ...body.data.boundary,
          coordinates: [body.data.boundary.coordinates[0].slice(0, 4).concat([body.data.boundary.coordinates[0][0]])],
        },
      },
    };
  examples[route] = { summary: `GET ${url}`, value: body };
}
// The README's calls, abridged; an anonymous call (a search) without the key, as the README's curl makes it.
const answers: string[] = [];
for (const { url, anonymous, show } of README_CALLS) {
  const res = await runtime.app.inject({ url, headers: anonymous ? {} : { authorization: `Bearer ${key}` } });
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body}`);
  answers.push(`GET ${url}${anonymous ? '' : '   (with a key)'}\n${abridge(JSON.parse(res.body), show)}`);
}
const readmeFile = join(import.meta.dirname, '..', 'README.md');
const readme = readFileSync(readmeFile, 'utf8');
const [start, end] = [readme.indexOf(README_MARKERS[0]), readme.indexOf(README_MARKERS[1])];
if (start < 0 || end < start) throw new Error(`README.md lacks the markers ${README_MARKERS.join(' ... ')}`);
writeFileSync(
  readmeFile,
  `${readme.slice(0, start + README_MARKERS[0].length)}\n\`\`\`json\n${answers.join('\n\n')}\n\`\`\`\n${readme.slice(end)}`,
);
// The stream: its first two events as they come over a real connection.
const base = await runtime.app.listen({ port: 0, host: '127.0.0.1' });
const abort = new AbortController();
const stream = await request(`${base}/v1/changes/stream?since=0`, { headers: { authorization: `Bearer ${key}` }, signal: abort.signal });
let text = '';
for await (const chunk of stream.body) {
  text += chunk.toString();
  if (text.split('\n\n').filter((block) => block.startsWith('id:')).length >= 2) break;
}
abort.abort();
examples['/v1/changes/stream'] = { summary: 'GET /v1/changes/stream?since=0', value: `${text.split('\n\n').slice(0, 3).join('\n\n')}\n\n` };
await runtime.close();
writeFileSync(join(import.meta.dirname, '..', 'docs', 'openapi-examples.json'), `${JSON.stringify(examples, null, 1)}\n`);
console.log(`wrote ${Object.keys(examples).length} examples`);
