import type { AreaTree } from '../domain/area.js';
import { invalidParams } from './problem.js';

/**
 * An `areas=` parameter (comma-separated ids, already checked by its pattern) -> the areas it names
 * with all their descendants, and the boroughs they lie in. Undefined areas when the parameter is absent.
 * @throws Problem 400 naming the unknown ids.
 */
export function resolveAreas(areas: string | undefined, tree: AreaTree): { areaIds: number[] | undefined; boroughs: number[] } {
  if (!areas) return { areaIds: undefined, boroughs: [] };
  const ids = areas.split(',').map(Number);
  const unknown = ids.filter((id) => !tree.get(id));
  if (unknown.length) throw invalidParams([{ name: 'areas', in: 'query', message: `unknown area id ${unknown.join(', ')} (see /v1/areas)` }]);
  return { areaIds: [...new Set(ids.flatMap((id) => tree.withDescendants(id)))], boroughs: [...new Set(ids.map((id) => tree.boroughOf(id)!))] };
}
