import { join } from 'node:path';
import type { UpstreamArea } from '../upstream/types.js';
import { readJson } from './read.js';

const UPSTREAM_BOROUGHS = new Set([100, 200, 300, 400, 500]);

/**
 * The upstream site's NYC area rows from `areas/regions.json` (upstream numbering): every row that
 * lies under one of the five boroughs, found by walking `parentId`, plus `347 Cypress Hills` (parent
 * 300 Brooklyn), which this copy of the file lacks.
 */
export function buildUpstreamAreas(sharedDataDir: string): UpstreamArea[] {
  const rows = readJson<UpstreamArea[]>(join(sharedDataDir, 'areas', 'regions.json'));
  const byId = new Map(rows.map((r) => [r.id, r]));
  if (!byId.has(347)) byId.set(347, { id: 347, name: 'Cypress Hills', parentId: 300 });
  const inNyc = (id: number): boolean => {
    const seen = new Set<number>();
    let current = byId.get(id);
    while (current && !seen.has(current.id)) {
      if (UPSTREAM_BOROUGHS.has(current.id)) return true;
      seen.add(current.id);
      current = current.parentId === null ? undefined : byId.get(current.parentId);
    }
    return false;
  };
  return [...byId.values()].filter((r) => inNyc(r.id)).sort((a, b) => a.id - b.id);
}
