import { seededRandom } from '../lib/seeded-random.js';
import type { ComparablePool } from './comparable-pool.js';
import type { Subject } from './method.js';

/** `homes` shuffled by a seeded Fisher-Yates draw: the same seed gives the same order. */
export function shuffled(homes: number, seed: number): number[] {
  const random = seededRandom(seed);
  const order = Array.from({ length: homes }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** The subject a home of the pool makes, without itself (nor any copy of its listing) among its comparables. */
export function heldOut(pool: ComparablePool, home: number): Subject {
  return {
    kind: pool.kind,
    point: pool.pointOf(home),
    bedrooms: Number.isNaN(pool.bedrooms[home]) ? null : pool.bedrooms[home],
    bathrooms: Number.isNaN(pool.bathrooms[home]) ? null : pool.bathrooms[home],
    sqft: Number.isNaN(pool.sqft[home]) ? null : pool.sqft[home],
    buildingType: pool.buildingTypeOf(home),
    exclude: home,
  };
}
