import type { FastifyInstance } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Problem } from '../http/problem.js';
import { SERVICE_VERSION } from '../version.js';
import { mcpTools } from './mcp-tools.js';

/** Who calls, as the HTTP requests a tool makes carry it: the caller's Authorization header and address. */
export interface McpCaller {
  authorization?: string;
  remoteAddress?: string;
}

/**
 * An MCP server (the official SDK's low-level `Server`) whose tools are the API's read routes
 * ({@link mcpTools}): a call is answered by running the route through `app` with the caller's key, so it
 * is authenticated, limited, validated and metered as the same HTTP request. The result's text is the
 * route's JSON answer (`{data, meta}` with freshness); a refusal (problem+json) is an error result
 * carrying the problem, its status and code.
 */
export function createMcpServer(app: FastifyInstance, caller: McpCaller): Server {
  const tools = mcpTools(app.routeIndex.routes());
  const server = new Server({ name: 'nyc-listings', version: SERVICE_VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) return { isError: true, content: [{ type: 'text', text: `Unknown tool ${request.params.name}; see tools/list.` }] };
    const args = request.params.arguments ?? {};
    const unknown = Object.keys(args).filter((k) => !(k in tool.inputSchema.properties));
    if (unknown.length) {
      // As the HTTP API refuses an unknown query parameter, so that a misspelt filter never widens a search.
      const problem = new Problem('INVALID_PARAMS', `Unknown argument ${unknown.join(', ')} of ${tool.name}.`, {
        errors: unknown.map((name) => ({ name, in: 'arguments', message: 'is not an argument of this tool' })),
      });
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(problem.body(`/mcp#${tool.name}`)) }] };
    }
    const res = await app.inject({
      method: 'GET',
      url: tool.url(args),
      headers: { accept: 'application/json', ...(caller.authorization ? { authorization: caller.authorization } : {}) },
      remoteAddress: caller.remoteAddress,
    });
    const text = res.body;
    if (res.statusCode >= 400) return { isError: true, content: [{ type: 'text', text }] };
    return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> };
  });
  return server;
}
