import { describe, expect, it } from 'vitest';
import { isFresh } from '../../src/freshness/policy.js';

// The freshness threshold's boundary (spec 2.1): data exactly `threshold` seconds old is still fresh.
describe('fresh or stale', () => {
  const refreshedAt = new Date('2026-11-24T12:00:00Z');
  it.each([
    [0, 300, true],
    [299.999, 300, true],
    [300, 300, true],
    [300.001, 300, false],
    [3600, 300, false],
    [-5, 0, true],
    [0.001, 0, false],
  ])('%s s old against a threshold of %s s: fresh %s', (ageSeconds, threshold, fresh) => {
    expect(isFresh(refreshedAt, threshold, new Date(refreshedAt.getTime() + ageSeconds * 1000))).toBe(fresh);
  });
});
