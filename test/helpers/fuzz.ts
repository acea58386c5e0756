import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { TestRuntime } from './runtime.js';

interface Parameter {
  name: string;
  in: 'query' | 'path';
  required?: boolean;
  schema: Record<string, any>;
}
interface Operation {
  path: string;
  parameters: Parameter[];
}

const HOSTILE = [
  'Infinity',
  '-Infinity',
  'NaN',
  '1e400',
  '0x10',
  ' 1',
  '\uFEFF1',
  '-1',
  '0',
  '99999999999999999999',
  '',
  '\u0000',
  '%',
  '%zz',
  '\u202E',
  '\u200F',
  'null',
  '[]',
  '{}',
  'true',
  '__proto__',
  '../..',
  '1,2,3',
  'A'.repeat(600),
];

/** Values the parameter's schema allows. */
function valid(schema: Record<string, any>): fc.Arbitrary<string> {
  if (schema.enum) return fc.constantFrom(...schema.enum.map(String));
  if (schema.type === 'integer')
    return fc.integer({ min: schema.minimum ?? -1_000_000, max: Math.min(schema.maximum ?? 1_000_000, 2_000_000_000) }).map(String);
  if (schema.type === 'number') {
    const step = schema.multipleOf ?? 0.01;
    const [min, max] = [Math.ceil((schema.minimum ?? -1_000_000) / step), Math.floor((schema.maximum ?? 1_000_000) / step)];
    return fc.integer({ min, max }).map((n) => String(n * step));
  }
  if (schema.type === 'boolean') return fc.constantFrom('true', 'false');
  const date = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2030-12-31T00:00:00Z'), noInvalidDate: true });
  if (schema.format === 'date-time') return date.map((d) => d.toISOString());
  if (schema.format === 'date') return date.map((d) => d.toISOString().slice(0, 10));
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern, 'u')).filter((s) => s.length <= (schema.maxLength ?? 500));
  return fc.string({ maxLength: 30 });
}

/** Anything at all, hostile values weighted in. */
const invalid: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...HOSTILE), weight: 3 },
  { arbitrary: fc.string({ maxLength: 40, unit: 'binary' }), weight: 2 },
  { arbitrary: fc.integer().map(String), weight: 1 },
  { arbitrary: fc.double().map(String), weight: 1 },
);

function operationRequest(op: Operation, areaIds: number[], keysOf: { business: string; free: string }) {
  const params = op.parameters.map((p) => {
    const good =
      p.name === 'areas'
        ? fc.oneof(
            valid(p.schema),
            fc.subarray(areaIds, { minLength: 1, maxLength: 4 }).map((ids) => ids.join(',')),
          )
        : valid(p.schema);
    const value = fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: invalid, weight: 1 });
    return (p.required ? value : fc.option(value, { freq: 2 })).map((v) => [p, v] as const);
  });
  const extras = fc.option(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 2 }), {
    freq: 8,
  });
  const auth = fc.oneof(
    { arbitrary: fc.constant('business' as const), weight: 5 },
    { arbitrary: fc.constant('free' as const), weight: 2 },
    { arbitrary: fc.constantFrom('none' as const, 'garbage' as const, 'empty' as const), weight: 2 },
  );
  const headers = fc.dictionary(fc.stringMatching(/^x-[a-z]{1,8}$/), fc.stringMatching(/^[ -~]{0,20}$/), { maxKeys: 2 });
  const accept = fc.constantFrom(undefined, 'application/json', '*/*', 'text/html', 'application/xml', 'application/geo+json', 'text/csv');
  return fc.tuple(fc.tuple(...params), extras, auth, headers, accept).map(([values, extra, who, more, acceptHeader]) => {
    let path = op.path;
    const query = new URLSearchParams();
    for (const [p, v] of values) {
      if (v === null) continue;
      if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(v));
      else query.append(p.name, v);
    }
    for (const [name, value] of Object.entries(extra ?? {})) query.append(name, value);
    const authorization = {
      business: `Bearer ${keysOf.business}`,
      free: `Bearer ${keysOf.free}`,
      none: undefined,
      garbage: 'Bearer SERVICE_x',
      empty: '',
    }[who];
    const allHeaders: Record<string, string> = { ...more };
    if (authorization !== undefined) allHeaders.authorization = authorization;
    if (acceptHeader) allHeaders.accept = acceptHeader;
    const text = query.toString();
    return { route: op.path, url: text ? `${path}?${text}` : path, headers: allHeaders };
  });
}

