import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sealKey, sessionDigest, unsealKey } from '../../src/billing/key-seal.js';
import { BillingRepository, type SubscriptionRow } from '../../src/store/billing-repository.js';
import { openStore, type Store } from '../../src/store/database.js';

// What one application of Stripe's state writes (src/store/billing-repository.ts), on a throw-away SQLite database: a
// state read earlier never replaces one read later, an event id is applied once, a checkout's key is issued once and
// shown once; and the seal that keeps a key until then.
let store: Store;
let repository: BillingRepository;
beforeEach(async () => {
  store = await openStore(':memory:');
  repository = new BillingRepository(store.db);
});
afterEach(async () => store.close());

const row = (status: string, plan: string | null, readAt: string): SubscriptionRow => ({
  id: 'sub_1',
  provider: 'stripe',
  customer_id: 'cus_1',
  status,
  plan,
  price_ids: 'price_1',
  current_period_end: null,
  cancel_at: null,
  ended_at: null,
  read_at: readAt,
  updated_at: readAt,
});
const issue = (session: string) => ({
  sessionDigest: sessionDigest(session),
  sealed: sealKey(`SERVICE_${randomUUID()}`, session),
  id: randomUUID(),
  digest: randomUUID(),
  hint: 'abcd1234',
  label: 'stripe sub_1',
});
const keysOfSub = () =>
  store.db
    .selectFrom('api_keys')
    .select(['plan', 'subscription_status', 'source', 'subject'])
    .where('subscription_id', '=', 'sub_1')
    .execute();

describe('a subscription applied', () => {
  it('replaces the stored state only when read later; its keys follow what is stored', async () => {
    const first = await repository.apply(
      {
        subscription: { row: row('active', 'starter', '2026-11-28T10:00:00.000Z'), keyStatus: 'active', plan: 'starter' },
        issue: issue('cs_test_1'),
      },
      '2026-11-28T10:00:01.000Z',
    );
    expect(first).toEqual({ duplicate: false, subscriptionApplied: true, keyIssued: true });
    const newer = await repository.apply(
      { subscription: { row: row('past_due', 'pro', '2026-11-28T10:05:00.000Z'), keyStatus: 'past_due', plan: 'pro' } },
      '2026-11-28T10:05:01.000Z',
    );
    expect(newer.subscriptionApplied).toBe(true);
    // Read before the one stored, written after it: refused.
    const older = await repository.apply(
      { subscription: { row: row('active', 'starter', '2026-11-28T10:04:00.000Z'), keyStatus: 'active', plan: 'starter' } },
      '2026-11-28T10:06:00.000Z',
    );
    expect(older.subscriptionApplied).toBe(false);
    expect((await repository.subscription('sub_1'))?.status).toBe('past_due');
    expect(await keysOfSub()).toEqual([{ plan: 'pro', subscription_status: 'past_due', source: 'stripe', subject: 'subscription:sub_1' }]);
  });

  it('an event id is applied once: the second application changes nothing', async () => {
    const event = {
      id: 'evt_1',
      type: 'customer.subscription.updated',
      outcome: 'applied' as const,
      createdAt: '2026-11-28T10:00:00.000Z',
    };
    const change = {
      event,
      subscription: { row: row('active', 'pro', '2026-11-28T10:00:00.000Z'), keyStatus: 'active', plan: 'pro' as const },
    };
    expect((await repository.apply(change, '2026-11-28T10:00:00.000Z')).duplicate).toBe(false);
    const again = await repository.apply(
      { event, subscription: { row: row('canceled', 'pro', '2026-11-28T11:00:00.000Z'), keyStatus: 'canceled', plan: 'pro' } },
      '2026-11-28T11:00:00.000Z',
    );
    expect(again).toEqual({ duplicate: true, subscriptionApplied: false, keyIssued: false });
    expect((await repository.subscription('sub_1'))?.status).toBe('active');
    expect(await repository.eventSeen('evt_1')).toBe(true);
  });

  it("a checkout's key is issued once however often it is asked, none for an unknown price, and taken out once", async () => {
    const state = { row: row('active', 'starter', '2026-11-28T10:00:00.000Z'), keyStatus: 'active', plan: 'starter' as const };
    const first = issue('cs_test_2');
    const both = await Promise.all([
      repository.apply({ subscription: state, issue: first }, 'x'),
      repository.apply({ subscription: state, issue: issue('cs_test_2') }, 'x'),
    ]);
    expect(both.map((r) => r.keyIssued).sort()).toEqual([false, true]);
    expect(await keysOfSub()).toHaveLength(1);
    const unknown = { row: { ...row('active', null, '2026-11-28T12:00:00.000Z'), id: 'sub_2' }, keyStatus: 'unknown_price', plan: null };
    expect((await repository.apply({ subscription: unknown, issue: issue('cs_test_3') }, 'x')).keyIssued).toBe(false);
    const taken = await Promise.all([
      repository.takeSealedKey(first.sessionDigest, 'at'),
      repository.takeSealedKey(first.sessionDigest, 'at'),
    ]);
    expect(taken.filter((t) => t !== null)).toHaveLength(1);
    expect(await repository.issuedKey(first.sessionDigest)).toMatchObject({ revealedAt: 'at' });
  });
});

describe('the seal of a key', () => {
  it('opens with its checkout session id alone, and never the same twice', () => {
    const key = `SERVICE_${randomUUID()}`;
    const sealed = sealKey(key, 'cs_test_abc');
    expect(unsealKey(sealed, 'cs_test_abc')).toBe(key);
    expect(sealed).not.toContain(key.slice(8));
    expect(sealKey(key, 'cs_test_abc')).not.toBe(sealed);
    expect(() => unsealKey(sealed, 'cs_test_abd')).toThrow();
    const altered = Buffer.from(sealed, 'base64url');
    altered[altered.length - 1] ^= 1;
    expect(() => unsealKey(altered.toString('base64url'), 'cs_test_abc')).toThrow();
    expect(sessionDigest('cs_test_abc')).toMatch(/^[0-9a-f]{64}$/);
  });
});
