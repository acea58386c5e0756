import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KeyResolver } from '../../src/access/key-resolver.js';
import { keyDigest } from '../../src/domain/api-key.js';
import { openStore, type Store } from '../../src/store/database.js';
import { KeysRepository } from '../../src/store/keys-repository.js';
import { waitFor } from '../helpers/wait.js';

// Keys by digest from memory in front of the keys table (src/access/key-resolver.ts), on a throw-away SQLite database.
let store: Store;
let keys: KeysRepository;
beforeEach(async () => {
  store = await openStore(':memory:');
  keys = new KeysRepository(store.db);
});
afterEach(async () => store.close());

const insert = (digest: string) =>
  keys.insert({ digest, hint: 'abcd', plan: 'pro', label: null, expiresAt: null, createdAt: '2026-11-24T00:00:00.000Z' });

describe('keys from memory', () => {
  it('a known key and an unknown digest are each read from the table once within the time to live', async () => {
    const digest = keyDigest('SERVICE_a', null);
    const id = await insert(digest);
    const resolver = new KeyResolver(keys, 3600);
    const reads = vi.spyOn(keys, 'findByDigest');
    expect((await resolver.find(digest))?.id).toBe(id);
    expect((await resolver.find(digest))?.id).toBe(id);
    expect(await resolver.find('unknown')).toBeUndefined();
    expect(await resolver.find('unknown')).toBeUndefined();
    expect(reads.mock.calls).toEqual([[digest], ['unknown']]);
  });

  it("a change made through this process's repository is seen at once: a revoke, a new key", async () => {
    const digest = keyDigest('SERVICE_a', null);
    const id = await insert(digest);
    const resolver = new KeyResolver(keys, 3600);
    expect((await resolver.find(digest))?.revoked_at).toBeNull();
    expect(await resolver.find('later')).toBeUndefined();
    await keys.revoke(id, '2026-11-24T01:00:00.000Z');
    expect((await resolver.find(digest))?.revoked_at).toBe('2026-11-24T01:00:00.000Z');
    await insert('later');
    expect((await resolver.find('later'))?.digest).toBe('later');
  });

  it('a change made elsewhere (another repository on the same table) is seen once the time to live has passed', async () => {
    const digest = keyDigest('SERVICE_a', null);
    const id = await insert(digest);
    const resolver = new KeyResolver(keys, 0.05);
    const elsewhere = new KeysRepository(store.db);
    expect((await resolver.find(digest))?.revoked_at).toBeNull();
    await elsewhere.revoke(id, '2026-11-24T01:00:00.000Z');
    expect((await resolver.find(digest))?.revoked_at).toBeNull();
    await waitFor(async () => (await resolver.find(digest))?.revoked_at !== null, 'the cached key to expire');
  });

  it('a time to live of 0 keeps nothing past the millisecond', async () => {
    const resolver = new KeyResolver(keys, 0);
    const elsewhere = new KeysRepository(store.db);
    expect(await resolver.find('later')).toBeUndefined();
    await elsewhere.insert({
      digest: 'later',
      hint: 'abcd',
      plan: 'pro',
      label: null,
      expiresAt: null,
      createdAt: '2026-11-24T00:00:00.000Z',
    });
    await waitFor(async () => (await resolver.find('later')) !== undefined, 'the new key to be read');
  });
});
