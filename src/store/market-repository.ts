import type { Kysely } from 'kysely';
import { daysOnMarket, type ListingKind } from '../domain/listing.js';
import type { MarketFigures } from '../wire/market.js';
import type { Database } from './schema.js';

/** The active listings behind market figures, and the daily snapshots of those figures. */
export class MarketRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Active listings of `kind` in these areas (ids already expanded to descendants; all when none), optionally of some bedroom counts. */
  async activeListings(kind: ListingKind, areaIds: readonly number[] | undefined, bedrooms: number[] | undefined, now: Date) {
    let q = this.db.selectFrom('listings').select(['price', 'price_per_sqft', 'listed_at', 'bedroom_count']).where('kind', '=', kind).where('status', '=', 'ACTIVE');
    if (areaIds) q = q.where('area_id', 'in', areaIds.length ? areaIds : [-1]);
    if (bedrooms) q = q.where('bedroom_count', 'in', bedrooms);
    return (await q.execute()).map((r) => ({
      price: Number(r.price),
      pricePerSqft: r.price_per_sqft,
      daysOnMarket: daysOnMarket(r.listed_at, now),
      bedroomCount: r.bedroom_count,
    }));
  }

  /** Records (or replaces) the figures of one day: the day's last sync leaves its end-of-day figures. */
  async record(day: string, kind: ListingKind, areaId: number, figures: MarketFigures, at: string): Promise<void> {
    await this.db
      .insertInto('market_snapshots')
      .values({ day, kind, area_id: areaId, figures: JSON.stringify(figures), recorded_at: at })
      .onConflict((oc) => oc.columns(['kind', 'area_id', 'day']).doUpdateSet({ figures: JSON.stringify(figures), recorded_at: at }))
      .execute();
  }

  /** The snapshots of a kind in an area (0: the city) from `from` to `to` (days, inclusive), oldest first. */
  async history(kind: ListingKind, areaId: number, from: string, to: string): Promise<{ day: string; figures: MarketFigures }[]> {
    const rows = await this.db
      .selectFrom('market_snapshots')
      .select(['day', 'figures'])
      .where('kind', '=', kind)
      .where('area_id', '=', areaId)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .orderBy('day')
      .execute();
    return rows.map((r) => ({ day: r.day, figures: JSON.parse(r.figures) as MarketFigures }));
  }
}
