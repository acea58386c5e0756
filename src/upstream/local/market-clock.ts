import type { SiteListing } from './site-data.js';
import { UPCOMING, type LocalMarket } from './market.js';
import { seededRandom } from '../../lib/seeded-random.js';

const HOUR_MS = 3_600_000;

/**
 * Daily rates of the moving market, as shares of the active listings: new listings, price changes,
 * delistings. The defaults are in the range of New York City's listing turnover (most rentals stay
 * on the market for three to six weeks).
 */
export interface MarketRates {
  listPerDay: number;
  priceChangePerDay: number;
  delistPerDay: number;
}

export const DEFAULT_RATES: MarketRates = { listPerDay: 0.02, priceChangePerDay: 0.02, delistPerDay: 0.02 };

/** One change the market made; `at` is the market time (UTC). */
export interface MarketEvent {
  at: string;
  kind: 'sale' | 'rental';
  id: string;
  event: 'LISTED' | 'PRICE_INCREASE' | 'PRICE_DECREASE' | 'DELISTED';
  price: number;
  previousPrice: number | null;
}

/**
 * A seeded, deterministic market clock for the local upstream. At start it holds back `holdBack` (1 %)
 * of the real active listings (seeded choice) to list later; then every market hour it takes some listings
 * off the market, changes some prices (between -6 % and +3 %, rounded to whole dollars) and lists
 * some: held-back ones first, then units off the market for at least a day (relisted), at the daily
 * rates given, so the market neither drains nor grows. Manual mode (tests) moves time only by {@link advance};
 * real-time mode follows the wall clock. Changes are applied lazily, when the market is next read.
 */
export class MarketClock {
  private offsetMs = 0;
  private stepsDone = 0;
  readonly events: MarketEvent[] = [];
  private readonly pool: SiteListing[];
  /** Listings taken off the market, oldest first, with when: candidates for relisting. */
  private readonly offMarket: { listing: SiteListing; since: number }[] = [];

  constructor(
    private readonly market: LocalMarket,
    private readonly options: { seed: number; start: Date; realTime: boolean; rates?: MarketRates; holdBack?: number },
  ) {
    const random = seededRandom(options.seed);
    // Only active listings are held back: one in contract stays as the source has it.
    this.pool = market.all().filter((l) => random() < (options.holdBack ?? 0.01) && l.node.status === 'ACTIVE');
    for (const l of this.pool) l.node.status = UPCOMING;
    market.setClock(() => this.now());
  }

  now(): Date {
    return this.options.realTime ? new Date(Date.now() + this.offsetMs) : new Date(this.options.start.getTime() + this.offsetMs);
  }

  /** Moves the market's time forward by `ms` milliseconds (a real-time clock runs ahead of the wall clock from then on). */
  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /** Applies every hourly step that is due at the market's current time. */
  catchUp(): void {
    const due = Math.floor((this.now().getTime() - this.options.start.getTime()) / HOUR_MS);
    while (this.stepsDone < due) this.step(++this.stepsDone);
  }

  /** How many listings of the held-back pool are still to be listed. */
  get upcoming(): number {
    return this.pool.filter((l) => l.node.status === UPCOMING).length;
  }

  private step(index: number): void {
    const rates = this.options.rates ?? DEFAULT_RATES;
    const random = seededRandom(this.options.seed * 7919 + index);
    const at = new Date(this.options.start.getTime() + index * HOUR_MS);
    const active = this.market.all().filter((l) => l.node.status === 'ACTIVE');
    const count = (perDay: number) => {
      const expected = (active.length * perDay) / 24;
      return Math.floor(expected) + (random() < expected % 1 ? 1 : 0);
    };
    const pick = () => active[Math.floor(random() * active.length)];
    const record = (l: SiteListing, event: MarketEvent['event'], previousPrice: number | null) => {
      this.events.push({ at: at.toISOString(), kind: l.kind, id: l.node.id, event, price: l.node.price, previousPrice });
      this.market.recordEvent(l, event, at);
    };

    for (let n = count(rates.delistPerDay); n > 0; n--) {
      const l = pick();
      if (l.node.status !== 'ACTIVE') continue;
      l.node.status = 'OFF_MARKET';
      this.offMarket.push({ listing: l, since: at.getTime() });
      record(l, 'DELISTED', null);
    }
    for (let n = count(rates.priceChangePerDay); n > 0; n--) {
      const l = pick();
      if (l.node.status !== 'ACTIVE') continue;
      let delta = -0.06 + random() * 0.09;
      if (Math.abs(delta) < 0.005) delta = -0.01;
      const previous = l.node.price;
      l.node.price = Math.max(1, Math.round(previous * (1 + delta)));
      if (l.node.price === previous) continue;
      record(l, l.node.price > previous ? 'PRICE_INCREASE' : 'PRICE_DECREASE', previous);
    }
    for (let n = count(rates.listPerDay); n > 0; n--) {
      let l = this.pool.find((p) => p.node.status === UPCOMING);
      if (!l && this.offMarket.length && at.getTime() - this.offMarket[0].since >= 24 * HOUR_MS) l = this.offMarket.shift()!.listing;
      if (!l) break;
      l.node.status = 'ACTIVE';
      l.node.listedAt = at.toISOString();
      record(l, 'LISTED', null);
    }
  }
}
