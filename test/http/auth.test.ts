import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeyResolver } from '../../src/access/key-resolver.js';
import { loadConfig, type Plan } from '../../src/config.js';
import { keyDigest } from '../../src/domain/api-key.js';
import { registerAuth, principalOf } from '../../src/http/plugins/auth.js';
import { registerErrorHandling } from '../../src/http/plugins/errors.js';
import { RouteIndex } from '../../src/http/route-index.js';
import { openStore, type Store } from '../../src/store/database.js';
import { KeysRepository } from '../../src/store/keys-repository.js';
import { waitFor } from '../helpers/wait.js';

// Who is calling (src/http/plugins/auth.ts): each route's access rule and lowest plan decide, on a small
// app of four routes over the real keys table (throw-away SQLite), no listings.
const config = loadConfig({});
const UUID = '6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f';
let store: Store;
let keys: KeysRepository;
let app: FastifyInstance;
let now: number;

async function issue(
  plan: Plan,
  over: { uuid?: string; expiresAt?: string | null } = {},
): Promise<{ key: string; id: string; digest: string }> {
  const key = `${config.apiKeyPrefix}_${over.uuid ?? crypto.randomUUID()}`;
  const digest = keyDigest(key, config.apiKeyPepper);
  const id = await keys.insert({
    digest,
    hint: 'x',
    plan,
    label: null,
    expiresAt: over.expiresAt ?? null,
    createdAt: new Date(now).toISOString(),
  });
  return { key, id, digest };
}

beforeEach(async () => {
  now = Date.parse('2026-11-24T12:00:00.000Z');
  store = await openStore(':memory:');
  keys = new KeysRepository(store.db);
  app = Fastify();
  const routes = new RouteIndex();
  routes.watch(app);
  registerErrorHandling(app, routes);
  registerAuth(app, { keys, resolver: new KeyResolver(keys, 3600), config, clock: () => new Date(now) });
  const who = async (request: Parameters<typeof principalOf>[0]) => ({ principal: request.principal });
  app.get('/public', { config: { access: 'public' } }, who);
  app.get('/anonymous', { config: { access: 'anonymous' } }, who);
  app.get('/key', who);
  app.get('/pro', { config: { minPlan: 'pro' } }, async (request) => ({ principal: principalOf(request) }));
  await app.ready();
});
afterEach(async () => {
  await app.close();
  await store.close();
});

const call = async (url: string, authorization?: string) => {
  const res = await app.inject({ url, headers: authorization === undefined ? {} : { authorization } });
  return { status: res.statusCode, body: res.json(), challenge: res.headers['www-authenticate'] };
};

describe('without a key', () => {
  it('a public route answers with no principal; an anonymous one as Free, counted by address; a key route is 401 MISSING_API_KEY', async () => {
    expect(await call('/public')).toMatchObject({ status: 200, body: { principal: null } });
    expect(await call('/anonymous')).toMatchObject({
      status: 200,
      body: { principal: { plan: 'free', keyId: null, subject: 'ip:127.0.0.1' } },
    });
    for (const url of ['/key', '/pro']) {
      expect(await call(url)).toMatchObject({
        status: 401,
        body: { code: 'MISSING_API_KEY', detail: 'This endpoint needs an API key: send Authorization: Bearer <key>.' },
        challenge: 'Bearer',
      });
    }
  });

  it('a path no route has is 404, not 401', async () => {
    expect(await call('/nowhere')).toMatchObject({ status: 404 });
  });

  it('a handler that needs a principal refuses to run without one', () => {
    expect(() => principalOf({ principal: null } as Parameters<typeof principalOf>[0])).toThrow(
      expect.objectContaining({ code: 'MISSING_API_KEY', message: 'This endpoint needs an API key.' }),
    );
  });
});

