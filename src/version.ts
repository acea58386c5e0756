import { readFileSync } from 'node:fs';

/** The service's version, from package.json (the OpenAPI document, GET /, `nyc-listings --version`). */
export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
