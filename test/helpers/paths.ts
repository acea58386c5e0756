import { resolve } from 'node:path';

/** Repository root, the shared data folder beside it, and the test cache (rebuilt by global setup). */
export const ROOT = resolve(import.meta.dirname, '..', '..');
export const SHARED_DATA = process.env.SHARED_DATA_DIR ? resolve(process.env.SHARED_DATA_DIR) : resolve(ROOT, '..', 'shared', 'data');
export const CACHE = resolve(ROOT, '.cache', 'test');
export const INVENTORY_FILE = resolve(CACHE, 'inventory.json');
export const TEMPLATE_DB = resolve(CACHE, 'template.db');
/** The compiled command line, as `npm start` runs it (global setup builds it): `node CLI <command>`. */
export const CLI = resolve(ROOT, 'dist', 'main.js');
