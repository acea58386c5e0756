import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { transitScore, transitScorer } from '../../src/domain/transit-score.js';
import { loadStations } from '../../src/reference/subway-stations.js';

const stations = loadStations();
const scorer = transitScorer(stations);
/** Metres a degree of latitude spans (R x pi / 180). */
const METRES_A_DEGREE = (6_371_000 * Math.PI) / 180;

describe('transitScorer (the stations within 1,600 m of a latitude)', () => {
  it('gives transitScore against every station, for points across and beyond the city', () => {
    expect(stations.length).toBeGreaterThan(400);
    fc.assert(
      fc.property(
        fc.double({ min: 40.3, max: 41.1, noNaN: true }),
        fc.double({ min: -74.4, max: -73.5, noNaN: true }),
        (latitude, longitude) => {
          const point = { latitude, longitude };
          expect(scorer(point)).toBe(transitScore(point, stations));
        },
      ),
      { numRuns: 20_000, seed: 68 },
    );
  });

  it('gives the same at the band’s edge: at stations, and 800 and 1,600 m north and south of them, a metre either side', () => {
    const scores = new Set<number | null>();
    for (const station of stations)
      for (const metres of [0, 799, 800, 801, 1599, 1600, 1601])
        for (const sign of [1, -1]) {
          const point = { latitude: station.latitude + (sign * metres) / METRES_A_DEGREE, longitude: station.longitude };
          const expected = transitScore(point, stations);
          scores.add(expected);
          expect(scorer(point), `${station.name} ${sign * metres} m`).toBe(expected);
        }
    // The points score from 0 to 100, so the edge cases are among them.
    expect(scores.has(0)).toBe(true);
    expect(scores.has(100)).toBe(true);
  });

  it('is null without a point or without stations, as transitScore is', () => {
    expect(scorer(null)).toBeNull();
    expect(transitScorer([])({ latitude: 40.7, longitude: -74 })).toBeNull();
    expect(transitScore({ latitude: 40.7, longitude: -74 }, [])).toBeNull();
  });
});
