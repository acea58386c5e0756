import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SHARED_DATA_FILES } from '../../src/dataset/shared-data.js';
import { CITY_FILES } from '../../src/reference/shared-files.js';
import { SHARED_DATA } from './paths.js';

/**
 * Writes at `folder` the shared data folder with no RentHop rentals: the RentHop file's header alone, every
 * other file a link to the real one. Its site data is the StreetEasy rentals and every sale, about 9,600
 * listings, for the tests of mechanics (freshness, limits, webhooks, crashes, PostgreSQL, the command line's
 * syncs, several instances) that sync again and again and look at no figure of the whole city. The listings
 * and buildings it holds are those of the whole city's site data less its RentHop rentals: no rule of the data
 * set looks at one source's rows when it reads another's.
 */
export function writeSharedDataWithoutRentHop(folder: string): void {
  for (const [name, file] of Object.entries({ ...SHARED_DATA_FILES, ...CITY_FILES })) {
    const target = join(folder, file);
    mkdirSync(dirname(target), { recursive: true });
    if (name === 'rentHopRentals') writeFileSync(target, `${readFileSync(join(SHARED_DATA, file), 'utf8').split('\n')[0]}\n`);
    else symlinkSync(join(SHARED_DATA, file), target);
  }
}
