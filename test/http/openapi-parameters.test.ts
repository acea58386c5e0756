import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { get } from '../helpers/http.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';

// The document's parameters against the service: each operation's parameter examples make a call that finds data,
// and each path parameter's documented schema is the validation that refuses it (the fuzzer once found six
// operations whose documented id was looser than what the service accepts).
const t = useSharedTestRuntime('business');

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  schema: { type?: string; pattern?: string; minimum?: number; maximum?: number; maxLength?: number; minLength?: number };
}

async function operations(): Promise<[string, Parameter[]][]> {
  const openapi = (await get(t.rt.app, '/v1/openapi.json')).body;
  return Object.entries(openapi.paths as Record<string, { get?: { parameters?: Parameter[] } }>)
    .filter(([path]) => path.startsWith('/v1/') && path !== '/v1/openapi.json')
    .map(([path, item]) => [path, item.get?.parameters ?? []]);
}

/** The call an operation's parameter examples make: every parameter with an example, path ones in the path. */
function exampleCall(path: string, parameters: Parameter[]): string {
  const query = new URLSearchParams();
  for (const p of parameters) {
    if (p.example === undefined) continue;
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(String(p.example)));
    else query.append(p.name, String(p.example));
  }
  return query.size ? `${path}?${query}` : path;
}

/** Whether a path value satisfies the documented schema, read here from the document. */
function documentedAccepts(schema: Parameter['schema'], value: string): boolean {
  if (schema.type === 'integer')
    return /^-?[0-9]+$/.test(value) && Number(value) >= (schema.minimum ?? -Infinity) && Number(value) <= (schema.maximum ?? Infinity);
  return (
    (!schema.pattern || new RegExp(schema.pattern, 'u').test(value)) &&
    value.length <= (schema.maxLength ?? Infinity) &&
    value.length >= (schema.minLength ?? 0)
  );
}

describe("the OpenAPI document's parameters", () => {
  it('every path parameter has an example, and every operation called with its parameter examples answers 200 with data', async () => {
    const ops = await operations();
    expect(ops.length).toBeGreaterThanOrEqual(16);
    for (const [path, parameters] of ops) {
      if (path === '/v1/changes/stream') continue;
      for (const p of parameters.filter((p) => p.in === 'path' || p.required)) expect(p.example, `${path} ${p.name}`).toBeDefined();
      const url = exampleCall(path, parameters);
      const res = await get(t.rt.app, url, t.key);
      expect(res.status, `${url}: ${JSON.stringify(res.body)?.slice(0, 300)}`).toBe(200);
      const data = res.body.data;
      expect(Array.isArray(data) ? data.length : data === null ? 0 : 1, `${url} finds data`).toBeGreaterThan(0);
    }
  });

  it('a path value the documented schema refuses is a 400 INVALID_PARAMS for its form, and one it allows never is', async () => {
    const withPathParameters = (await operations()).filter(([, parameters]) => parameters.some((p) => p.in === 'path'));
    expect(withPathParameters.map(([path]) => path).sort()).toEqual(
      [
        '/v1/areas/{id}',
        '/v1/building/{id}',
        '/v1/property/{id}',
        '/v1/property/{id}/comparables',
        '/v1/property/{id}/estimate',
        '/v1/property/{id}/sold-comparables',
      ].sort(),
    );
    const values = fc
      .oneof(
        fc.string({ minLength: 1, maxLength: 130, unit: fc.constantFrom(...'aZ09_-.~!$*,;:@é %+'.split('')) }),
        fc.stringMatching(/^[A-Za-z0-9_-]{1,130}$/),
        fc.integer({ min: -5, max: 20_000_000 }).map(String),
      )
      // "." and ".." are dot segments: every client removes them from a path (RFC 3986 section 5.2.4), so no
      // request carries them as a value; "/v1/property/./comparables" is "/v1/property/comparables".
      .filter((value) => value !== '.' && value !== '..');
    for (const [path, parameters] of withPathParameters) {
      const parameter = parameters.find((p) => p.in === 'path')!;
      await fc.assert(
        fc.asyncProperty(values, async (value) => {
          const url = exampleCall(path, parameters).replace(encodeURIComponent(String(parameter.example)), encodeURIComponent(value));
          const res = await get(t.rt.app, url, t.key);
          // An allowed value may still be refused for what it names (a rental's sold comparables), never for its form.
          const formErrors = (res.body.errors ?? []).filter(
            (e: { name: string; message: string }) => e.name === parameter.name && /^must /.test(e.message),
          );
          if (documentedAccepts(parameter.schema, value)) expect(formErrors, url).toEqual([]);
          else {
            expect(res.status, url).toBe(400);
            expect(res.body.code, url).toBe('INVALID_PARAMS');
            expect(formErrors.length, url).toBe(1);
          }
        }),
        { numRuns: 150 },
      );
    }
  });
});
