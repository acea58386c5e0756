import { createHmac, randomBytes } from 'node:crypto';

/** Prefix of a signing secret, as the Standard Webhooks specification writes them. */
const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 32 random bytes. Shown once when a subscription is added. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The `webhook-signature` header value of the Standard Webhooks specification (v1, symmetric):
 * `v1,` + base64 HMAC-SHA256, keyed with the secret's base64-decoded bytes, of
 * `<webhook-id>.<webhook-timestamp>.<body>`. `timestampSeconds` is Unix time in whole seconds.
 */
export function sign(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
}
