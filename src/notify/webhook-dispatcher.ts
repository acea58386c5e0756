import { inSpan } from '../telemetry/spans.js';
import type { Logger } from 'pino';
import { Agent, request } from 'undici';
import { PLANS, type Config, type Plan } from '../config.js';
import type { AreaTree } from '../domain/area.js';
import { changeBody, changeFilterOf, type ChangeFilterParams } from '../domain/change.js';
import type { ChangesRepository } from '../store/changes-repository.js';
import type { ActiveSubscription, AttemptOutcome, AttemptRecord, WebhooksRepository } from '../store/webhooks-repository.js';
import type { ChangeTail } from './change-tail.js';
import { sign } from './webhook-signature.js';
import { guardedLookup, isPublicAddress } from './webhook-targets.js';
import { isIP } from 'node:net';
import type { Metrics } from '../metrics/metrics.js';

/** Events read from the log at once for one subscription. */
const FAN_OUT_BATCH = 500;
/** While attempts run and nothing else was due, how often a pass looks again for new events and due retries (ms). */
const REFILL_MS = 1000;
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
  /** Where attempts are counted by outcome, and their delay after falling due measured. */
  metrics?: Metrics;
}

/** The dispatcher's own state, for /v1/health. */
export interface DispatcherState {
  running: boolean;
  /** Attempts in flight on this instance now. */
  inFlight: number;
  /** Attempts this instance made since it started. */
  attempted: number;
  /** The last failed pass (not a failed attempt, which is the receiver's): its cause and when (UTC). */
  lastError: string | null;
  lastErrorAt: string | null;
}

/** A claimed delivery, as an attempt needs it. */
type Claimed = {
  id: number;
  subscription_id: string;
  message_id: string;
  payload: string;
  attempts: number;
  url: string;
  secret: string;
  next_attempt_at: string;
};

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
 * once per subscription and event whatever the number of instances, then keeps `concurrency` attempts in
 * flight until nothing is due: retries that fell due are claimed first, then new deliveries, each oldest due
 * first (so a retry is not starved by the thousands of deliveries a sync enqueues at once), at most `concurrencyPerSubscription` of one subscription at once (a slow or
 * failing receiver holds back only its own), each under a lease that is renewed while its attempt runs (so a
 * long sync holding the database cannot make it run out and another instance send it again).
 */
export class WebhookDispatcher {
  private readonly agent: Agent;
  private readonly stopped = new AbortController();
  private loop: Promise<void> | null = null;
  private readonly skipped = new Set<string>();
  /** Attempts in flight: delivery id -> subscription id. */
  private readonly inFlight = new Map<number, string>();
  /** Deliveries this instance holds a lease on: queued, in flight, or their outcome not yet recorded. */
  private readonly held = new Set<number>();
  private lastError: { message: string; at: string } | null = null;
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

  /** The dispatcher's state, for /v1/health. */
  state(): DispatcherState {
    return {
      running: this.loop !== null && !this.stopped.signal.aborted,
      inFlight: this.inFlight.size,
      attempted: this.attempted,
      lastError: this.lastError?.message ?? null,
      lastErrorAt: this.lastError?.at ?? null,
    };
  }

  /** A lease's length: an attempt's timeout and a margin for recording it. */
  private leaseMs(): number {
    return (this.deps.config.webhooks.timeoutSeconds + 30) * 1000;
  }

