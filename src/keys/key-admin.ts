import Papa from 'papaparse';
import { PLANS, type Config, type Plan } from '../config.js';
import { isWellFormedKey, keyDigest, keyHint, newApiKey } from '../domain/api-key.js';
import { keyAccess } from '../domain/subscription.js';
import type { ApiKeyRow, KeysRepository } from '../store/keys-repository.js';

/** `YYYY-MM-DD` or an ISO instant -> ISO instant (UTC); a bare date expires at its start. */
function instant(value: string | null): string | null {
  if (!value) return null;
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) throw new Error(`not a date: ${value}`);
  return new Date(ms).toISOString();
}

/**
 * Web origins as a publishable key stores them: each `scheme://host[:port]`, lower case, no path.
 * @throws Error naming a value that is not an http(s) origin.
 */
export function parseOrigins(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean)
        .map((o) => {
          let url: URL;
          try {
            url = new URL(o);
          } catch {
            throw new Error(`not an origin: ${o} (write https://host or http://host:port)`);
          }
          if (
            (url.protocol !== 'https:' && url.protocol !== 'http:') ||
            url.origin === 'null' ||
            (url.pathname !== '/' && url.pathname !== '') ||
            url.search ||
            url.hash
          ) {
            throw new Error(`not an origin: ${o} (write https://host or http://host:port, no path)`);
          }
          return url.origin;
        }),
    ),
  ];
}

/**
 * Issues a key of `plan`; returns the plain key, which is not stored and cannot be shown again. With
 * `origins`, a publishable key: visible in a web page, accepted only from those origins. With `operations` (OpenAPI
 * operation ids, checked by the caller), a key that may call only those.
 * @throws Error when `expires` is not a date or is already past.
 */
export async function issueKey(
  keys: KeysRepository,
  config: Config,
  input: { plan: Plan; label: string | null; expires: string | null; origins?: string[] | null; operations?: string[] | null },
): Promise<string> {
  const expiresAt = instant(input.expires);
  if (expiresAt && Date.parse(expiresAt) <= Date.now())
    throw new Error(`the expiry ${expiresAt} is in the past: a key issued so would never work`);
  const key = newApiKey(config.apiKeyPrefix);
  await keys.insert({
    digest: keyDigest(key, config.apiKeyPepper),
    hint: keyHint(key, config.apiKeyPrefix),
    plan: input.plan,
    label: input.label,
    expiresAt,
    createdAt: new Date().toISOString(),
    origins: input.origins ?? null,
    operations: input.operations ?? null,
  });
  return key;
}

/**
 * Replaces the key `id` by a new one (same plan, subscription, origins and operations; limits and quota counted
 * together): the old one keeps working for `KEY_ROTATION_GRACE_SECONDS` more. Returns the new plain key, which is not
 * stored and cannot be shown again, and when the old one stops working (UTC); undefined when `id` is not a key that
 * works now (unknown, revoked, expired or already replaced).
 */
export async function rotateKey(
  keys: KeysRepository,
  config: Config,
  id: string,
  now: Date,
): Promise<{ key: string; id: string; previousExpiresAt: string } | undefined> {
  const key = newApiKey(config.apiKeyPrefix);
  const graceUntil = new Date(now.getTime() + config.billing.keyRotationGraceSeconds * 1000).toISOString();
  const created = await keys.rotate(
    id,
    { digest: keyDigest(key, config.apiKeyPepper), hint: keyHint(key, config.apiKeyPrefix) },
    now.toISOString(),
    graceUntil,
  );
  if (!created) return undefined;
  const previous = await keys.findById(id);
  return { key, id: created, previousExpiresAt: previous?.expires_at ?? graceUntil };
}

/** A key's state for people: `revoked`, `replaced` (in its grace), `expired`, its subscription's refusal, or `active`. */
export function keyState(row: ApiKeyRow, now: number): string {
  if (row.revoked_at) return `revoked ${row.revoked_at}`;
  if (row.expires_at && Date.parse(row.expires_at) <= now) return 'expired';
  if (row.subscription_status && keyAccess(row.subscription_status) === 'refused') return 'inactive';
  if (row.replaced_at) return `replaced, works until ${row.expires_at}`;
  return 'active';
}

/**
 * A table of keys for people: id, plan, label, the key's first 8 uuid characters, dates, its state, where it came
 * from (`cli`, `import`, `stripe`), its customer, subscription and the subscription's status, a publishable key's
 * origins, the operations a key is limited to.
 */
export function listKeys(rows: (ApiKeyRow & { customer_id?: string | null })[], now = Date.now()): string {
  const lines = rows.map((r) =>
    [
      r.id,
      r.plan,
      r.label ?? '-',
      `${r.prefix_hint}…`,
      r.created_at,
      r.expires_at ?? '-',
      keyState(r, now),
      r.last_used_at ?? '-',
      r.source,
      r.customer_id ?? '-',
      r.subscription_id ?? '-',
      r.subscription_status ?? '-',
      r.origins ? `publishable: ${r.origins}` : 'secret',
      r.operations ?? 'all',
    ].join('\t'),
  );
  return [
    'id\tplan\tlabel\tkey\tcreated\texpires\tstatus\tlast used\tsource\tcustomer\tsubscription\tsubscription status\tkind\toperations',
    ...lines,
  ].join('\n');
}

/**
 * The rows of a CSV export with a header row, by column name (names and values trimmed), read by papaparse.
 * @throws Error naming the first row that is not well-formed CSV.
 */
function csvRows(text: string): Record<string, string>[] {
  const parsed = Papa.parse<Record<string, string>>(text, {
    header: true,
    skipEmptyLines: true,
    transformHeader: (h) => h.trim(),
    transform: (v) => v.trim(),
  });
  const error = parsed.errors[0];
  if (error) throw new Error(`CSV row ${error.row === undefined ? '?' : error.row + 1}: ${error.message}`);
  return parsed.data;
}

/**
 * Imports keys exported by the subscription provider: a JSON array or a CSV with columns
 * `key, plan, label, expires`. A key already stored gets its plan, label and expiry updated.
 * @throws Error naming the row of a malformed key or unknown plan (nothing is imported then).
 */
export async function importKeys(
  keys: KeysRepository,
  config: Config,
  fileName: string,
  text: string,
): Promise<{ inserted: number; updated: number }> {
  const rows = (fileName.endsWith('.json') ? JSON.parse(text) : csvRows(text)) as Record<string, string>[];
  const checked = rows.map((row, i) => {
    const plan = String(row.plan ?? '').toLowerCase();
    if (!isWellFormedKey(String(row.key ?? ''), config.apiKeyPrefix))
      throw new Error(`row ${i + 1}: key is not ${config.apiKeyPrefix}_<uuid v4>`);
    if (!PLANS.includes(plan as Plan)) throw new Error(`row ${i + 1}: plan must be one of ${PLANS.join(', ')}`);
    return {
      key: String(row.key),
      plan: plan as Plan,
      label: row.label ? String(row.label) : null,
      expiresAt: instant(row.expires ? String(row.expires) : null),
    };
  });
  let inserted = 0;
  let updated = 0;
  for (const row of checked) {
    const digest = keyDigest(row.key, config.apiKeyPepper);
    if (await keys.findByDigest(digest)) {
      await keys.update(digest, row);
      updated++;
    } else {
      await keys.insert({
        digest,
        hint: keyHint(row.key, config.apiKeyPrefix),
        ...row,
        createdAt: new Date().toISOString(),
        source: 'import',
      });
      inserted++;
    }
  }
  return { inserted, updated };
}
