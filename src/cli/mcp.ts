import { type Command, cliLogger, flags } from './command.js';

/** `nyc-listings mcp`: the MCP server on stdio. */
export const mcpCommand: Command = {
  name: 'mcp',
  usage: `  mcp [--key K]               the MCP server on stdio, for an AI agent (tools are the API's reads, called with the key
                              given or NYC_LISTINGS_API_KEY; without one, as an anonymous caller)`,
  async run(rest, config) {
    const { values } = flags(rest, { key: { type: 'string' } });
    const key = values.key ?? process.env.NYC_LISTINGS_API_KEY;
    // Stdout is the protocol's: every log line goes to stderr.
    const logger = await cliLogger(config.logLevel);
    const [{ startRuntime }, { createMcpServer }, { StdioServerTransport }] = await Promise.all([
      import('../runtime.js'),
      import('../agents/mcp-server.js'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
    ]);
    const runtime = await startRuntime(config, { logger, webhooks: false, billing: false });
    const server = createMcpServer(runtime.app, { authorization: key ? `Bearer ${key}` : undefined, remoteAddress: '127.0.0.1' });
    const transport = new StdioServerTransport();
    transport.onclose = () => void runtime.close().then(() => process.exit(0));
    await server.connect(transport);
    process.stdin.once('end', () => void runtime.close().then(() => process.exit(0)));
    logger.info({ tools: 'see tools/list', key: key ? 'given' : 'none (anonymous)' }, 'MCP server on stdio');
    return -1;
  },
};
