import { isIP } from 'node:net';
import { type Agent, request } from 'undici';
import type { Config } from '../config.js';
import { sign } from './webhook-signature.js';
import { isPublicAddress } from './webhook-targets.js';

/** Bytes of a receiver's answer read (and thrown away) before the connection is released. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** A claimed delivery, as an attempt needs it. */
export type Claimed = {
  id: number;
  subscription_id: string;
  message_id: string;
  payload: string;
  attempts: number;
  url: string;
  secret: string;
  next_attempt_at: string;
};

/**
 * POSTs delivery `d` to its URL as Standard Webhooks describes (signed, `webhook-timestamp` the Unix seconds of
 * `started`), through `agent` (whose lookup refuses private addresses unless allowed). Returns the answer's status
 * (null when none came), the error (null on a 2xx; a refusal, a timeout or another status otherwise) and the
 * milliseconds it took. Never throws.
 */
export async function sendAttempt(
  agent: Agent,
  d: Claimed,
  started: Date,
  webhooks: Config['webhooks'],
): Promise<{ statusCode: number | null; error: string | null; ms: number }> {
  const { timeoutSeconds } = webhooks;
  const timestamp = Math.floor(started.getTime() / 1000);
  let statusCode: number | null = null;
  let error: string | null = null;
  const t0 = performance.now();
  try {
    // A host written as an address is never looked up, so the guarded lookup cannot see it: check it here.
    const host = new URL(d.url).hostname.replace(/^\[|\]$/g, '');
    if (!webhooks.allowPrivateTargets && isIP(host) && !isPublicAddress(host))
      throw new Error(`refused: ${host} is a private or reserved address`);
    const answer = await request(d.url, {
      method: 'POST',
      dispatcher: agent,
      body: d.payload,
      signal: AbortSignal.timeout(timeoutSeconds * 1000),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'nyc-listings-webhooks/1',
        'webhook-id': d.message_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign(d.secret, d.message_id, timestamp, d.payload),
      },
    });
    statusCode = answer.statusCode;
    let read = 0;
    for await (const chunk of answer.body) {
      read += (chunk as Buffer).length;
      if (read > MAX_ANSWER_BYTES) break;
    }
    if (statusCode < 200 || statusCode > 299) error = `answered ${statusCode}`;
  } catch (e) {
    error = (e as Error).name === 'TimeoutError' ? `no answer within ${timeoutSeconds} s` : (e as Error).message;
  }
  const ms = Math.round(performance.now() - t0);
  return { statusCode, error, ms };
}
