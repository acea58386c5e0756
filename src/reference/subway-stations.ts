import { fileURLToPath } from 'node:url';
import type { Station } from '../domain/transit-score.js';
import { readCsv } from '../lib/csv.js';

/** The repository's copy of the MTA station list (`data/subway-stations.csv`, provenance in `data/README.md`). */
const STATIONS_FILE = fileURLToPath(new URL('../../data/subway-stations.csv', import.meta.url));

/**
 * MTA subway stations (name, WGS84 position) for the transit score. Read from the repository, not the
 * shared data folder: the service scores listings against the real site too, where that folder may be absent.
 */
export function loadStations(): Station[] {
  return readCsv(STATIONS_FILE)
    .map((r) => ({ name: r['Stop Name'], latitude: Number(r['GTFS Latitude']), longitude: Number(r['GTFS Longitude']) }))
    .filter((s) => Number.isFinite(s.latitude) && Number.isFinite(s.longitude));
}
