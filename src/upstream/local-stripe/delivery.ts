import { createHmac } from 'node:crypto';
import { request } from 'undici';
import { eventObject } from './objects.js';
import type { EmulatorState, PendingDelivery } from './state.js';

/** One attempt made, as a test reads it: the event, the endpoint, the status answered (null: none) and when (Unix ms). */
export interface DeliveryAttempt {
  eventId: string;
  type: string;
  endpoint: string;
  status: number | null;
  at: number;
}

/**
 * Stripe's signature of a webhook payload: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.payload" keyed by the endpoint's
 * secret>` (Stripe's "Verify webhook signatures" reference; the SDK's `constructEvent` checks it).
 */
export function stripeSignature(payload: string, secret: string, timestampSeconds: number): string {
  return `t=${timestampSeconds},v1=${createHmac('sha256', secret).update(`${timestampSeconds}.${payload}`).digest('hex')}`;
}

/**
 * Sends each event to every endpoint as Stripe does: a POST of the event's JSON with `Stripe-Signature`, one event a
 * request, in no promised order, each on its own. An answer other than 2xx, or none within `timeoutSeconds`, is tried
 * again after each wait of `retrySeconds` in turn, then given up. Stripe retries for up to three days in live mode
 * and three times over a few hours in test mode; the default here is the latter.
 */
export class EventDelivery {
  readonly attempts: DeliveryAttempt[] = [];
  private readonly endpoints = new Set<string>();
  private readonly inFlight = new Set<PendingDelivery>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly state: EmulatorState,
    private readonly options: { retrySeconds: number[]; timeoutSeconds: number; now: () => number },
  ) {
    this.schedule();
  }

  /** Sends every later event to `url` too (as a webhook endpoint made in the dashboard, or `stripe listen --forward-to`). */
  addEndpoint(url: string): void {
    this.endpoints.add(url);
  }

  /** Queues `eventId` for every endpoint, due now. */
  enqueue(eventId: string): void {
    for (const endpoint of this.endpoints) this.state.deliveries.push({ eventId, endpoint, attempts: 0, dueAt: this.options.now() });
    this.state.save();
    this.schedule(0);
  }

  /** Deliveries not yet delivered nor given up. */
  pending(): number {
    return this.state.deliveries.length;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(delayMs = 100): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, delayMs);
    this.timer.unref();
  }

  private run(): void {
    const now = this.options.now();
    for (const delivery of this.state.deliveries) {
      if (delivery.dueAt <= now && !this.inFlight.has(delivery)) {
        this.inFlight.add(delivery);
        void this.attempt(delivery).finally(() => this.inFlight.delete(delivery));
      }
    }
    this.schedule();
  }

  private async attempt(delivery: PendingDelivery): Promise<void> {
    const event = this.state.events.find((e) => e.id === delivery.eventId);
    if (!event) {
      this.state.deliveries = this.state.deliveries.filter((d) => d !== delivery);
      return;
    }
    const payload = JSON.stringify(eventObject(event), null, 2);
    let status: number | null = null;
    try {
      const res = await request(delivery.endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          'stripe-signature': stripeSignature(payload, this.state.webhookSecret, Math.floor(this.options.now() / 1000)),
        },
        body: payload,
        headersTimeout: this.options.timeoutSeconds * 1000,
        bodyTimeout: this.options.timeoutSeconds * 1000,
      });
      status = res.statusCode;
      await res.body.dump();
    } catch {
      // no answer: tried again like a failure
    }
    this.attempts.push({ eventId: event.id, type: event.type, endpoint: delivery.endpoint, status, at: this.options.now() });
    delivery.attempts++;
    const wait = this.options.retrySeconds[delivery.attempts - 1];
    if ((status !== null && status >= 200 && status < 300) || wait === undefined) {
      this.state.deliveries = this.state.deliveries.filter((d) => d !== delivery);
    } else delivery.dueAt = this.options.now() + wait * 1000;
    this.state.save();
  }
}
