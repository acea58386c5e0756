import { resolve } from 'node:path';

/** Repository root, the shared data folder beside it, and the test cache (rebuilt by global setup). */
export const ROOT = resolve(import.meta.dirname, '..', '..');
export const SHARED_DATA = process.env.SHARED_DATA_DIR ? resolve(process.env.SHARED_DATA_DIR) : resolve(ROOT, '..', 'shared', 'data');
export const CACHE = resolve(ROOT, '.cache', 'test');
/** Template sets kept across runs, one folder a hash of what shapes them (global-setup.ts). */
export const TEMPLATES = resolve(ROOT, '.cache', 'templates');
export const SITE_DATA_FILE = resolve(CACHE, 'site-data.json');
export const TEMPLATE_DB = resolve(CACHE, 'template.db');
/** The same without the RentHop rentals (docs/data.md: ids 7,000,000 to 7,999,999), for tests of mechanics. */
export const SITE_DATA_WITHOUT_RENTHOP_FILE = resolve(CACHE, 'site-data-without-renthop.json');
export const TEMPLATE_WITHOUT_RENTHOP_DB = resolve(CACHE, 'template-without-renthop.db');
/**
 * A shared data folder whose RentHop file has its header only (every other file links to the real one):
 * a command line given it as `SHARED_DATA_DIR` serves the site data of SITE_DATA_WITHOUT_RENTHOP_FILE, which
 * global setup builds from it.
 */
export const SHARED_DATA_WITHOUT_RENTHOP = resolve(CACHE, 'shared-data-without-renthop');
/** The compiled command line, as `npm start` runs it (global setup builds it): `node CLI <command>`. */
export const CLI = resolve(ROOT, 'dist', 'main.js');
