import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MCP_TOOLS, WITHOUT_TOOL } from '../../src/agents/mcp-tools.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { get } from '../helpers/http.js';
import { ROOT } from '../helpers/paths.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';

// The lists of operations are derived from the OpenAPI document, or held to it here (issue 68): the index at GET /v1,
// the MCP tools (each operation a tool, or none on purpose, and why), and the README's table of endpoints.
const t = useSharedTestRuntime('pro', { withoutRentHop: true });

/** Every operation of the OpenAPI document: its id, method and path. */
function operations(): { id: string; method: string; path: string }[] {
  const doc = openApiDocument(t.rt.app) as { paths: Record<string, Record<string, { operationId: string }>> };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ id: op.operationId, method: method.toUpperCase(), path })),
  );
}

describe('lists of operations', () => {
  it('GET /v1 lists every operation of the OpenAPI document, with its summary', async () => {
    const index = await get(t.rt.app, '/v1');
    expect(index.status).toBe(200);
    const listed = (index.body.endpoints as { method: string; path: string; summary: string }[]).map((e) => `${e.method} ${e.path}`).sort();
    expect(listed).toEqual(
      operations()
        .map((o) => `${o.method} ${o.path}`)
        .sort(),
    );
    expect(index.body.endpoints.every((e: { summary: string }) => e.summary.length > 0)).toBe(true);
    expect((await get(t.rt.app, '/')).body).toEqual(index.body);
  });

  it('every operation has an MCP tool, or is listed as having none on purpose, with why; never both', () => {
    const ids = operations().map((o) => o.id);
    const tools = MCP_TOOLS.map((tool) => tool.operationId as string);
    for (const id of ids)
      expect({ id, tool: tools.includes(id), none: id in WITHOUT_TOOL }).toEqual({
        id,
        tool: !(id in WITHOUT_TOOL),
        none: id in WITHOUT_TOOL,
      });
    // Nothing listed that is not an operation.
    for (const id of [...tools, ...Object.keys(WITHOUT_TOOL)]) expect(ids, id).toContain(id);
    expect(Object.values(WITHOUT_TOOL).every((why) => why.length > 10)).toBe(true);
  });

  it("the README's table of endpoints names every operation's path", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Endpoints'), readme.indexOf('\n## ', readme.indexOf('## Endpoints') + 5));
    // Every path the table names in code: `GET /v1/x?y=`, or `/v1/x` beside it in a row.
    const named = [...table.matchAll(/`(?:GET )?(\/[^`?\s]*)/g)].map((m) => m[1]);
    for (const { method, path } of operations())
      expect({ path, named: named.includes(path) }, `${method} ${path}`).toEqual({ path, named: true });
  });
});
