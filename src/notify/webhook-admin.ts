import { randomBytes } from 'node:crypto';
import { PLANS, type Config, type Plan } from '../config.js';
import { CHANGE_TYPES } from '../domain/change.js';
import type { ChangesRepository } from '../store/changes-repository.js';
import type { KeysRepository } from '../store/keys-repository.js';
import type { WebhookDeliveryRow, WebhookSubscriptionRow, WebhooksRepository } from '../store/webhooks-repository.js';
import { newSigningSecret } from './webhook-signature.js';
import { targetRefusal } from './webhook-targets.js';

/** A subscription the operator asked for that cannot be kept; the message says why. */
export class WebhookAdminError extends Error {}

export interface WebhookAdminDeps {
  webhooks: WebhooksRepository;
  keys: KeysRepository;
  changes: ChangesRepository;
  config: Config;
  clock: () => Date;
}

/**
 * Adds a subscription for key `keyId`: events of `events` passing `filter` (a query string already
 * checked against the change filter schema) are POSTed to `url` from now on (events before it are not
 * sent). Returns the subscription and its signing secret, which is stored but never shown again.
 * @throws WebhookAdminError for an unknown, revoked or expired key, a plan below `featurePlans.webhooks`,
 * an unknown event type, or a refused target (see {@link targetRefusal}).
 */
export async function addSubscription(
  deps: WebhookAdminDeps,
  input: { keyId: string; url: string; events: string[]; filter: string },
): Promise<{ subscription: WebhookSubscriptionRow; secret: string }> {
  const now = deps.clock();
  const key = await deps.keys.findById(input.keyId);
  if (!key) throw new WebhookAdminError(`no key with id ${input.keyId} (see keys list)`);
  if (key.revoked_at) throw new WebhookAdminError(`key ${input.keyId} is revoked`);
  if (key.expires_at && new Date(key.expires_at) <= now) throw new WebhookAdminError(`key ${input.keyId} expired on ${key.expires_at}`);
  const required = deps.config.featurePlans.webhooks;
  if (PLANS.indexOf(key.plan as Plan) < PLANS.indexOf(required))
    throw new WebhookAdminError(
      `webhooks are for the ${required} plan and above; key ${input.keyId} is on ${key.plan} (MIN_PLAN_WEBHOOKS)`,
    );
  const unknown = input.events.filter((e) => !(CHANGE_TYPES as readonly string[]).includes(e));
  if (!input.events.length || unknown.length)
    throw new WebhookAdminError(
      `--events takes a comma-separated list of ${CHANGE_TYPES.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`,
    );
  const refusal = await targetRefusal(input.url, deps.config.webhooks.allowPrivateTargets);
  if (refusal) throw new WebhookAdminError(`--url ${input.url}: ${refusal}`);
  const secret = newSigningSecret();
  const subscription: WebhookSubscriptionRow = {
    id: `wh_${randomBytes(8).toString('hex')}`,
    key_id: key.id,
    url: input.url,
    events: [...new Set(input.events)].join(','),
    filter: input.filter,
    secret,
    created_at: now.toISOString(),
    removed_at: null,
    cursor: await deps.changes.latestId(),
  };
  await deps.webhooks.add(subscription);
  return { subscription, secret };
}

/** A table of subscriptions for people (never the secret): id, key, url, events, filter, created, status. */
export function listSubscriptions(rows: WebhookSubscriptionRow[]): string {
  const lines = rows.map((r) =>
    [r.id, r.key_id, r.url, r.events, r.filter || '-', r.created_at, r.removed_at ? `removed ${r.removed_at}` : 'active'].join('\t'),
  );
  return ['id\tkey\turl\tevents\tfilter\tcreated\tstatus', ...lines].join('\n');
}

/** A table of deliveries for people: id, subscription, webhook-id, event, status, attempts, last answer, next attempt. */
export function listDeliveries(rows: WebhookDeliveryRow[]): string {
  const lines = rows.map((r) =>
    [
      r.id,
      r.subscription_id,
      r.message_id,
      r.event_id,
      r.status,
      r.attempts,
      r.last_status_code ?? '-',
      r.last_error ?? '-',
      r.status === 'pending' ? r.next_attempt_at : (r.finished_at ?? '-'),
    ].join('\t'),
  );
  return ['id\tsubscription\twebhook-id\tevent\tstatus\tattempts\tlast status\tlast error\tnext attempt / finished', ...lines].join('\n');
}