const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Requests generated from one app's OpenAPI document, and the checks of each answer (see {@link openApiFuzzer}). */
export interface OpenApiFuzzer {
  /** The documented GET paths it generates requests for (event streams left out: test/notify/change-stream.test.ts covers them). */
  routes: string[];
  /**
   * Sends `runs` requests to the operations of `routes` (valid and invalid values for every parameter,
   * random extra parameters and headers) and asserts each answer: no 5xx (the upstream is up), a documented
   * status, problem+json for errors, a body valid against the documented schema. fast-check reports the
   * smallest failing request. Counts statuses into `statuses`.
   */
  fuzz(routes: string[], runs: number, statuses: Map<number, number>): Promise<void>;
}

/** A fuzzer for `target`, from the OpenAPI document it serves, with a Business and a Free key of its own. */
export async function openApiFuzzer(target: TestRuntime): Promise<OpenApiFuzzer> {
  const openapi = JSON.parse((await target.app.inject('/v1/openapi.json')).body);
  const ajv = new (Ajv2020 as any)({ strict: false, allErrors: true });
  (addFormats as any)(ajv);
  ajv.addSchema({ ...openapi, $id: 'openapi' });
  const keys = { business: await target.key('business'), free: await target.key('free') };
  const operations: Operation[] = Object.entries(openapi.paths)
    // An event stream never ends, so inject cannot wait for it.
    .filter(([, item]: [string, any]) => item.get && !item.get.responses?.['200']?.content?.['text/event-stream'])
    .map(([path, item]: [string, any]) => ({ path, parameters: (item.get.parameters ?? []) as Parameter[] }));
  const areaIds = (await target.store.db.selectFrom('areas').select('id').orderBy('id').execute()).map((r) => Number(r.id));
  const check = async (
    { route, url, headers }: { route: string; url: string; headers: Record<string, string> },
    statuses: Map<number, number>,
  ) => {
    const res = await target.app.inject({ method: 'GET', url, headers });
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    const responses = openapi.paths[route].get.responses;
    const what = `${url} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
    // The upstream is up throughout: no 5xx at all (502/504 are documented for an upstream that is down).
    expect(res.statusCode, what).toBeLessThan(500);
    expect(responses[String(res.statusCode)], `undocumented status: ${what}`).toBeDefined();
    const media = String(res.headers['content-type']).split(';')[0];
    if (res.statusCode >= 400) expect(media, what).toBe('application/problem+json');
    expect(responses[String(res.statusCode)].content?.[media], `${media} undocumented for ${res.statusCode}: ${what}`).toBeDefined();
    if (media === 'text/csv') return;
    const validate = ajv.getSchema(`openapi#/paths/${pointer(route)}/get/responses/${res.statusCode}/content/${pointer(media)}/schema`);
    expect(validate, `no schema documented: ${what}`).toBeTruthy();
    expect(validate(JSON.parse(res.body)), `${what}: ${JSON.stringify(validate.errors?.slice(0, 2))}`).toBe(true);
  };
  return {
    routes: operations.map((op) => op.path),
    async fuzz(routes, runs, statuses) {
      const chosen = operations.filter((op) => routes.includes(op.path));
      expect(chosen.length, 'no such documented route').toBe(routes.length);
      const request = fc.oneof(...chosen.map((op) => operationRequest(op, areaIds, keys)));
      await fc.assert(
        fc.asyncProperty(request, (generated) => check(generated, statuses)),
        { numRuns: runs },
      );
    },
  };
}
