import { seededRandom } from '../../src/lib/seeded-random.js';

/** `count` of `items` drawn without repeats by a seeded shuffle (Fisher-Yates): the same seed draws the same. */
export function drawn<T>(items: readonly T[], count: number, seed: number): T[] {
  const random = seededRandom(seed);
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, count);
}
