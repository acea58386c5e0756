import { createHmac, hash, randomUUID, timingSafeEqual } from 'node:crypto';

const UUID_V4 = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

/** A new plain key: `<PREFIX>_<uuid v4>`. */
export function newApiKey(prefix: string): string {
  return `${prefix}_${randomUUID()}`;
}

/** What a key is listed by: the first 8 characters of its uuid (never enough to use it). */
export function keyHint(key: string, prefix: string): string {
  return key.slice(prefix.length + 1, prefix.length + 9);
}

/** The key pattern of each prefix, compiled once (it is tested on every request). */
const keyPatterns = new Map<string, RegExp>();

/** Whether `key` has the form `<PREFIX>_<uuid v4>` (lower-case hex). */
export function isWellFormedKey(key: string, prefix: string): boolean {
  let pattern = keyPatterns.get(prefix);
  if (!pattern) {
    pattern = new RegExp(`^${prefix.replace(/[^A-Za-z0-9]/g, '\\$&')}_${UUID_V4}$`);
    keyPatterns.set(prefix, pattern);
  }
  return pattern.test(key);
}

/**
 * The stored digest of a key, hex: HMAC-SHA-256 with the server's pepper when one is configured,
 * else SHA-256. The plain key is never stored.
 */
export function keyDigest(key: string, pepper: string | null): string {
  // crypto.hash is the one-shot form: no Hash object per request.
  return pepper ? createHmac('sha256', pepper).update(key).digest('hex') : hash('sha256', key, 'hex');
}

/** Constant-time comparison of two hex digests. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
