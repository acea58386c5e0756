import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importKeys } from '../../src/keys/key-admin.js';
import { expectProblem, get } from '../helpers/http.js';
import { CLI, ROOT, SHARED_DATA, TEMPLATE_WITHOUT_RENTHOP_DB } from '../helpers/paths.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';

const run = promisify(execFile);
let rt: TestRuntime;

beforeAll(async () => {
  // Minute limits are raised by the helper: this file is about keys, caps and quotas.
  rt = await startTestRuntime({}, { withoutRentHop: true });
});
afterAll(async () => rt.close());

describe('page size by plan', () => {
  it.each([
    ['anonymous', null, 10],
    ['free', 'free', 10],
    ['starter', 'starter', 50],
    ['pro', 'pro', 500],
    ['business', 'business', 500],
  ] as const)('%s: perPage=500 is clamped to %s, and the links say so', async (_name, plan, cap) => {
    const key = plan ? await rt.key(plan) : undefined;
    const res = await get(rt.app, '/v1/search/sales?areas=100&perPage=500', key);
    expect(res.status).toBe(200);
    expect(res.body.meta.perPage).toBe(cap);
    expect(res.body.data.length).toBe(cap);
    for (const link of [res.body.meta.links.self, res.body.meta.links.next, res.body.meta.links.last])
      expect(link).toContain(`perPage=${cap}`);
    const def = await get(rt.app, '/v1/search/sales?areas=100', key);
    expect(def.body.meta.perPage).toBe(Math.min(50, cap));
  });
});

