import { seededRandom } from '../lib/seeded-random.js';
import type { ComparablePool } from './comparable-pool.js';
import type { Subject } from './method.js';

/** `properties` shuffled by a seeded Fisher-Yates draw: the same seed gives the same order. */
export function shuffled(properties: number, seed: number): number[] {
  const random = seededRandom(seed);
  const order = Array.from({ length: properties }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** The subject a property of the pool makes, without itself (nor any copy of its listing) among its comparables. */
export function heldOut(pool: ComparablePool, property: number): Subject {
  return {
    kind: pool.kind,
    point: pool.pointOf(property),
    bedrooms: Number.isNaN(pool.bedrooms[property]) ? null : pool.bedrooms[property],
    bathrooms: Number.isNaN(pool.bathrooms[property]) ? null : pool.bathrooms[property],
    sqft: Number.isNaN(pool.sqft[property]) ? null : pool.sqft[property],
    buildingType: pool.buildingTypeOf(property),
    exclude: property,
  };
}
