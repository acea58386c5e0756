import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digestsEqual, isWellFormedKey, keyDigest, newApiKey } from '../../src/domain/api-key.js';

// API keys: their form, their stored digest and the comparison of digests (src/domain/api-key.ts).
const UUID = '6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f';

describe('the form of a key', () => {
  it('a new key is the prefix, an underscore and a random uuid v4, and is well formed', () => {
    const a = newApiKey('SERVICE');
    expect(a).toMatch(/^SERVICE_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(isWellFormedKey(a, 'SERVICE')).toBe(true);
    expect(newApiKey('SERVICE')).not.toBe(a);
  });

  it.each([
    ['the prefix and a uuid v4', `SERVICE_${UUID}`, true],
    ['another prefix', `OTHER_${UUID}`, false],
    ['no underscore', `SERVICE${UUID}`, false],
    ['upper-case hex', `SERVICE_${UUID.toUpperCase()}`, false],
    ['a uuid of version 1', `SERVICE_${UUID.replace('-4c6d', '-1c6d')}`, false],
    ['a variant outside 8-b', `SERVICE_${UUID.replace('-8e7f', '-ce7f')}`, false],
    ['text before', `xSERVICE_${UUID}`, false],
    ['text after', `SERVICE_${UUID}x`, false],
    ['a short last group', `SERVICE_${UUID.slice(0, -1)}`, false],
    ['empty', '', false],
  ])('%s: %s is %s', (_what, key, expected) => {
    expect(isWellFormedKey(key, 'SERVICE')).toBe(expected);
  });

  it('a prefix is matched as text, its regular-expression characters escaped', () => {
    expect(isWellFormedKey(`A.B_${UUID}`, 'A.B')).toBe(true);
    expect(isWellFormedKey(`AxB_${UUID}`, 'A.B')).toBe(false);
    // Each prefix has its own pattern: one compiled before does not answer for another.
    expect(isWellFormedKey(`AxB_${UUID}`, 'AxB')).toBe(true);
    expect(isWellFormedKey(`A.B_${UUID}`, 'AxB')).toBe(false);
  });
});

describe('the stored digest', () => {
  const key = `SERVICE_${UUID}`;
  it('is SHA-256 of the key, hex, without a pepper', () => {
    expect(keyDigest(key, null)).toBe(createHash('sha256').update(key).digest('hex'));
  });
  it('is HMAC-SHA-256 keyed with the pepper, hex, with one', () => {
    expect(keyDigest(key, 'pepper')).toBe(createHmac('sha256', 'pepper').update(key).digest('hex'));
    expect(keyDigest(key, 'pepper')).not.toBe(keyDigest(key, 'other'));
  });
  it('digests compare equal only when every byte is equal, whatever their lengths', () => {
    const d = keyDigest(key, null);
    expect(digestsEqual(d, d)).toBe(true);
    expect(digestsEqual(d, keyDigest(`${key}x`, null))).toBe(false);
    expect(digestsEqual(d, d.slice(0, 62))).toBe(false);
    expect(digestsEqual(d.slice(0, 62), d)).toBe(false);
  });
});