describe('who may call what', () => {
  it('without a key: searches answer as Free; everything else is 401 MISSING_API_KEY with WWW-Authenticate', async () => {
    expect((await get(rt.app, '/v1/search/rentals')).status).toBe(200);
    for (const url of ['/v1/property/1545', '/v1/property/by-url?url=/rental/1545', '/v1/building/44518357', '/v1/areas', '/v1/usage']) {
      await expectProblem(rt.app, url, 401, 'MISSING_API_KEY');
      expect((await rt.app.inject({ url })).headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('a malformed, unknown or revoked key is 401 INVALID_API_KEY everywhere, never anonymous', async () => {
    const revoked = await rt.key('pro');
    const id = (await rt.keys.list()).at(-1)!.id;
    expect(await rt.keys.revoke(id, new Date().toISOString())).toBe(true);
    for (const key of [
      'nonsense',
      'SERVICE_not-a-uuid',
      'OTHER_6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f',
      'SERVICE_6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f',
      revoked,
    ]) {
      for (const url of ['/v1/search/sales', '/v1/property/1545']) {
        await expectProblem(rt.app, url, 401, 'INVALID_API_KEY', key);
      }
    }
    const raw = await rt.app.inject({ url: '/v1/search/sales', headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(raw.statusCode).toBe(401);
    expect(raw.headers['www-authenticate']).toContain('invalid_token');
  });

  it('an expired key is 401 EXPIRED_API_KEY', async () => {
    // Issued to expire tomorrow, then the day passes (a key cannot be issued already expired).
    const key = await rt.key('pro', { expires: new Date(Date.now() + 86_400_000).toISOString() });
    await rt.store.db
      .updateTable('api_keys')
      .set({ expires_at: '2020-01-01T00:00:00.000Z' })
      .where('id', '=', (await rt.keys.list()).at(-1)!.id)
      .execute();
    await expectProblem(rt.app, '/v1/search/sales', 401, 'EXPIRED_API_KEY', key);
  });

  it('a valid key reaches every endpoint', async () => {
    const key = await rt.key('starter');
    for (const url of ['/v1/property/1545', '/v1/areas?level=0', '/v1/building/44518357', '/v1/usage']) {
      expect((await get(rt.app, url, key)).status, url).toBe(200);
    }
  });
});

describe('keys at rest and on the command line', () => {
  it('with API_KEY_PEPPER the stored digest is HMAC-SHA-256 of the key; another pepper does not accept it', async () => {
    const { createHash, createHmac } = await import('node:crypto');
    const db = join(mkdtempSync(join(tmpdir(), 'pepper-')), 'mirror.db');
    copyFileSync(TEMPLATE_WITHOUT_RENTHOP_DB, db);
    const peppered = await startTestRuntime({ DATABASE_URL: db, API_KEY_PEPPER: 'pepper-one' }, { withoutRentHop: true });
    let key: string;
    try {
      key = await peppered.key('pro');
      const row = (await peppered.keys.list()).at(-1)!;
      expect(row.digest).toBe(createHmac('sha256', 'pepper-one').update(key).digest('hex'));
      expect(row.digest).not.toBe(createHash('sha256').update(key).digest('hex'));
      expect((await get(peppered.app, '/v1/areas?level=0', key)).status).toBe(200);
    } finally {
      await peppered.close();
    }
    for (const env of [{ API_KEY_PEPPER: 'pepper-two' }, {}] as Record<string, string>[]) {
      const other = await startTestRuntime({ DATABASE_URL: db, ...env }, { withoutRentHop: true });
      try {
        await expectProblem(other.app, '/v1/areas?level=0', 401, 'INVALID_API_KEY', key);
      } finally {
        await other.close();
      }
    }
  });

  it('the keys table holds digests only, never a plain key', async () => {
    const plain = [await rt.key('pro'), await rt.key('business')];
    const rows = await rt.store.db.selectFrom('api_keys').selectAll().execute();
    const dump = JSON.stringify(rows);
    for (const key of plain) {
      expect(dump).not.toContain(key);
      expect(dump).not.toContain(key.split('_')[1]);
    }
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.digest))).toBe(true);
  });

  it('keys import (JSON and CSV) is idempotent and updates plans', async () => {
    const a = 'SERVICE_0b9f2c1e-7d4a-4f3b-9c2e-5a6b7c8d9e0f';
    const b = 'SERVICE_1c0a3d2f-8e5b-4a4c-8d3f-6b7c8d9e0f1a';
    const json = JSON.stringify([
      { key: a, plan: 'starter', label: 'acme' },
      { key: b, plan: 'pro', expires: '2030-01-01' },
    ]);
    expect(await importKeys(rt.keys, rt.config, 'x.json', json)).toEqual({ inserted: 2, updated: 0 });
    expect(await importKeys(rt.keys, rt.config, 'x.json', json)).toEqual({ inserted: 0, updated: 2 });
    const csv = `key , plan,label,expires\n${a}, business ,"acme, inc",\n`;
    expect(await importKeys(rt.keys, rt.config, 'x.csv', csv)).toEqual({ inserted: 0, updated: 1 });
    expect((await rt.keys.list()).find((k) => k.label === 'acme, inc')?.plan).toBe('business');
    await expect(importKeys(rt.keys, rt.config, 'x.csv', `key,plan\n"${b},pro\n`)).rejects.toThrow(/CSV row/);
    const res = await get(rt.app, '/v1/search/sales?perPage=500', a);
    expect(res.body.meta.perPage).toBe(500);
    await expect(importKeys(rt.keys, rt.config, 'x.json', JSON.stringify([{ key: 'bad', plan: 'pro' }]))).rejects.toThrow(/row 1/);
  });

  it('`keys issue` prints the key alone on stdout; `keys list` never prints it', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'keys-cli-')), 'k.db');
    const env = { ...process.env, DATABASE_URL: db, SHARED_DATA_DIR: SHARED_DATA, LOG_LEVEL: 'silent' };
    const issued = await run(process.execPath, [CLI, 'keys', 'issue', '--plan', 'pro', '--label', 'acme'], { cwd: ROOT, env });
    expect(issued.stdout).toMatch(/^SERVICE_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\n$/);
    const listed = await run(process.execPath, [CLI, 'keys', 'list'], { cwd: ROOT, env });
    expect(listed.stdout).toContain('acme');
    expect(listed.stdout).not.toContain(issued.stdout.trim().split('_')[1]);
    writeFileSync(join(db, '..', 'import.json'), JSON.stringify([{ key: 'SERVICE_2d1b4e3a-9f6c-4b5d-9e4a-7c8d9e0f1a2b', plan: 'free' }]));
    const imported = await run(process.execPath, [CLI, 'keys', 'import', join(db, '..', 'import.json')], { cwd: ROOT, env });
    expect(imported.stderr).toContain('imported 1 new');
  });
});

