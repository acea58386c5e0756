import { closest, distance } from 'fastest-levenshtein';
import type { AreaTree } from '../domain/area.js';
import type { RecordedSaleSearch } from '../store/recorded-sale-filters.js';
import { invalidParams } from './problem.js';

/**
 * The areas an `areas=` parameter names (comma-separated ids or slugs, already checked by its pattern), by id.
 * @throws Problem 400 naming each unknown token, with the nearest known slug for a misspelt one.
 */
export function areaIdsOf(areas: string, tree: AreaTree): number[] {
  const tokens = [...new Set(areas.split(',').filter(Boolean))];
  const unknown = tokens.filter((t) => !tree.find(t));
  if (unknown.length) {
    const slugs = tree.slugs();
    const hint = (t: string) => {
      if (/^[0-9]+$/.test(t)) return `unknown area id ${t}`;
      const near = closest(t.toLowerCase(), slugs);
      return `unknown area ${t}${near && distance(t.toLowerCase(), near) <= Math.max(2, Math.floor(t.length / 3)) ? ` (did you mean ${near}?)` : ''}`;
    };
    throw invalidParams([{ name: 'areas', in: 'query', message: `${unknown.map(hint).join('; ')} (see /v1/areas?q=)` }]);
  }
  return tokens.map((t) => tree.find(t)!.id);
}

/**
 * An `areas=` parameter -> the areas it names with all their descendants, and the boroughs they lie in.
 * Undefined areas when the parameter is absent.
 * @throws Problem 400 naming the unknown ids or slugs (see {@link areaIdsOf}).
 */
export function resolveAreas(areas: string | undefined, tree: AreaTree): { areaIds: number[] | undefined; boroughs: number[] } {
  if (!areas) return { areaIds: undefined, boroughs: [] };
  const ids = areaIdsOf(areas, tree);
  // One area, as most searches name: its descendants are already distinct, and it lies in one borough.
  if (ids.length === 1) return { areaIds: [...tree.withDescendants(ids[0])], boroughs: [tree.boroughOf(ids[0])!] };
  return {
    areaIds: [...new Set(ids.flatMap((id) => tree.withDescendants(id)))],
    boroughs: [...new Set(ids.map((id) => tree.boroughOf(id)!))],
  };
}

/** `areas=` split into whole boroughs (every sale in them) and smaller areas with their descendants (positioned sales). */
export function recordedSaleAreaFilter(areas: string | undefined, tree: AreaTree): Pick<RecordedSaleSearch, 'boroughIds' | 'areaIds'> {
  if (!areas) return {};
  const ids = areaIdsOf(areas, tree);
  const boroughIds = ids.filter((id) => tree.boroughOf(id) === id);
  const areaIds = [...new Set(ids.filter((id) => tree.boroughOf(id) !== id).flatMap((id) => tree.withDescendants(id)))];
  return { boroughIds: boroughIds.length ? boroughIds : undefined, areaIds: areaIds.length ? areaIds : undefined };
}