describe('with a key', () => {
  it('a valid key is the principal: its plan, its id, and the subject key:<digest>, on any route but a public one', async () => {
    const { key, id, digest } = await issue('starter');
    const principal = { plan: 'starter', keyId: id, subject: `key:${digest}` };
    for (const url of ['/anonymous', '/key']) expect(await call(url, `Bearer ${key}`)).toMatchObject({ status: 200, body: { principal } });
    expect(await call('/public', `Bearer ${key}`)).toMatchObject({ status: 200, body: { principal: null } });
  });

  it.each([
    ['a lower-case scheme', (k: string) => `bearer ${k}`],
    ['two spaces after the scheme', (k: string) => `Bearer  ${k}`],
    ['a trailing space', (k: string) => `Bearer ${k} `],
  ])('%s is read', async (_what, header) => {
    const { key } = await issue('free');
    expect((await call('/key', header(key))).status).toBe(200);
  });

  it.each([
    ['an empty header', () => ''],
    ['another scheme', (k: string) => `Basic ${k}`],
    ['no space after the scheme', (k: string) => `Bearer${k}`],
    ['two keys', (k: string) => `Bearer ${k} ${k}`],
    ['text before the scheme', (k: string) => `x Bearer ${k}`],
    ['a malformed key', () => 'Bearer SERVICE_not-a-uuid'],
    ['another prefix', () => `Bearer OTHER_${UUID}`],
    ['an unknown key', () => `Bearer SERVICE_${UUID}`],
  ])('%s is 401 INVALID_API_KEY everywhere but public routes, never anonymous', async (what, header) => {
    const { key } = await issue('business');
    const detail =
      what === 'an unknown key'
        ? 'The API key is unknown or revoked.'
        : `The Authorization header must be "Bearer ${config.apiKeyPrefix}_<uuid>".`;
    for (const url of ['/anonymous', '/key', '/pro']) {
      expect(await call(url, header(key))).toMatchObject({
        status: 401,
        body: { code: 'INVALID_API_KEY', detail },
        challenge: 'Bearer error="invalid_token"',
      });
    }
    expect((await call('/public', header(key))).status).toBe(200);
  });

  it('a revoked key is 401 INVALID_API_KEY', async () => {
    const { key, id } = await issue('business');
    expect((await call('/key', `Bearer ${key}`)).status).toBe(200);
    await keys.revoke(id, new Date(now).toISOString());
    expect(await call('/anonymous', `Bearer ${key}`)).toMatchObject({ status: 401, body: { code: 'INVALID_API_KEY' } });
  });

  it('a key is expired from its expiry instant on: 401 EXPIRED_API_KEY, naming the instant', async () => {
    const { key } = await issue('pro', { expiresAt: new Date(now + 1000).toISOString() });
    expect((await call('/key', `Bearer ${key}`)).status).toBe(200);
    now += 999;
    expect((await call('/key', `Bearer ${key}`)).status).toBe(200);
    now += 1;
    const expired = await call('/key', `Bearer ${key}`);
    expect(expired).toMatchObject({ status: 401, body: { code: 'EXPIRED_API_KEY' }, challenge: 'Bearer error="invalid_token"' });
    expect(expired.body.detail).toContain(new Date(now).toISOString());
  });

  it.each([
    ['free', 403],
    ['starter', 403],
    ['pro', 200],
    ['business', 200],
  ] as const)('a %s key on a route from the pro plan up: %s', async (plan, status) => {
    const { key } = await issue(plan);
    const res = await call('/pro', `Bearer ${key}`);
    expect(res.status).toBe(status);
    if (status === 403)
      expect(res.body).toMatchObject({
        code: 'PLAN_REQUIRED',
        detail: `This endpoint is for the pro plan and above; this key's plan is ${plan}.`,
      });
  });

  it("the key's last use is written at its first request, then at most once a minute", async () => {
    const { key, id } = await issue('free');
    const lastUsed = async () => (await keys.findById(id))?.last_used_at;
    const first = new Date(now).toISOString();
    await call('/key', `Bearer ${key}`);
    await waitFor(async () => (await lastUsed()) === first, 'the first use written');
    now += 59_999;
    await call('/key', `Bearer ${key}`);
    now += 1;
    const second = new Date(now).toISOString();
    await call('/key', `Bearer ${key}`);
    await waitFor(async () => (await lastUsed()) === second, 'the use a minute later written');
    now += 30_000;
    await call('/key', `Bearer ${key}`);
    // The last write a minute after: the request in between did not write.
    await call('/public');
    expect(await lastUsed()).toBe(second);
  });
});

describe('a key of a subscription', () => {
  const subscribed = async (status: string, subject: string | null = 'subscription:sub_1') => {
    const issued = await issue('pro');
    await store.db
      .updateTable('api_keys')
      .set({ subscription_id: 'sub_1', subscription_status: status, subject, source: 'stripe' })
      .where('id', '=', issued.id)
      .execute();
    keys.changed();
    return issued;
  };

  it.each(['active', 'trialing', 'past_due'])('%s: works, counted against the subscription', async (status) => {
    const { key, id } = await subscribed(status);
    expect(await call('/key', `Bearer ${key}`)).toMatchObject({
      status: 200,
      body: { principal: { plan: 'pro', keyId: id, subject: 'subscription:sub_1' } },
    });
  });

  it.each(['canceled', 'unpaid', 'paused', 'incomplete', 'incomplete_expired', 'unknown_price', 'a_status_added_later'])(
    '%s: 403 SUBSCRIPTION_INACTIVE on every route that reads a key, saying why and where to go',
    async (status) => {
      const { key } = await subscribed(status);
      for (const url of ['/anonymous', '/key', '/pro']) {
        const res = await app.inject({ url, headers: { authorization: `Bearer ${key}` } });
        expect(res.statusCode).toBe(403);
        expect(res.headers.link).toBe('</account>; rel="help"');
        expect(res.json()).toMatchObject({
          code: 'SUBSCRIPTION_INACTIVE',
          subscriptionStatus: status,
          account: '/account',
          pricing: '/pricing',
        });
        expect(res.json().detail).toMatch(/\/account/);
      }
      expect((await call('/public', `Bearer ${key}`)).status).toBe(200);
    },
  );

  it('replaced by a rotation, past its grace: 401 EXPIRED_API_KEY saying it was replaced', async () => {
    const { key, id } = await subscribed('active');
    await store.db
      .updateTable('api_keys')
      .set({ replaced_at: new Date(now - 1000).toISOString(), expires_at: new Date(now).toISOString() })
      .where('id', '=', id)
      .execute();
    keys.changed();
    const res = await call('/key', `Bearer ${key}`);
    expect(res).toMatchObject({ status: 401, body: { code: 'EXPIRED_API_KEY' } });
    expect(res.body.detail).toMatch(/replaced by a new one/);
  });
});
