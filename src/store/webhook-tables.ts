import type { Generated } from 'kysely';

// The tables of webhook subscriptions and deliveries (see Database in store/schema.ts): instants are ISO 8601 UTC strings.

export interface WebhookSubscriptionsTable {
  id: string;
  key_id: string;
  url: string;
  /** Comma-separated event types. */
  events: string;
  /** The subscription's filter as a query string ('' for none). */
  filter: string;
  /** `whsec_` + base64 of the signing key. */
  secret: string;
  created_at: string;
  removed_at: string | null;
  cursor: number;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  subscription_id: string;
  event_id: number;
  /** The `webhook-id` header, the same on every attempt. */
  message_id: string;
  payload: string;
  /** pending, delivered or dead. */
  status: string;
  attempts: number;
  next_attempt_at: string;
  leased_until: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface WebhookAttemptsTable {
  delivery_id: number;
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  ms: number;
}
