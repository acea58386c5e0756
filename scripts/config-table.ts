// Writes the table of settings (src/settings.ts) into docs/configuration.md, between its markers, and .env.example.
// test/settings.test.ts fails when either differs from the code.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { envExample, settingsTable } from '../src/settings.js';

export const CONFIGURATION_PAGE = join(import.meta.dirname, '..', 'docs', 'configuration.md');
export const BEGIN = '<!-- settings table: written by `npm run docs:config` from src/settings.ts -->';
export const END = '<!-- end of settings table -->';

const page = readFileSync(CONFIGURATION_PAGE, 'utf8');
const [before, rest] = page.split(BEGIN);
const after = rest.split(END)[1];
writeFileSync(CONFIGURATION_PAGE, `${before}${BEGIN}\n${settingsTable()}\n${END}${after}`);
writeFileSync(join(import.meta.dirname, '..', '.env.example'), envExample());
