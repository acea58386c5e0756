import { apiDocument, type Command } from './command.js';

/** `nyc-listings openapi`: prints the OpenAPI document. */
export const openapiCommand: Command = {
  name: 'openapi',
  usage: `  openapi                     print the OpenAPI document`,
  async run(_rest, config) {
    process.stdout.write(`${JSON.stringify(await apiDocument(config), null, 2)}\n`);
    return 0;
  },
};
