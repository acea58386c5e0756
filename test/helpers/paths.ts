import { resolve } from 'node:path';

/** Repository root, the shared data folder beside it, and the test cache (rebuilt by global setup). */
export const ROOT = resolve(import.meta.dirname, '..', '..');
export const SHARED_DATA = process.env.SHARED_DATA_DIR ? resolve(process.env.SHARED_DATA_DIR) : resolve(ROOT, '..', 'shared', 'data');
export const CACHE = resolve(ROOT, '.cache', 'test');
export const INVENTORY_FILE = resolve(CACHE, 'inventory.json');
export const TEMPLATE_DB = resolve(CACHE, 'template.db');
/** The same without the RentHop rentals (docs/data.md: ids 7,000,000 to 7,999,999), for tests of mechanics. */
export const INVENTORY_WITHOUT_RENTHOP_FILE = resolve(CACHE, 'inventory-without-renthop.json');
export const TEMPLATE_WITHOUT_RENTHOP_DB = resolve(CACHE, 'template-without-renthop.db');
/** The compiled command line, as `npm start` runs it (global setup builds it): `node CLI <command>`. */
export const CLI = resolve(ROOT, 'dist', 'main.js');
