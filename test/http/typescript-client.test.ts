import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateTypes } from '../../clients/typescript/scripts/generate.js';
import { get } from '../helpers/http.js';
import { ROOT } from '../helpers/paths.js';
import { useTestRuntime } from '../helpers/runtime.js';

// The typed client in clients/typescript: generated from the app's own document, type-checked, and run
// against the app listening on loopback.
const t = useTestRuntime('pro');
const run = promisify(execFile);
let baseUrl: string;

beforeAll(async () => {
  await t.rt.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.rt.app.server.address() as { port: number }).port}`;
  await generateTypes((await get(t.rt.app, '/v1/openapi.json')).body);
}, 60_000);

describe('the TypeScript client', () => {
  it('type-checks against the generated types (the example included)', async () => {
    const { stdout } = await run(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(ROOT, 'clients', 'typescript', 'tsconfig.json')], { cwd: ROOT }).catch((e) => e);
    expect(stdout).toBe('');
  }, 120_000);

  it('its example runs: a search, a property lookup and a walk over every page', async () => {
    const { stdout } = await run(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'clients', 'typescript', 'example.ts')], {
      cwd: ROOT,
      env: { ...process.env, NYC_LISTINGS_URL: baseUrl, NYC_LISTINGS_KEY: t.key },
    });
    const search = (await get(t.rt.app, '/v1/search/rentals?areas=300&maxPrice=3000&minBeds=1&perPage=5', t.key)).body;
    const doormen = (await get(t.rt.app, '/v1/search/rentals?areas=300&amenities=DOORMAN&perPage=1', t.key)).body.meta.total;
    console.log(`client example:\n${stdout}`);
    expect(stdout).toContain(`${search.meta.total} rentals; first: ${search.data[0].id} at $${search.data[0].price}`);
    expect(stdout).toContain('2 E 55th St 803: $315000');
    expect(stdout).toContain(`${doormen} Queens doorman rentals walked`);
  }, 60_000);

  it('retries a 429 after its Retry-After, then answers', async () => {
    // Loaded by path: the client's types exist only once generated, so the repository's own type-check leaves it out.
    const clientModule = join(ROOT, 'clients', 'typescript', 'src', 'index.ts');
    const { createNycListingsClient } = (await import(clientModule)) as {
      createNycListingsClient: (o: { baseUrl: string }) => { GET: (path: string) => Promise<{ data?: { status: string }; response: Response }> };
    };
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