describe('publishable keys', () => {
  it('are accepted only from the origins they list (Origin, else Referer), 403 ORIGIN_NOT_ALLOWED otherwise; secret keys as before', async () => {
    const key = await rt.key('pro', { origins: ['https://app.example', 'http://localhost:5173'] });
    const call = (headers: Record<string, string>, url = '/v1/areas?level=0') =>
      rt.app.inject({ url, headers: { authorization: `Bearer ${key}`, ...headers } });
    expect((await call({ origin: 'https://app.example' })).statusCode).toBe(200);
    expect((await call({ origin: 'http://localhost:5173' })).statusCode).toBe(200);
    expect((await call({ referer: 'https://app.example/map?x=1' })).statusCode).toBe(200);
    for (const headers of [
      {},
      { origin: 'https://evil.example' },
      { origin: 'https://app.example.evil' },
      { referer: 'https://evil.example/app.example' },
      { origin: 'null' },
    ] as Record<string, string>[]) {
      const res = await call(headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(403);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED', status: 403 });
    }
    // On an anonymous route a publishable key from elsewhere is refused too, never served as anonymous.
    expect((await call({ origin: 'https://evil.example' }, '/v1/search/rentals?perPage=1')).statusCode).toBe(403);
    const secret = await rt.key('pro');
    expect(
      (await rt.app.inject({ url: '/v1/areas?level=0', headers: { authorization: `Bearer ${secret}`, origin: 'https://evil.example' } }))
        .statusCode,
    ).toBe(200);
  });

  it('`keys issue --origins` issues one, `keys list` shows its origins, and a bad origin is a usage error', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'keys-pub-')), 'k.db');
    const env = { ...process.env, DATABASE_URL: db, SHARED_DATA_DIR: SHARED_DATA, LOG_LEVEL: 'silent' };
    const issued = await run(
      process.execPath,
      [CLI, 'keys', 'issue', '--plan', 'starter', '--origins', 'https://App.Example/, http://localhost:5173'],
      { cwd: ROOT, env },
    );
    expect(issued.stdout).toMatch(/^SERVICE_[0-9a-f-]{36}\n$/);
    const listed = await run(process.execPath, [CLI, 'keys', 'list'], { cwd: ROOT, env });
    expect(listed.stdout).toContain('publishable: https://app.example,http://localhost:5173');
    const past = await run(process.execPath, [CLI, 'keys', 'issue', '--plan', 'starter', '--expires', '2020-01-01'], {
      cwd: ROOT,
      env,
    }).catch((e: { code: number; stderr: string }) => e);
    expect((past as { code: number }).code).not.toBe(0);
    expect((past as { stderr: string }).stderr).toMatch(/is in the past/);
    // Nothing was issued: the one key is the publishable one above.
    expect((await run(process.execPath, [CLI, 'keys', 'list'], { cwd: ROOT, env })).stdout.trim().split('\n')).toHaveLength(2);
    const bad = await run(process.execPath, [CLI, 'keys', 'issue', '--plan', 'starter', '--origins', 'https://app.example/path'], {
      cwd: ROOT,
      env,
    }).catch((e: { code: number; stderr: string }) => e);
    expect((bad as { code: number }).code).toBe(2);
    expect((bad as { stderr: string }).stderr).toMatch(/--origins: not an origin/);
  });
});

describe('keys limited to some operations', () => {
  it('call only the operations they list, decided by the matched route: 403 OPERATION_NOT_ALLOWED on the others', async () => {
    const key = await rt.key('pro', { operations: ['searchRentals', 'getProperty'] });
    const found = await get(rt.app, '/v1/search/rentals?perPage=1', key);
    expect(found.status).toBe(200);
    const id = found.body.data[0].id;
    expect((await get(rt.app, `/v1/property/${id}`, key)).status).toBe(200);
    // The same route however its URL is written; another route, though its path starts alike, is refused.
    expect((await get(rt.app, `/v1/property/${id}?`, key)).status).toBe(200);
    for (const url of [
      '/v1/search/sales?perPage=1',
      `/v1/property/${id}/comparables`,
      '/v1/usage',
      '/v1/market?kind=rental',
      '/v1/areas?level=0',
    ]) {
      const res = await rt.app.inject({ url, headers: { authorization: `Bearer ${key}` } });
      expect(res.statusCode, url).toBe(403);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json().code, url).toBe('OPERATION_NOT_ALLOWED');
    }
    // Public routes need no key, limited or not.
    expect((await get(rt.app, '/v1/health', key)).status).toBe(200);
  });

  it('`keys issue --operations` takes the operation ids of the OpenAPI document, `keys list` shows them, an unknown one is a usage error', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'keys-ops-')), 'k.db');
    const env = { ...process.env, DATABASE_URL: db, SHARED_DATA_DIR: SHARED_DATA, LOG_LEVEL: 'silent' };
    const issued = await run(
      process.execPath,
      [CLI, 'keys', 'issue', '--plan', 'pro', '--origins', 'http://localhost:8080', '--operations', 'searchRentals,getProperty'],
      { cwd: ROOT, env },
    );
    expect(issued.stdout).toMatch(/^SERVICE_[0-9a-f-]{36}\n$/);
    const listed = await run(process.execPath, [CLI, 'keys', 'list'], { cwd: ROOT, env });
    expect(listed.stdout.trim().split('\n')[1].split('\t').at(-1)).toBe('searchRentals,getProperty');
    const bad = await run(process.execPath, [CLI, 'keys', 'issue', '--plan', 'pro', '--operations', 'searchRentals,getEverything'], {
      cwd: ROOT,
      env,
    }).catch((e: { code: number; stderr: string }) => e);
    expect((bad as { code: number }).code).toBe(2);
    expect((bad as { stderr: string }).stderr).toMatch(/unknown: getEverything/);
    expect((bad as { stderr: string }).stderr).toContain('searchSales');
    expect((await run(process.execPath, [CLI, 'keys', 'list'], { cwd: ROOT, env })).stdout.trim().split('\n')).toHaveLength(2);
  });
});

