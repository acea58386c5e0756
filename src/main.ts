#!/usr/bin/env node
import { coverageCommand } from './cli/coverage.js';
import { type Command, UsageError } from './cli/command.js';
import { estimateCommand } from './cli/estimate.js';
import { keysCommand } from './cli/keys.js';
import { mcpCommand } from './cli/mcp.js';
import { openapiCommand } from './cli/openapi.js';
import { seedCommand } from './cli/seed.js';
import { serveCommand } from './cli/serve.js';
import { syncCommand } from './cli/sync.js';
import { upstreamCommand } from './cli/upstream.js';
import { webhooksCommand } from './cli/webhooks.js';
import { loadConfig, loadEnvFile } from './config.js';
import { SERVICE_VERSION } from './version.js';

/** The command line's commands, in the order the usage lists them; each in its file of src/cli/. */
const COMMANDS: readonly Command[] = [
  serveCommand,
  syncCommand,
  keysCommand,
  webhooksCommand,
  seedCommand,
  coverageCommand,
  estimateCommand,
  mcpCommand,
  upstreamCommand,
  openapiCommand,
];

const USAGE = `usage: nyc-listings <command> [options]
${COMMANDS.map((command) => command.usage).join('\n')}
  help, --help                this text
  --version                   the version

Configuration comes from the environment (see docs/configuration.md).`;

/** Runs the command `argv` names; answers its exit code, or -1 when it keeps the process running. */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${SERVICE_VERSION}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command "${name}"`);
  loadEnvFile();
  const config = loadConfig();
  // Before the command loads what tracing instruments (the store's client, Redis', Fastify).
  if (config.tracing.endpoint) {
    const { startTracing } = await import('./telemetry/tracing.js');
    await startTracing({ endpoint: config.tracing.endpoint, serviceName: config.tracing.serviceName, version: SERVICE_VERSION });
  }
  return command.run(rest, config);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: Error) => {
    if (error instanceof UsageError) {
      process.stderr.write(`nyc-listings: ${error.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`nyc-listings: ${error.message}\n`);
    process.exit(1);
  },
);
