import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Config, Plan } from '../../config.js';
import type { Billing } from '../../billing/billing.js';
import { monthOf } from '../../access/plan-limiters.js';
import type { QuotaMeter } from '../../access/quota-meter.js';
import { isWellFormedKey, keyDigest } from '../../domain/api-key.js';
import { keyAccess, refusalReason } from '../../domain/subscription.js';
import { keyState, rotateKey } from '../../keys/key-admin.js';
import type { ApiKeyRow, KeysRepository } from '../../store/keys-repository.js';
import { accountFormPage, accountPage, keyRotatedPage } from '../pages/billing-pages.js';
import type { Raw } from '../pages/html.js';
import { sendPage, wantsHtml } from '../pages/html.js';
import { Problem } from '../problem.js';
import { baseUrlOf, registerPageErrors } from './billing.js';

/** A form that carries a key (the account page's buttons), or no body at all: then `Authorization: Bearer` carries it. */
const KeyForm = Type.Union([
  Type.Object({ key: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
  Type.Null(),
]);

/**
 * A subscriber's own pages, outside /v1 (docs/billing.md): GET /account (a form to paste a key), POST /account (the
 * key's plan and status, this month's usage with a chart by day, its last use), POST /billing/portal (303 to the
 * provider's customer portal) and POST /account/keys/rotate (a new key; the old one keeps working for
 * `KEY_ROTATION_GRACE_SECONDS`). The key comes in the form's `key` field or as `Authorization: Bearer`; it is never in
 * an address. Public routes: they are not counted against the key's limits.
 */
/** What the account pages read and write. */
interface AccountDeps {
  billing: Billing;
  keys: KeysRepository;
  quotas: QuotaMeter;
  config: Config;
  clock: () => Date;
}

/** The stored key the request gives. @throws Problem 401 when it gives none, or one malformed, unknown or revoked */
async function keyOf(deps: AccountDeps, request: FastifyRequest<{ Body: { key?: string } }>): Promise<{ key: string; row: ApiKeyRow }> {
  const { keys, config } = deps;
  const given = request.body?.key?.trim() || /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1];
  if (!given) throw new Problem('MISSING_API_KEY', 'Paste the API key (form field `key`, or `Authorization: Bearer <key>`).');
  const row = isWellFormedKey(given, config.apiKeyPrefix) ? await keys.findByDigest(keyDigest(given, config.apiKeyPepper)) : undefined;
  if (!row || row.revoked_at)
    throw new Problem(
      'INVALID_API_KEY',
      `This is not a key of this service, or it was revoked (keys look like ${config.apiKeyPrefix}_<uuid>).`,
    );
  return { key: given, row };
}

/** The account page of a key (`key` as given, `row` as stored): its plan, limits, subscription, this month's usage by day. */
async function accountPageOf(deps: AccountDeps, key: string, row: ApiKeyRow): Promise<Raw> {
  const { billing, config } = deps;
  const subject = row.subject ?? `key:${row.digest}`;
  const { month } = monthOf(deps.clock());
  const [used, days, subscription] = await Promise.all([
    deps.quotas.used(subject, month),
    deps.quotas.days(subject, month),
    billing.subscriptionOf(row),
  ]);
  const plan = row.plan as Plan;
  return accountPage({
    key,
    plan,
    limits: config.plans[plan],
    source: row.source,
    label: row.label,
    state: keyState(row, deps.clock().getTime()),
    subscription: subscription
      ? {
          status: row.subscription_status ?? subscription.status,
          currentPeriodEnd: subscription.current_period_end,
          cancelAt: subscription.cancel_at,
        }
      : null,
    month,
    used,
    days,
    lastUsedAt: row.last_used_at,
    replacedAt: row.replaced_at,
    expiresAt: row.expires_at,
  });
}

export function registerAccountRoutes(app: FastifyInstance, deps: AccountDeps): void {
  const { billing, keys, config } = deps;
  const access = { access: 'public' as const };

  app.register(async (scope) => {
    await scope.register(formbody);
    registerPageErrors(scope, billing);

    scope.get('/account', { config: access, schema: { hide: true } }, async (_request, reply) =>
      sendPage(reply, 'Account', accountFormPage()),
    );

    scope.post(
      '/account',
      { config: access, schema: { hide: true, body: KeyForm } },
      async (request: FastifyRequest<{ Body: { key?: string } }>, reply) => {
        const { key, row } = await keyOf(deps, request);
        return sendPage(reply, 'Account', await accountPageOf(deps, key, row), { formTargets: billing.provider.redirectOrigins });
      },
    );

    scope.post(
      '/billing/portal',
      { config: access, schema: { hide: true, body: KeyForm } },
      async (request: FastifyRequest<{ Body: { key?: string } }>, reply) => {
        const { row } = await keyOf(deps, request);
        const url = await billing.portalFor(row, `${baseUrlOf(request, config)}/account`);
        if (!url)
          throw new Problem(
            'NOT_FOUND',
            'This key was not bought through a subscription (the operator issued it): there is no billing to manage.',
          );
        return reply.redirect(url, 303);
      },
    );

    scope.post(
      '/account/keys/rotate',
      { config: access, schema: { hide: true, body: KeyForm } },
      async (request: FastifyRequest<{ Body: { key?: string } }>, reply) => {
        const { row } = await keyOf(deps, request);
        if (row.subscription_status !== null && keyAccess(row.subscription_status) === 'refused')
          throw new Problem('SUBSCRIPTION_INACTIVE', `This key cannot be rotated: ${refusalReason(row.subscription_status)}.`, {
            members: { subscriptionStatus: row.subscription_status, account: '/account', pricing: '/pricing' },
          });
        const rotated = await rotateKey(keys, config, row.id, deps.clock());
        if (!rotated) throw new Problem('KEY_REPLACED', 'This key was replaced or has expired: rotate the key that replaced it.');
        if (!wantsHtml(request))
          return reply
            .header('Cache-Control', 'no-store')
            .send({ data: { key: rotated.key, plan: row.plan, previousKeyExpiresAt: rotated.previousExpiresAt } });
        return sendPage(reply, 'Your new API key', keyRotatedPage(rotated.key, rotated.previousExpiresAt));
      },
    );
  });
}
