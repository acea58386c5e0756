import { PLANS, type Plan } from '../config.js';
import { changeBody, changeFilterOf, type ChangeFilterParams } from '../domain/change.js';
import type { ActiveSubscription } from '../store/webhooks-repository.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { AreaTree } from '../domain/area.js';
import type { ChangesRepository } from '../store/changes-repository.js';
import type { WebhooksRepository } from '../store/webhooks-repository.js';

/** Events read from the log at once for one subscription. */
const FAN_OUT_BATCH = 500;

/** A stored filter (a query string checked when the subscription was added) -> its parameters. */
export function filterParams(filter: string): ChangeFilterParams {
  const params: Record<string, string | number> = {};
  for (const [name, value] of new URLSearchParams(filter)) params[name] = /^(min|max)/.test(name) ? Number(value) : value;
  return params as ChangeFilterParams;
}

/** What the fan-out reads and writes. */
export interface WebhookFanOutDeps {
  webhooks: WebhooksRepository;
  changes: ChangesRepository;
  /** The area tree a subscription's `areas` filter is expanded with. */
  areaTree: () => Promise<AreaTree>;
  config: Config;
  clock: () => Date;
  logger: Logger;
}

/**
 * The fan-out of webhook deliveries: each active subscription's events since its cursor, matching its filter, become
 * its deliveries (once per subscription and event, whatever the number of instances). A subscription whose key is
 * expired or below the webhooks plan is skipped (its cursor moves on), with a warning once.
 */
export class WebhookFanOut {
  private readonly skipped = new Set<string>();

  constructor(private readonly deps: WebhookFanOutDeps) {}

  private qualifies(s: ActiveSubscription, now: Date): boolean {
    const required = this.deps.config.featurePlans.webhooks;
    const ok = PLANS.indexOf(s.plan as Plan) >= PLANS.indexOf(required) && (!s.key_expires_at || new Date(s.key_expires_at) > now);
    if (!ok && !this.skipped.has(s.id))
      this.deps.logger.warn(
        { subscription: s.id, key: s.key_id },
        `webhook subscription skipped: its key is expired or below the ${required} plan`,
      );
    if (ok) this.skipped.delete(s.id);
    else this.skipped.add(s.id);
    return ok;
  }

  /** Turns the events each subscription has not yet seen into its deliveries, up to the change log's head. */
  async run(): Promise<void> {
    const subscriptions = await this.deps.webhooks.active();
    if (!subscriptions.length) return;
    const tree = await this.deps.areaTree();
    // The head is read once, before any page: every matching event up to it is in the pages read after,
    // so each cursor may move past it (a later event is left for the next pass).
    const head = await this.deps.changes.latestId();
    for (const s of subscriptions) {
      const now = this.deps.clock();
      const deliver = this.qualifies(s, now);
      const filter = { ...changeFilterOf(filterParams(s.filter), tree), types: s.events.split(',') };
      let cursor = Number(s.cursor);
      for (;;) {
        const events = deliver ? await this.deps.changes.page(cursor, FAN_OUT_BATCH, filter) : [];
        const full = events.length === FAN_OUT_BATCH;
        // Ids become visible in order, so past the last event read nothing matching is left behind either.
        const next = full ? events.at(-1)!.id : Math.max(head, cursor, events.at(-1)?.id ?? 0);
        if (next === cursor) break;
        const items = events.map((e) => ({
          eventId: e.id,
          messageId: `msg_${e.id}_${s.id.replace(/^wh_/, '')}`,
          payload: JSON.stringify({ type: e.type, timestamp: e.occurredAt, data: changeBody(e) }),
        }));
        await this.deps.webhooks.enqueue(s.id, items, next, now.toISOString());
        cursor = next;
        if (!full) break;
      }
    }
  }
}
