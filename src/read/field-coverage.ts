import type { TSchema } from 'typebox';
import { Address, GeoPoint } from '../wire/common.js';

/**
 * Field coverage: for each field of a wire shape, the share of records that hold a value. The fields are
 * read from the TypeBox schema itself (the one definition of the wire shape), an `Address` or `GeoPoint`
 * reference expanded into its members, so a field added to the wire is counted without more code.
 */

const REFERENCED: Record<string, TSchema> = { Address, GeoPoint };

/** Dotted paths of a schema's fields: `price`, `address.street`, `geoPoint`, ... (objects one level deep). */
export function fieldPaths(schema: TSchema): string[] {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  const paths: string[] = [];
  for (const [name, member] of Object.entries(properties)) {
    const ref = (member as { $ref?: string }).$ref;
    const referenced = ref ? REFERENCED[ref] : undefined;
    if (referenced && ref === 'Address')
      paths.push(...Object.keys((referenced as { properties: object }).properties).map((p) => `${name}.${p}`));
    else paths.push(name);
  }
  return paths;
}

/**
 * Whether a wire value holds a fact: not null or undefined, not an empty string or array; an amenity list
 * (every known amenity with `available`) holds one when any is available; an object holds one when any of
 * its members does.
 */
export function holdsValue(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return false;
  if (Array.isArray(value)) {
    if (value.length === 0) return false;
    if (value.every((v) => typeof v === 'object' && v !== null && 'available' in v))
      return value.some((v) => (v as { available: boolean }).available);
    return true;
  }
  if (typeof value === 'object') return Object.values(value as Record<string, unknown>).some(holdsValue);
  return true;
}

/** The value at `parts` (a field's path, split at its dots) of `record`; undefined past a null or a missing field. */
function at(record: unknown, parts: readonly string[]): unknown {
  let value = record;
  for (const part of parts) value = value === null || value === undefined ? undefined : (value as Record<string, unknown>)[part];
  return value;
}

/** Per group (e.g. a borough), how many records there are and how many hold a value in each field. */
export class FieldCoverage {
  private readonly counts = new Map<string, { records: number; held: Map<string, number> }>();

  /** Each field's path with its parts, split at the dots once rather than for each record counted. */
  private readonly fields: readonly { path: string; parts: readonly string[] }[];

  constructor(readonly paths: readonly string[]) {
    this.fields = paths.map((path) => ({ path, parts: path.split('.') }));
  }

  /** Counts one record of `group`. */
  add(group: string, record: unknown): void {
    let entry = this.counts.get(group);
    if (!entry) {
      entry = { records: 0, held: new Map() };
      this.counts.set(group, entry);
    }
    entry.records++;
    for (const { path, parts } of this.fields) if (holdsValue(at(record, parts))) entry.held.set(path, (entry.held.get(path) ?? 0) + 1);
  }

  /** Records counted in `group` (0 when none). */
  records(group: string): number {
    return this.counts.get(group)?.records ?? 0;
  }

  /** Share (0 to 1) of `group`'s records holding `path`; null when the group has no record. */
  share(group: string, path: string): number | null {
    const entry = this.counts.get(group);
    return entry?.records ? (entry.held.get(path) ?? 0) / entry.records : null;
  }

  /** A Markdown table: one row a field, one column a group (in `groups` order), whole percentages. */
  table(groups: readonly string[]): string {
    const head = `| field | ${groups.map((g) => `${g} (${this.records(g).toLocaleString('en-US')})`).join(' | ')} |`;
    const rule = `|---|${groups.map(() => '---:').join('|')}|`;
    const rows = this.paths.map((path) => {
      const cells = groups.map((g) => {
        const share = this.share(g, path);
        return share === null ? '' : `${Math.round(share * 100)} %`;
      });
      return `| \`${path}\` | ${cells.join(' | ')} |`;
    });
    return [head, rule, ...rows].join('\n');
  }
}
