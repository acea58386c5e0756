import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_FILE, typesOf } from '../../clients/typescript/scripts/generate.js';
import { createNycListingsClient } from '../../clients/typescript/src/index.js';
import { feedSince, get } from '../helpers/http.js';
import { ROOT } from '../helpers/paths.js';
import { listening, useSharedTestRuntime } from '../helpers/runtime.js';

// The typed client in clients/typescript: a package of its own whose committed types are the app's document's,
// type-checked, installed into a new directory and run there against the app listening on loopback.
const t = useSharedTestRuntime('pro', { withoutRentHop: true });
const run = promisify(execFile);
const CLIENT = join(ROOT, 'clients', 'typescript');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
let baseUrl: string;

beforeAll(async () => {
  baseUrl = await listening(t.rt);
}, 60_000);

/** What a new project writes with the installed client: a typed search, an error, the change feed walked. */
const CONSUMER = `
import { createNycListingsClient, type ListingSummary, type Problem } from 'nyc-listings-client';
declare const process: { argv: string[] };
const [baseUrl, apiKey] = process.argv.slice(2);
const client = createNycListingsClient({ baseUrl, apiKey });

const { data, error } = await client.GET('/v1/search/rentals', { params: { query: { areas: 'williamsburg', minBeds: 2, maxBeds: 2, maxPrice: 3500, sort: 'PRICE', sortDir: 'ASC' } } });
if (error) throw new Error(error.code);
// Whole items: every field is there (null when unknown), no optional chaining needed.
const first: ListingSummary = data.data[0];
const price: number = first.price;
const bedrooms: number | null = first.bedroomCount;

// @ts-expect-error fields= belongs to withFields, whose items may be sparse
void client.GET('/v1/search/rentals', { params: { query: { fields: 'id' } } });
const { data: sparse } = await client.withFields.GET('/v1/search/rentals', { params: { query: { fields: 'id,price', perPage: 1 } } });

// The error is the flat problem document.
const refused = await client.GET('/v1/property/{id}', { params: { path: { id: '999999999' } } });
const problem: Problem | undefined = refused.error;
const code: string | undefined = refused.error?.code;

let changes = 0;
for await (const change of client.pages('/v1/changes', { since: '0' })) changes += change.type.length > 0 ? 1 : 0;
let areas = 0;
for await (const area of client.pages('/v1/areas', { level: 0 })) areas += area.name.length > 0 ? 1 : 0;

console.log(JSON.stringify({ total: data.meta.total, firstId: first.id, price, bedrooms, sparseKeys: Object.keys(sparse?.data[0] ?? {}).sort(), status: problem?.status, code, changes, areas }));
`;

describe('the TypeScript client', () => {
  it("holds the types generated from the service's own document (regenerate with clients/typescript/scripts/generate.ts)", async () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(await typesOf((await get(t.rt.app, '/v1/openapi.json')).body));
  });

  it('type-checks, its example included, and the example runs: a search, a property lookup, a walk over every page', async () => {
    const { stdout: errors } = await run(process.execPath, [TSC, '-p', join(CLIENT, 'tsconfig.json')], { cwd: ROOT }).catch((e) => e);
    expect(errors).toBe('');
    const { stdout } = await run(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(CLIENT, 'example.ts')], {
      cwd: ROOT,
      env: { ...process.env, NYC_LISTINGS_URL: baseUrl, NYC_LISTINGS_KEY: t.key },
    });
    const search = (await get(t.rt.app, '/v1/search/rentals?areas=300&maxPrice=3000&minBeds=1&perPage=5', t.key)).body;
    const doormen = (await get(t.rt.app, '/v1/search/rentals?areas=300&amenities=DOORMAN&perPage=1', t.key)).body.meta.total;
    expect(stdout).toContain(`${search.meta.total} rentals; first: ${search.data[0].id} at $${search.data[0].price}`);
    expect(stdout).toContain('2 E 55th St 803: $315000');
    expect(stdout).toContain(`${doormen} Queens doorman rentals walked`);
  }, 120_000);

  it('installs with npm install <folder> into a new directory, where a typed program compiles and runs against the service', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'client-consumer-'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    // --install-links copies the folder as a package (its prepare script builds it) instead of linking it.
    await run('npm', ['install', CLIENT, '--install-links', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: dir,
    });
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'consumer.ts'), CONSUMER);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          types: [],
          outDir: 'out',
          rootDir: 'src',
        },
        include: ['src'],
      }),
    );
    const { stdout: errors } = await run(process.execPath, [TSC, '-p', dir], { cwd: dir }).catch((e) => e);
    expect(errors).toBe('');
    const { stdout } = await run(process.execPath, [join(dir, 'out', 'consumer.js'), baseUrl, t.key], { cwd: dir });
    const answer = JSON.parse(stdout);

    const search = (
      await get(t.rt.app, '/v1/search/rentals?areas=williamsburg&minBeds=2&maxBeds=2&maxPrice=3500&sort=PRICE&sortDir=ASC', t.key)
    ).body;
    const feed = await feedSince(t.rt.app, t.key, 0);
    expect(answer).toEqual({
      total: search.meta.total,
      firstId: search.data[0].id,
      price: search.data[0].price,
      bedrooms: 2,
      sparseKeys: ['id', 'price'],
      status: 404,
      code: 'NOT_FOUND',
      changes: feed.length,
      areas: 5,
    });
    console.log(`client installed in a new directory: ${answer.total} Williamsburg rentals, ${answer.changes} change events walked`);
  }, 180_000);

  it('retries a 429 after its Retry-After, then answers', async () => {
    let calls = 0;
    const server = createServer((_req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(429, { 'content-type': 'application/problem+json', 'retry-after': '1' }).end('{"code":"RATE_LIMIT_EXCEEDED"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","upstream":{"circuit":"closed"},"scopes":[]}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = createNycListingsClient({ baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}` });
      const { data, response } = await client.GET('/v1/health');
      expect(response.status).toBe(200);
      expect(data?.status).toBe('ok');
      expect(calls).toBe(2);
    } finally {
      server.close();
    }
  });
});
