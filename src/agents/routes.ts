import type { FastifyInstance } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpServer } from './mcp-server.js';
import { MCP_TOOLS } from './mcp-tools.js';

/**
 * For AI agents: `POST /mcp`, the MCP server over Streamable HTTP (stateless: a server and transport per
 * request, JSON answers; the SDK's clients take the 405 of `GET /mcp` as "no server-sent stream"), and
 * `GET /llms.txt`, the API described for language models. Both are public: every tool call is a request to
 * the API with the caller's Authorization header and address, refused, limited and counted as such.
 */
export function registerAgentRoutes(app: FastifyInstance): void {
  app.post('/mcp', { config: { access: 'public' }, schema: { hide: true } }, async (request, reply) => {
    const server = createMcpServer(app, { authorization: request.headers.authorization, remoteAddress: request.ip });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  let text: string | null = null;
  app.get('/llms.txt', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => {
    text ??= llmsText(app);
    return reply.type('text/markdown; charset=utf-8').send(text);
  });
}

/** The llms.txt of the API (llmstxt.org): what it is, how to call it, every operation, and the MCP tools. */
function llmsText(app: FastifyInstance): string {
  const routes = app.routeIndex.routes().filter((r) => r.method === 'GET' && !r.hidden && r.url.startsWith('/v1/'));
  const tools = new Map<string, string>(MCP_TOOLS.map((t) => [t.operationId, t.name]));
  return [
    '# nyc-listings',
    '',
    '> Read-only JSON API of New York City sale and rental listings, buildings, neighbourhood areas, market figures and the',
    "> city's recorded sales, served from a local mirror of a listings site and NYC Open Data. Every answer is `{data, meta}`;",
    '> `meta` says how fresh the data is (`dataAge`, `source`, `freshnessThreshold`, `refreshTriggered`).',
    '',
    'Keys: `Authorization: Bearer <key>` (searches work without one, as the Free plan). Plans cap `perPage` at 10 / 50 / 500 / 500.',
    'Errors are RFC 9457 problem+json with a stable `code`. Prices in US dollars, areas in square feet, distances in metres, instants in UTC.',
    'Areas are given by id or slug (`areas=williamsburg`); find them with `GET /v1/areas?q=`.',
    '',
    '## Docs',
    '',
    '- [OpenAPI document](/v1/openapi.json): every operation, parameter and answer, with real examples',
    '- [Interactive docs](/docs)',
    `- MCP server: \`POST /mcp\` (Streamable HTTP) or \`nyc-listings mcp\` (stdio); tools: ${MCP_TOOLS.map((t) => t.name).join(', ')}`,
    '',
    '## Operations',
    '',
    ...routes.map(
      (r) =>
        `- \`GET ${r.url.replace(/:(\w+)/g, '{$1}')}\`: ${r.summary ?? ''}${r.minPlan ? ` (${r.minPlan} plan and up)` : ''}${tools.has(r.operationId ?? '') ? ` [MCP tool \`${tools.get(r.operationId!)}\`]` : ''}`,
    ),
    '',
  ].join('\n');
}
