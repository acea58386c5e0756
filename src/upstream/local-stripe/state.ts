import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type {
  EmulatedCheckoutSession,
  EmulatedCustomer,
  EmulatedEvent,
  EmulatedPortalSession,
  EmulatedPrice,
  EmulatedProduct,
  EmulatedSubscription,
} from './records.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** An id of Stripe's form: its object's prefix and random letters and digits (`cus_QXg1o8vcGmoR32`). */
export function stripeId(prefix: string, length: number): string {
  const bytes = randomBytes(length);
  let out = prefix;
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

/** One attempt to come of an event to an endpoint. */
export interface PendingDelivery {
  eventId: string;
  endpoint: string;
  /** Attempts made so far. */
  attempts: number;
  /** Unix milliseconds. */
  dueAt: number;
}

/** What the emulator saves: its secrets, its catalogue and every object made. */
interface Saved {
  secretKey: string;
  webhookSecret: string;
  portalConfiguration: string;
  products: EmulatedProduct[];
  prices: EmulatedPrice[];
  customers: EmulatedCustomer[];
  subscriptions: EmulatedSubscription[];
  sessions: EmulatedCheckoutSession[];
  portalSessions: EmulatedPortalSession[];
  events: EmulatedEvent[];
  deliveries: PendingDelivery[];
}

/** The catalogue an account of the service's operator would hold: a product a paid plan, priced by the month and the year. */
const CATALOGUE = [
  { plan: 'starter', name: 'nyc-listings Starter', monthly: 1900 },
  { plan: 'pro', name: 'nyc-listings Pro', monthly: 7900 },
  { plan: 'business', name: 'nyc-listings Business', monthly: 24900 },
] as const;

/**
 * The emulator's objects, by id, saved to `file` after each change when one is given (so that `npm start` keeps its
 * subscriptions across restarts, as Stripe does). A new state gets new secrets and the catalogue above.
 */
export class EmulatorState {
  readonly products = new Map<string, EmulatedProduct>();
  readonly prices = new Map<string, EmulatedPrice>();
  readonly customers = new Map<string, EmulatedCustomer>();
  readonly subscriptions = new Map<string, EmulatedSubscription>();
  readonly sessions = new Map<string, EmulatedCheckoutSession>();
  readonly portalSessions = new Map<string, EmulatedPortalSession>();
  readonly events: EmulatedEvent[] = [];
  deliveries: PendingDelivery[] = [];
  readonly secretKey: string;
  readonly webhookSecret: string;
  /** The id of the customer portal's configuration (`bpc_...`): every catalogue price may be switched to. */
  readonly portalConfiguration: string;

  constructor(
    private readonly file: string | null,
    now: number,
  ) {
    const saved = file && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Saved) : null;
    this.secretKey = saved?.secretKey ?? stripeId('sk_test_', 99);
    this.webhookSecret = saved?.webhookSecret ?? stripeId('whsec_', 32);
    this.portalConfiguration = saved?.portalConfiguration ?? stripeId('bpc_', 24);
    if (saved) {
      for (const p of saved.products) this.products.set(p.id, p);
      for (const p of saved.prices) this.prices.set(p.id, p);
      for (const c of saved.customers) this.customers.set(c.id, c);
      for (const s of saved.subscriptions) this.subscriptions.set(s.id, s);
      for (const s of saved.sessions) this.sessions.set(s.id, s);
      for (const p of saved.portalSessions) this.portalSessions.set(p.id, p);
      this.events.push(...saved.events);
      this.deliveries = saved.deliveries;
      return;
    }
    const created = Math.floor(now / 1000);
    for (const item of CATALOGUE) {
      const product = stripeId('prod_', 14);
      const prices = (['month', 'year'] as const).map((interval) => ({
        id: stripeId('price_', 24),
        product,
        unitAmount: interval === 'month' ? item.monthly : item.monthly * 10,
        currency: 'usd',
        interval,
        nickname: `${item.name.split(' ')[1]} ${interval === 'month' ? 'monthly' : 'yearly'}`,
        lookupKey: `${item.plan}_${interval}ly`,
        created,
      }));
      for (const p of prices) this.prices.set(p.id, p);
      this.products.set(product, {
        id: product,
        name: item.name,
        description: `The ${item.plan} plan of the API`,
        defaultPrice: prices[0].id,
        created,
      });
    }
    this.save();
  }

  /** The catalogue's prices of each paid plan, monthly first (what `STRIPE_PRICE_*` defaults to with the emulator). */
  planPrices(): Record<'starter' | 'pro' | 'business', string[]> {
    const of = (plan: string) =>
      [...this.prices.values()]
        .filter((p) => p.lookupKey.startsWith(`${plan}_`))
        .sort((a, b) => (a.interval === b.interval ? 0 : a.interval === 'month' ? -1 : 1))
        .map((p) => p.id);
    return { starter: of('starter'), pro: of('pro'), business: of('business') };
  }

  /** Writes the state to its file (a new file renamed into place, so a crash never leaves half of one). */
  save(): void {
    if (!this.file) return;
    const saved: Saved = {
      secretKey: this.secretKey,
      webhookSecret: this.webhookSecret,
      portalConfiguration: this.portalConfiguration,
      products: [...this.products.values()],
      prices: [...this.prices.values()],
      customers: [...this.customers.values()],
      subscriptions: [...this.subscriptions.values()],
      sessions: [...this.sessions.values()],
      portalSessions: [...this.portalSessions.values()],
      // The last thousand events are kept, as a dashboard shows the recent ones.
      events: this.events.slice(-1000),
      deliveries: this.deliveries,
    };
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(`${this.file}.tmp`, JSON.stringify(saved));
    renameSync(`${this.file}.tmp`, this.file);
  }
}
