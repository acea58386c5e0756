import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newSigningSecret, sign } from '../../src/notify/webhook-signature.js';

// Webhook signatures, checked by the Standard Webhooks reference library rather than by our own code.
describe('webhook signatures', () => {
  const body = JSON.stringify({ type: 'listing.price_changed', data: { id: '1545' } });
  const at = 1_795_000_000;

  it('a new secret is whsec_ and 32 random bytes in base64', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });

  it('the reference library verifies what we sign, and refuses it for another body, id, time or secret', () => {
    const secret = newSigningSecret();
    const signature = sign(secret, 'msg_1', at, body);
    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const verifier = new Webhook(secret);
    const headers = (id: string, time: number, sig: string) => ({
      'webhook-id': id,
      'webhook-timestamp': String(time),
      'webhook-signature': sig,
    });
    // The library checks the time against its own clock: sign and verify at the present.
    const now = Math.floor(Date.now() / 1000);
    expect(verifier.verify(body, headers('msg_1', now, sign(secret, 'msg_1', now, body)))).toEqual(JSON.parse(body));
    expect(() => verifier.verify(`${body} `, headers('msg_1', now, sign(secret, 'msg_1', now, body)))).toThrow();
    expect(() => verifier.verify(body, headers('msg_2', now, sign(secret, 'msg_1', now, body)))).toThrow();
    expect(() => verifier.verify(body, headers('msg_1', now, sign(secret, 'msg_1', now - 1, body)))).toThrow();
    expect(() => new Webhook(newSigningSecret()).verify(body, headers('msg_1', now, sign(secret, 'msg_1', now, body)))).toThrow();
  });

  it('a secret without the whsec_ prefix is read as the same base64 key', () => {
    const secret = newSigningSecret();
    expect(sign(secret.slice(6), 'msg_1', at, body)).toBe(sign(secret, 'msg_1', at, body));
  });
});