  /**
   * One pass: new events become deliveries, then due deliveries are attempted until none is due. Deliveries are
   * claimed in batches into a local queue (up to 8 x `concurrency`, at most a quarter of them of one subscription)
   * and their outcomes recorded in batches, one transaction each: on SQLite the sync's long write transactions
   * hold the one writer, and a claim and a record for every attempt waited behind each of them. Attempts run
   * `concurrency` at a time, at most `concurrencyPerSubscription` of one subscription. Returns the attempts made.
   */
  async pass(): Promise<number> {
    await this.fanOut();
    const { concurrency, concurrencyPerSubscription } = this.deps.config.webhooks;
    const prefetch = concurrency * 8;
    const perSubscriptionQueued = Math.max(concurrencyPerSubscription, Math.floor(prefetch / 4));
    const queue: Claimed[] = [];
    const running = new Set<Promise<void>>();
    const records: AttemptRecord[] = [];
    let recording: Promise<void> | null = null;
    let recordError: unknown = null;
    const record = (): void => {
      if (recording || !records.length) return;
      const batch = records.splice(0);
      recording = this.deps.webhooks
        .finishMany(batch)
        .then(
          () => {
            for (const r of batch) this.held.delete(r.attempt.delivery_id);
          },
          (error: unknown) => {
            recordError ??= error;
          },
        )
        .finally(() => {
          recording = null;
          record();
        });
    };
    const inFlightOf = (subscription: string) => [...this.inFlight.values()].filter((s) => s === subscription).length;
    const renew = setInterval(
      () => void this.renewLeases().catch((e: Error) => this.deps.logger.warn({ err: e.message }, 'webhook leases not renewed')),
      this.leaseMs() / 3,
    );
    renew.unref();
    let attempted = 0;
    let exhausted = false;
    let lastClaim = 0;
    let fannedOutTo = await this.deps.changes.latestId();
    try {
      while (!this.stopped.signal.aborted && recordError === null) {
        // Nothing was due at the last claim: while attempts run (a slow receiver), look again each second for new
        // events and retries falling due, rather than leaving them to the next pass.
        if (exhausted && performance.now() - lastClaim >= REFILL_MS) {
          const head = await this.deps.changes.latestId();
          if (head > fannedOutTo) await this.fanOut();
          fannedOutTo = head;
          exhausted = false;
        }
        if (!exhausted && queue.length < prefetch / 2) {
          lastClaim = performance.now();
          const now = this.deps.clock();
          const bySubscription = new Map<string, number>();
          for (const s of [...queue.map((d) => d.subscription_id), ...this.inFlight.values()])
            bySubscription.set(s, (bySubscription.get(s) ?? 0) + 1);
          const full = [...bySubscription].filter(([, n]) => n >= perSubscriptionQueued).map(([s]) => s);
          const claimed = await this.deps.webhooks.claim(
            now.toISOString(),
            new Date(now.getTime() + this.leaseMs()).toISOString(),
            prefetch - queue.length,
            {
              perSubscription: perSubscriptionQueued,
              except: full,
            },
          );
          for (const d of claimed) this.held.add(d.id);
          queue.push(...claimed);
          // Nothing more due now: the pass ends once the queue is done (retries falling due meanwhile wait for the next).
          exhausted = claimed.length === 0;
        }
        // Start what the limits allow, oldest claimed first, passing over subscriptions at their limit.
        for (let i = 0; i < queue.length && running.size < concurrency; ) {
          const d = queue[i];
          if (inFlightOf(d.subscription_id) >= concurrencyPerSubscription) {
            i++;
            continue;
          }
          queue.splice(i, 1);
          this.inFlight.set(d.id, d.subscription_id);
          const attempt: Promise<void> = this.attempt(d)
            .then((r) => {
              records.push(r);
              record();
            })
            .finally(() => {
              this.inFlight.delete(d.id);
              running.delete(attempt);
            });
          running.add(attempt);
          attempted++;
          this.attempted++;
        }
        if (!running.size) {
          if (exhausted || !queue.length) break;
          continue;
        }
        let wake: NodeJS.Timeout | undefined;
        await Promise.race([...running, new Promise<void>((resolve) => (wake = setTimeout(resolve, REFILL_MS)))]);
        clearTimeout(wake);
      }
    } finally {
      await Promise.all(running);
      while (recording || records.length) {
        record();
        await recording;
      }
      // Claimed but not attempted (stopping, or a record failed): given back at once, for this or another instance.
      if (queue.length) {
        await this.deps.webhooks.release(queue.map((d) => d.id));
        for (const d of queue) this.held.delete(d.id);
      }
      clearInterval(renew);
    }
    if (recordError !== null) throw recordError;
    return attempted;
  }

  /** Extends the leases of the deliveries this instance holds. */
  private async renewLeases(): Promise<void> {
    if (!this.held.size) return;
    await this.deps.webhooks.renewLeases([...this.held], new Date(this.deps.clock().getTime() + this.leaseMs()).toISOString());
  }

  private async run(): Promise<void> {
    const { pollSeconds } = this.deps.config.webhooks;
    while (!this.stopped.signal.aborted) {
      let head = 0;
      try {
        head = await this.deps.changes.latestId();
        await this.pass();
      } catch (error) {
        this.lastError = { message: (error as Error).message, at: this.deps.clock().toISOString() };
        this.deps.logger.warn({ job: 'webhooks', err: (error as Error).message }, 'webhook pass failed; trying again');
      }
      await this.deps.tail.wait(head, pollSeconds, this.stopped.signal);
    }
  }

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

  /** Sends one attempt of `d` and says how it went (recorded by the caller, in a batch with others). */
  private attempt(d: Claimed): Promise<AttemptRecord> {
    return inSpan(
      'webhook.attempt',
      { subscription: d.subscription_id, delivery: d.id, attempt: d.attempts },
      () => this.attemptTraced(d),
      { root: true },
    );
  }

  private async attemptTraced(d: Claimed): Promise<AttemptRecord> {
    const { schedule, timeoutSeconds } = this.deps.config.webhooks;
    const started = this.deps.clock();
    this.deps.metrics?.webhookLateness.observe(
      { kind: d.attempts > 1 ? 'retry' : 'first' },
      Math.max(0, started.getTime() - Date.parse(d.next_attempt_at)) / 1000,
    );
    const timestamp = Math.floor(started.getTime() / 1000);
    let statusCode: number | null = null;
    let error: string | null = null;
    const t0 = performance.now();
    try {
      // A host written as an address is never looked up, so the guarded lookup cannot see it: check it here.
      const host = new URL(d.url).hostname.replace(/^\[|\]$/g, '');
      if (!this.deps.config.webhooks.allowPrivateTargets && isIP(host) && !isPublicAddress(host))
        throw new Error(`refused: ${host} is a private or reserved address`);
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
    else if (d.attempts < schedule.length)
      outcome = { status: 'pending', nextAttemptAt: new Date(this.deps.clock().getTime() + schedule[d.attempts] * 1000).toISOString() };
    else outcome = { status: 'dead' };
    this.deps.metrics?.webhookAttempts.inc({ outcome: outcome.status === 'pending' ? 'retry' : outcome.status });
    const facts = { delivery: d.id, subscription: d.subscription_id, webhookId: d.message_id, attempt: d.attempts, statusCode, ms };
    if (outcome.status === 'delivered') this.deps.logger.debug(facts, 'webhook delivered');
    else if (outcome.status === 'pending')
      this.deps.logger.info({ ...facts, error, nextAttemptAt: outcome.nextAttemptAt }, 'webhook attempt failed; will retry');
    else this.deps.logger.warn({ ...facts, error }, 'webhook delivery dead-lettered after its last attempt');
    return {
      attempt: { delivery_id: d.id, attempt: d.attempts, attempted_at: started.toISOString(), status_code: statusCode, error, ms },
      outcome,
    };
  }
}
