import { inSpan } from '../telemetry/spans.js';
import { Agent } from 'undici';
import type { AttemptOutcome, AttemptRecord } from '../store/webhooks-repository.js';
import type { ChangeTail } from './change-tail.js';
import { AttemptRecorder } from './attempt-recorder.js';
import { type Claimed, sendAttempt } from './webhook-attempt.js';
import { WebhookFanOut, type WebhookFanOutDeps } from './webhook-fan-out.js';
import { guardedLookup } from './webhook-targets.js';
import type { Metrics } from '../metrics/metrics.js';

/** While attempts run and nothing else was due, how often a pass looks again for new events and due retries (ms). */
const REFILL_MS = 1000;

/** What the dispatcher works with: the fan-out's, the change log's tail it waits on, and the metrics. */
export interface WebhookDispatcherDeps extends WebhookFanOutDeps {
  tail: ChangeTail;
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
  private readonly fanOut: WebhookFanOut;
  /** Attempts in flight: delivery id -> subscription id. */
  private readonly inFlight = new Map<number, string>();
  /** Deliveries this instance holds a lease on: queued, in flight, or their outcome not yet recorded. */
  private readonly held = new Set<number>();
  private lastError: { message: string; at: string } | null = null;
  /** Attempts this instance made since it started. */
  attempted = 0;

  constructor(private readonly deps: WebhookDispatcherDeps) {
    this.fanOut = new WebhookFanOut(deps);
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
    await this.fanOut.run();
    const { concurrency, concurrencyPerSubscription } = this.deps.config.webhooks;
    const prefetch = concurrency * 8;
    const perSubscriptionQueued = Math.max(concurrencyPerSubscription, Math.floor(prefetch / 4));
    const queue: Claimed[] = [];
    const running = new Set<Promise<void>>();
    const recorder = new AttemptRecorder(
      (batch) => this.deps.webhooks.finishMany(batch),
      (batch) => {
        for (const r of batch) this.held.delete(r.attempt.delivery_id);
      },
    );
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
      while (!this.stopped.signal.aborted && recorder.error === null) {
        // Nothing was due at the last claim: while attempts run (a slow receiver), look again each second for new
        // events and retries falling due, rather than leaving them to the next pass.
        if (exhausted && performance.now() - lastClaim >= REFILL_MS) {
          const head = await this.deps.changes.latestId();
          if (head > fannedOutTo) await this.fanOut.run();
          fannedOutTo = head;
          exhausted = false;
        }
        if (!exhausted && queue.length < prefetch / 2) {
          lastClaim = performance.now();
          // Nothing more due now: the pass ends once the queue is done (retries falling due meanwhile wait for the next).
          exhausted = (await this.claimInto(queue, prefetch, perSubscriptionQueued)) === 0;
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
            .then((r) => recorder.add(r))
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
      await recorder.drain();
      // Claimed but not attempted (stopping, or a record failed): given back at once, for this or another instance.
      if (queue.length) {
        await this.deps.webhooks.release(queue.map((d) => d.id));
        for (const d of queue) this.held.delete(d.id);
      }
      clearInterval(renew);
    }
    if (recorder.error !== null) throw recorder.error;
    return attempted;
  }

  /**
   * Claims up to `prefetch` less what `queue` holds of the due deliveries into `queue`, at most `perSubscription`
   * queued or in flight of one subscription. Returns how many it claimed.
   */
  private async claimInto(queue: Claimed[], prefetch: number, perSubscription: number): Promise<number> {
    const now = this.deps.clock();
    const bySubscription = new Map<string, number>();
    for (const s of [...queue.map((d) => d.subscription_id), ...this.inFlight.values()])
      bySubscription.set(s, (bySubscription.get(s) ?? 0) + 1);
    const full = [...bySubscription].filter(([, n]) => n >= perSubscription).map(([s]) => s);
    const claimed = await this.deps.webhooks.claim(
      now.toISOString(),
      new Date(now.getTime() + this.leaseMs()).toISOString(),
      prefetch - queue.length,
      {
        perSubscription: perSubscription,
        except: full,
      },
    );
    for (const d of claimed) this.held.add(d.id);
    queue.push(...claimed);
    return claimed.length;
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
    const { schedule } = this.deps.config.webhooks;
    const started = this.deps.clock();
    this.deps.metrics?.webhookLateness.observe(
      { kind: d.attempts > 1 ? 'retry' : 'first' },
      Math.max(0, started.getTime() - Date.parse(d.next_attempt_at)) / 1000,
    );
    const { statusCode, error, ms } = await sendAttempt(this.agent, d, started, this.deps.config.webhooks);
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
