import type { Logger } from 'pino';
import { Agent, request } from 'undici';
import { PLANS, type Config, type Plan } from '../config.js';
import type { AreaTree } from '../domain/area.js';
import { changeBody, changeFilterOf, type ChangeFilterParams } from '../domain/change.js';
import type { ChangesRepository } from '../store/changes-repository.js';
import type { ActiveSubscription, AttemptOutcome, WebhooksRepository } from '../store/webhooks-repository.js';
import type { ChangeTail } from './change-tail.js';
import { sign } from './webhook-signature.js';
import { guardedLookup, isPublicAddress } from './webhook-targets.js';
import { isIP } from 'node:net';

/** Events read from the log at once for one subscription. */
const FAN_OUT_BATCH = 500;
/** Bytes of a receiver's answer read (and thrown away) before the connection is released. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface WebhookDispatcherDeps {
  webhooks: WebhooksRepository;
  changes: ChangesRepository;
  tail: ChangeTail;
  /** The area tree a subscription's `areas` filter is expanded with. */
  areaTree: () => Promise<AreaTree>;
  config: Config;
  clock: () => Date;
  logger: Logger;
}

/** A stored filter (a query string checked when the subscription was added) -> its parameters. */
export function filterParams(filter: string): ChangeFilterParams {
  const params: Record<string, string | number> = {};
  for (const [name, value] of new URLSearchParams(filter)) params[name] = /^(min|max)/.test(name) ? Number(value) : value;
  return params as ChangeFilterParams;
}

/**
 * Delivers change events to webhook subscriptions, as the Standard Webhooks specification describes:
 * a JSON body `{type, timestamp, data}` (data: the event as the feed shows it), headers `webhook-id`
 * (the same on every attempt), `webhook-timestamp` (Unix seconds of the attempt) and
 * `webhook-signature`. A 2xx answer within the timeout delivers; anything else is tried again after the
 * next step of the schedule, and after the last step the delivery is a dead letter. At least once: a
 * crash between an answer and its record means one more attempt after the lease runs out.
 *
 * Each pass (on every new event, else every `pollSeconds`) first turns new events into deliveries,
 * once per subscription and event whatever the number of instances, then claims due deliveries
 * under a lease and attempts them, `concurrency` at a time.
 */
export class WebhookDispatcher {
  private readonly agent: Agent;
  private readonly stopped = new AbortController();
  private loop: Promise<void> | null = null;
  private readonly skipped = new Set<string>();
  /** Attempts this instance made since it started. */
  attempted = 0;

  constructor(private readonly deps: WebhookDispatcherDeps) {
    const { timeoutSeconds, allowPrivateTargets } = deps.config.webhooks;
    this.agent = new Agent({
      connect: { lookup: guardedLookup(allowPrivateTargets), timeout: timeoutSeconds * 1000 },
      headersTimeout: timeoutSeconds * 1000,
      bodyTimeout: timeoutSeconds * 1000,
    });
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops after the pass in flight (attempts under way finish or time out). */
  async stop(): Promise<void> {
    if (this.stopped.signal.aborted) return;
    this.stopped.abort();
    await this.loop;
    await this.agent.close();
  }

  /** One pass: new events become deliveries, then due deliveries are attempted. Returns the attempts made. */
  async pass(): Promise<number> {
    await this.fanOut();
    let attempted = 0;
    for (;;) {
      const now = this.deps.clock();
      const lease = new Date(now.getTime() + (this.deps.config.webhooks.timeoutSeconds + 30) * 1000);
      const claimed = await this.deps.webhooks.claim(now.toISOString(), lease.toISOString(), this.deps.config.webhooks.concurrency);
      if (!claimed.length || this.stopped.signal.aborted) return attempted;
      await Promise.all(claimed.map((d) => this.attempt(d)));
      attempted += claimed.length;
      this.attempted += claimed.length;
    }
  }

  private async run(): Promise<void> {
    const { pollSeconds } = this.deps.config.webhooks;
    while (!this.stopped.signal.aborted) {
      let head = 0;
      try {
        head = await this.deps.changes.latestId();
        await this.pass();
      } catch (error) {
        this.deps.logger.warn({ err: (error as Error).message }, 'webhook pass failed; trying again');
      }
      await this.deps.tail.wait(head, pollSeconds, this.stopped.signal);
    }
  }

  private qualifies(s: ActiveSubscription, now: Date): boolean {
    const required = this.deps.config.featurePlans.webhooks;
    const ok = PLANS.indexOf(s.plan as Plan) >= PLANS.indexOf(required) && (!s.key_expires_at || new Date(s.key_expires_at) > now);
    if (!ok && !this.skipped.has(s.id)) this.deps.logger.warn({ subscription: s.id, key: s.key_id }, `webhook subscription skipped: its key is expired or below the ${required} plan`);
    if (ok) this.skipped.delete(s.id);
    else this.skipped.add(s.id);
    return ok;
  }

  private async fanOut(): Promise<void> {
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

  private async attempt(d: { id: number; subscription_id: string; message_id: string; payload: string; attempts: number; url: string; secret: string }): Promise<void> {
    const { schedule, timeoutSeconds } = this.deps.config.webhooks;
    const started = this.deps.clock();
    const timestamp = Math.floor(started.getTime() / 1000);
    let statusCode: number | null = null;
    let error: string | null = null;
    const t0 = performance.now();
    try {
      // A host written as an address is never looked up, so the guarded lookup cannot see it: check it here.
      const host = new URL(d.url).hostname.replace(/^\[|\]$/g, '');
      if (!this.deps.config.webhooks.allowPrivateTargets && isIP(host) && !isPublicAddress(host)) throw new Error(`refused: ${host} is a private or reserved address`);
      const answer = await request(d.url, {
        method: 'POST',
        dispatcher: this.agent,
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
    let outcome: AttemptOutcome;
    if (!error) outcome = { status: 'delivered' };
    else if (d.attempts < schedule.length) outcome = { status: 'pending', nextAttemptAt: new Date(this.deps.clock().getTime() + schedule[d.attempts] * 1000).toISOString() };
    else outcome = { status: 'dead' };
    await this.deps.webhooks.finish({ delivery_id: d.id, attempt: d.attempts, attempted_at: started.toISOString(), status_code: statusCode, error, ms }, outcome);
    const facts = { delivery: d.id, subscription: d.subscription_id, webhookId: d.message_id, attempt: d.attempts, statusCode, ms };
    if (outcome.status === 'delivered') this.deps.logger.debug(facts, 'webhook delivered');
    else if (outcome.status === 'pending') this.deps.logger.info({ ...facts, error, nextAttemptAt: outcome.nextAttemptAt }, 'webhook attempt failed; will retry');
    else this.deps.logger.warn({ ...facts, error }, 'webhook delivery dead-lettered after its last attempt');
  }
}
