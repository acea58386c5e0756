import { createCipheriv, createDecipheriv, hash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * A new key kept until the success page shows it once: AES-256-GCM under a key derived (HKDF-SHA-256, a random salt)
 * from the checkout session's id, which only the subscriber (in the success page's address) and the provider know. So
 * the database alone never yields a key, shown or not.
 */
const INFO = 'nyc-listings key reveal';

/** The table's key of a checkout session: SHA-256 of its id, hex (the id itself is the seal's secret, never stored). */
export function sessionDigest(sessionId: string): string {
  return hash('sha256', sessionId, 'hex');
}

/** `key` sealed with `sessionId`: base64url of salt (16 bytes), nonce (12), tag (16) and ciphertext. */
export function sealKey(key: string, sessionId: string): string {
  const salt = randomBytes(16);
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(hkdfSync('sha256', sessionId, salt, INFO, 32)), nonce);
  const sealed = Buffer.concat([cipher.update(key, 'utf8'), cipher.final()]);
  return Buffer.concat([salt, nonce, cipher.getAuthTag(), sealed]).toString('base64url');
}

/** The key in `sealed`. @throws Error when `sessionId` is not the one it was sealed with, or the seal was altered. */
export function unsealKey(sealed: string, sessionId: string): string {
  const bytes = Buffer.from(sealed, 'base64url');
  const [salt, nonce, tag, body] = [bytes.subarray(0, 16), bytes.subarray(16, 28), bytes.subarray(28, 44), bytes.subarray(44)];
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(hkdfSync('sha256', sessionId, salt, INFO, 32)), nonce);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
}
