import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isFresh, oldestOf, type Freshness, type Source } from '../../src/freshness/policy.js';

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

// An answer made of several pieces (the scopes a search covers, a batch of listings) is as fresh as its worst piece.
describe('freshness of several pieces', () => {
  const now = new Date('2026-11-24T12:00:00Z');
  const piece = fc.record({
    dataAge: fc.integer({ min: 0, max: 10 * 86_400 }).map((s) => new Date(now.getTime() - s * 1000).toISOString()),
    source: fc.constantFrom<Source>('cached', 'stale', 'refreshing'),
    freshnessThreshold: fc.constant(300),
    refreshTriggered: fc.boolean(),
  });

  it("dataAge is the oldest piece's; stale beats refreshing beats cached; a refresh triggered by any piece is said", () => {
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 6 }), (pieces: Freshness[]) => {
        const whole = oldestOf(pieces, 300, now);
        const ages = pieces.map((p) => Date.parse(p.dataAge));
        expect(Date.parse(whole.dataAge)).toBe(Math.min(...ages));
        const sources = new Set(pieces.map((p) => p.source));
        expect(whole.source).toBe(sources.has('stale') ? 'stale' : sources.has('refreshing') ? 'refreshing' : 'cached');
        expect(whole.refreshTriggered).toBe(pieces.filter((p) => p.refreshTriggered).length > 0);
        expect(whole.freshnessThreshold).toBe(300);
      }),
      { seed: 2611, numRuns: 300 },
    );
  });

  it('no piece at all: nothing stored was read, cached as of now', () => {
    expect(oldestOf([], 60, now)).toEqual({
      dataAge: now.toISOString(),
      source: 'cached',
      freshnessThreshold: 60,
      refreshTriggered: false,
    });
  });
});
