import type { AreaTree } from '../domain/area.js';
import type { Districts } from '../domain/city-districts.js';
import type { ListingKind, ListingRecord } from '../domain/listing.js';
import { marketFiguresByRank } from '../domain/market.js';
import { recommendedScore } from '../domain/recommended-score.js';
import { transitScorer, type Station } from '../domain/transit-score.js';
import type { MarketRepository } from '../store/market-repository.js';
import type { GeoPoint } from '../wire/common.js';

/**
 * What a sync stores with each listing beyond what the site gives: its transit score (from the subway `stations`),
 * its recommended score, and the districts holding its position (`districtsAt`, the city's polygons).
 */
export function listingDeriver(stations: readonly Station[], districtsAt: (point: GeoPoint | null) => Districts) {
  const scoreOf = transitScorer(stations);
  return (r: ListingRecord) => {
    const score = scoreOf(r.geoPoint);
    return {
      transitScore: score,
      recommendedScore: recommendedScore({ transitScore: score, sqft: r.sqft, leadPhotoKey: r.leadPhotoKey, noFee: r.noFee }),
      districts: districtsAt(r.geoPoint),
    };
  };
}

/**
 * Records the market figures of `now`'s UTC day for `kind` in the borough (and the whole city, borough id 0, when
 * `withCity`): each sync replaces the day's row, so a day's history keeps the figures of its last sync.
 */
export async function recordMarketFigures(
  market: MarketRepository,
  now: Date,
  scope: { kind: ListingKind; boroughId: number; tree: AreaTree; withCity: boolean },
): Promise<void> {
  const { kind, boroughId } = scope;
  const [day, at] = [now.toISOString().slice(0, 10), now.toISOString()];
  const borough = await marketFiguresByRank(market.ranked(kind, scope.tree.withDescendants(boroughId), undefined), now);
  await market.record(day, kind, boroughId, borough, at);
  if (!scope.withCity) return;
  const city = await marketFiguresByRank(market.ranked(kind, undefined, undefined), now);
  await market.record(day, kind, 0, city, at);
}