describe('one configuration for every command', () => {
  it('`keys issue` and `keys list` run in a directory with a .env act on the database it names, whatever the command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-env-'));
    writeFileSync(join(dir, '.env'), 'DATABASE_URL=./service.db\nLOG_LEVEL=silent\n');
    const { DATABASE_URL: _unset, ...inherited } = process.env;
    const env = { ...inherited, SHARED_DATA_DIR: SHARED_DATA };
    const issued = await run(process.execPath, [CLI, 'keys', 'issue', '--plan', 'starter', '--label', 'from-dotenv'], { cwd: dir, env });
    expect(issued.stdout).toMatch(/^SERVICE_[0-9a-f-]{36}\n$/);
    // The database the .env names holds it (read here with the path given outright).
    const listed = await run(process.execPath, [CLI, 'keys', 'list'], {
      cwd: ROOT,
      env: { ...env, DATABASE_URL: join(dir, 'service.db'), LOG_LEVEL: 'silent' },
    });
    expect(listed.stdout).toContain('from-dotenv');
    // A variable set in the environment wins over the file.
    const elsewhere = join(dir, 'other.db');
    await run(process.execPath, [CLI, 'keys', 'issue', '--plan', 'starter', '--label', 'from-environment'], {
      cwd: dir,
      env: { ...env, DATABASE_URL: elsewhere },
    });
    expect((await run(process.execPath, [CLI, 'keys', 'list'], { cwd: dir, env })).stdout).not.toContain('from-environment');
    expect((await run(process.execPath, [CLI, 'keys', 'list'], { cwd: dir, env: { ...env, DATABASE_URL: elsewhere } })).stdout).toContain(
      'from-environment',
    );
  });
});

describe('usage', () => {
  it('reports plan, limits, and this minute and month, and does not count itself', async () => {
    const key = await rt.key('starter');
    for (let i = 0; i < 3; i++) await get(rt.app, '/v1/search/rentals?perPage=1', key);
    const first = await get(rt.app, '/v1/usage', key);
    const second = await get(rt.app, '/v1/usage', key);
    expect(first.body.data).toMatchObject({
      plan: 'starter',
      limits: { maxPerPage: 50, perMinute: 100000, perMonth: 5000 },
      minute: { used: 3 },
      month: { used: 3, remaining: 4997 },
    });
    expect(second.body.data.month.used).toBe(3);
  });
});

describe('logs', () => {
  it('never contain a key, even with every request logged', async () => {
    const { Writable } = await import('node:stream');
    const { createLogger } = await import('../../src/app.js');
    let text = '';
    const sink = new Writable({
      write: (chunk, _enc, done) => {
        text += chunk.toString();
        done();
      },
    });
    const logged = await startTestRuntime({}, { logger: createLogger('trace', sink), withoutRentHop: true });
    try {
      const key = await logged.key('pro');
      await get(logged.app, '/v1/property/1545', key);
      await get(logged.app, '/v1/search/sales?bogus=1', key);
      logged.app.log.info({ headers: { authorization: `Bearer ${key}` } }, 'a careless log line');
      expect(text).toContain('"url":"/v1/property/1545"');
      expect(text).toContain('[redacted]');
      expect(text).not.toContain(key.split('_')[1]);
    } finally {
      await logged.close();
    }
  });
});
