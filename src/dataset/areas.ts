import { join } from 'node:path';
import { buildAreas } from '../domain/area.js';
import type { UpstreamArea } from '../upstream/types.js';
import { readJson } from './read.js';

/**
 * The upstream site's NYC area rows from `areas/regions.json` (upstream numbering): every row that
 * lies under one of the five boroughs, found by walking `parentId` (the borough ids 100-500 are the
 * same set in both numberings, so the domain's {@link buildAreas} finds them), plus
 * `347 Cypress Hills` (parent 300 Brooklyn), which this copy of the file lacks.
 */
export function buildUpstreamAreas(sharedDataDir: string): UpstreamArea[] {
  const rows = readJson<UpstreamArea[]>(join(sharedDataDir, 'areas', 'regions.json'));
  if (!rows.some((r) => r.id === 347)) rows.push({ id: 347, name: 'Cypress Hills', parentId: 300 });
  const nyc = new Set(buildAreas(rows).map((a) => a.id));
  return rows.filter((r) => nyc.has(r.id)).sort((a, b) => a.id - b.id);
}
