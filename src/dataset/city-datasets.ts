import { resolve } from 'node:path';
import type { SodaRow } from '../domain/city-records.js';
import { readPluto, readRollingSales } from './city-files.js';
import { DATASETS } from '../upstream/soda-client.js';

/**
 * What the local SODA emulator serves: NYC Open Data's recorded sales and tax lots (PLUTO), read from the
 * city's files under `sharedDataDir` when first asked for (most starts never ask). The recorded sales'
 * workbooks are read once into `.cache/open-data` under the working directory.
 */
export function cityDatasets(sharedDataDir: string): Record<string, () => Promise<SodaRow[]>> {
  const cacheDir = resolve('.cache', 'open-data');
  return {
    [DATASETS.recordedSales]: () => readRollingSales(sharedDataDir, cacheDir),
    [DATASETS.taxLots]: async () => readPluto(sharedDataDir),
  };
}
