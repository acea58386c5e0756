import { join } from 'node:path';
import type { Station } from '../domain/transit-score.js';
import { readCsv } from './read.js';

/** MTA subway stations from `subway/stations.csv` under the shared data folder. */
export function loadStations(sharedDataDir: string): Station[] {
  return readCsv(join(sharedDataDir, 'subway', 'stations.csv'))
    .map((r) => ({ name: r['Stop Name'], latitude: Number(r['GTFS Latitude']), longitude: Number(r['GTFS Longitude']) }))
    .filter((s) => Number.isFinite(s.latitude) && Number.isFinite(s.longitude));
}
