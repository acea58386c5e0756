import type { FastifyReply } from 'fastify';
import { Type, type TObject } from 'typebox';
import { invalidParams } from './problem.js';

/**
 * The `fields` parameter of a route whose items have the properties of `item` (a TypeBox object):
 * a comma-separated subset of its top-level names. The names are checked by {@link sparseFields}, so
 * that an unknown one is named in the 400.
 */
export function fieldsParam(item: TObject) {
  return Type.String({
    pattern: '^[A-Za-z]{1,40}(,[A-Za-z]{1,40}){0,80}$',
    maxLength: 1000,
    description: `Sparse fields: a comma-separated subset of ${Object.keys(item.properties).join(', ')}. Each item then holds only those, and \`id\`; \`meta\` is whole. An unknown name is 400.`,
  });
}

/**
 * `fields` -> the names to keep (always `id`), or null when absent (every field). When fields are
 * kept, the reply is serialized with JSON.stringify: the route's response schema describes whole items.
 * @throws Problem 400 INVALID_PARAMS naming the unknown names.
 */
export function sparseFields(fields: string | undefined, item: TObject, reply: FastifyReply): Set<string> | null {
  if (fields === undefined) return null;
  const known = Object.keys(item.properties);
  const asked = fields.split(',');
  const unknown = asked.filter((name) => !known.includes(name));
  if (unknown.length)
    throw invalidParams([{ name: 'fields', in: 'query', message: `unknown field ${unknown.join(', ')}; known: ${known.join(', ')}` }]);
  reply.serializer((payload: unknown) => JSON.stringify(payload));
  return new Set(['id', ...asked]);
}

/** `item` with only the top-level properties in `keep` (every one when `keep` is null). */
export function project<T extends object>(item: T, keep: Set<string> | null): T {
  if (!keep) return item;
  return Object.fromEntries(Object.entries(item).filter(([name]) => keep.has(name))) as T;
}
