import type { TSchema } from 'typebox';
import type { KnownRoute } from '../http/route-index.js';

/**
 * The MCP tools: each is one GET route of the HTTP API, named for an agent. The tool's input schema is the
 * route's own path and query schemas (TypeBox, so JSON Schema) merged into one object, less what only
 * concerns HTTP (`format`, `fields`, `access_token`); its description is the route's. A call runs the
 * route through the app, so keys, plans, limits, validation and freshness meta are those of HTTP.
 */
export const MCP_TOOLS = [
  { name: 'search_rentals', operationId: 'searchRentals' },
  { name: 'search_sales', operationId: 'searchSales' },
  { name: 'get_listing', operationId: 'getProperty' },
  { name: 'get_listing_by_url', operationId: 'getPropertyByUrl' },
  { name: 'get_building', operationId: 'getBuilding' },
  { name: 'find_areas', operationId: 'listAreas' },
  { name: 'market_figures', operationId: 'getMarket' },
  { name: 'comparables', operationId: 'getComparables' },
  { name: 'estimate_listing', operationId: 'getPropertyEstimate' },
  { name: 'estimate_property', operationId: 'getEstimate' },
  { name: 'recent_changes', operationId: 'listChanges' },
  { name: 'recorded_sales', operationId: 'searchRecordedSales' },
  { name: 'sold_comparables', operationId: 'getSoldComparables' },
] as const;

/**
 * The operations of the API that have no tool, each on purpose, and why: the MCP tools are for an agent's questions
 * about the city's properties, not for the service's own plumbing. A test holds every operation to a tool or to this list.
 */
export const WITHOUT_TOOL: Record<string, string> = {
  getRoot: 'the index of the API: an agent has the tools list instead',
  getIndex: 'the index of the API: an agent has the tools list instead',
  getHealth: "the service's health is its operator's, not an agent's question",
  getUsage: "the key's usage and limits: the operator's and the key holder's, outside a conversation",
  getProperties: 'several listings at once: an agent asks get_listing for each it needs',
  getArea: "one area's outline, GeoJSON for a map: find_areas answers an agent's questions about areas",
  clusterRentals: "counts on a map's grid, for drawing a map, not for answering",
  clusterSales: "counts on a map's grid, for drawing a map, not for answering",
  getMarketHistory: 'daily figures for charts; market_figures answers about the market now',
  getRecordedSalesHistory: 'monthly figures for charts; recorded_sales answers about what sold',
  streamChanges: 'a live event stream (Server-Sent Events), which a tool call cannot hold open; recent_changes reads the same feed',
};

/** Query parameters that only concern an HTTP client (answer format, field selection, the key in a URL). */
const HTTP_ONLY = new Set(['format', 'fields', 'access_token']);

/** One tool as MCP lists it, and how a call becomes the route's URL. */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, TSchema>; required?: string[]; additionalProperties: false };
  /** The GET URL of a call with these arguments (path parameters filled in, the rest as the query). */
  url: (args: Record<string, unknown>) => string;
}

/**
 * The tools of {@link MCP_TOOLS} from the app's routes.
 * @throws Error when a tool names an operation no route has (a renamed operation is caught at start).
 */
export function mcpTools(routes: KnownRoute[]): McpTool[] {
  return MCP_TOOLS.map(({ name, operationId }) => {
    const route = routes.find((r) => r.operationId === operationId && r.method === 'GET');
    if (!route) throw new Error(`MCP tool ${name}: no route has operationId ${operationId}`);
    const params = (route.params as { properties?: Record<string, TSchema>; required?: string[] } | undefined) ?? {};
    const query = (route.querystring as { properties?: Record<string, TSchema>; required?: string[] } | undefined) ?? {};
    const queryNames = Object.keys(query.properties ?? {}).filter((k) => !HTTP_ONLY.has(k));
    const pathNames = Object.keys(params.properties ?? {});
    const required = [...(params.required ?? pathNames), ...(query.required ?? []).filter((k) => !HTTP_ONLY.has(k))];
    return {
      name,
      description: [route.summary, route.description].filter(Boolean).join('. '),
      inputSchema: {
        type: 'object',
        properties: { ...params.properties, ...Object.fromEntries(queryNames.map((k) => [k, query.properties![k]])) },
        ...(required.length ? { required } : {}),
        additionalProperties: false,
      },
      url: (args) => {
        const path = route.url.replace(/:(\w+)/g, (_, p: string) => encodeURIComponent(String(args[p] ?? '')));
        const search = new URLSearchParams();
        for (const k of queryNames) if (args[k] !== undefined && args[k] !== null) search.set(k, String(args[k]));
        const qs = search.toString();
        return qs ? `${path}?${qs}` : path;
      },
    };
  });
}
