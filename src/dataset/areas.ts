import { boundingBox, decodeOutline, outlineContains, type BoundingBox, type Outline } from '../domain/outline.js';
import type { SiteArea } from '../upstream/types.js';
import { readJson } from '../lib/csv.js';
import { sharedDataFile } from './shared-data.js';

/** The site's borough ids (upstream numbering) by the borough names the data files use. */
export const UPSTREAM_BOROUGH_BY_NAME: Readonly<Record<string, number>> = {
  Manhattan: 100,
  Bronx: 200,
  Brooklyn: 300,
  Queens: 400,
  'Staten Island': 500,
};

/** The borough names the data files use, by the site's borough ids. */
export const BOROUGH_NAME_BY_UPSTREAM_ID: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(UPSTREAM_BOROUGH_BY_NAME).map(([name, id]) => [id, name]),
);

/** The site's own answer to its `areas` query (`streeteasy-areas/areas.json`), served as captured. */
export function loadSiteAreas(sharedDataDir: string): SiteArea[] {
  return readJson<SiteArea[]>(sharedDataFile(sharedDataDir, 'siteAreas'));
}

interface IndexedArea {
  area: SiteArea;
  borough: number | null;
  depth: number;
  outline: Outline | null;
  box: BoundingBox | null;
}

/**
 * The site's NYC areas indexed for the dataset builders (upstream numbering): by numeric id, by
 * borough and name, with decoded outlines, and the deepest area whose outline holds a point.
 */
export class SiteAreaIndex {
  private readonly byId = new Map<number, IndexedArea>();
  private readonly byBoroughName = new Map<string, IndexedArea>();

  constructor(areas: SiteArea[]) {
    const raw = new Map(areas.map((a) => [a.numericId, a]));
    const walk = (id: number): { borough: number | null; depth: number } => {
      let depth = 0;
      for (let current = raw.get(id); current; current = current.parentId === null ? undefined : raw.get(current.parentId), depth++) {
        if (Object.values(UPSTREAM_BOROUGH_BY_NAME).includes(current.numericId)) return { borough: current.numericId, depth };
      }
      return { borough: null, depth };
    };
    for (const area of areas) {
      const { borough, depth } = walk(area.numericId);
      if (borough === null) continue;
      const outline = decodeOutline(area.geometry?.encodedBoundary);
      const entry = { area, borough, depth, outline, box: outline ? boundingBox(outline) : null };
      this.byId.set(area.numericId, entry);
      this.byBoroughName.set(`${borough}|${area.name.toLowerCase()}`, entry);
    }
  }

  get(id: number): SiteArea | undefined {
    return this.byId.get(id)?.area;
  }

  /** The area of this name in this borough (upstream ids), case-insensitive: names repeat across boroughs. */
  find(borough: number, name: string): SiteArea | undefined {
    return this.byBoroughName.get(`${borough}|${name.toLowerCase()}`)?.area;
  }

  /** Borough (upstream id) an area lies in. */
  boroughOf(id: number): number | null {
    return this.byId.get(id)?.borough ?? null;
  }

  outline(id: number): Outline | null {
    return this.byId.get(id)?.outline ?? null;
  }

  /** The deepest area of `borough` whose outline holds `point`, or undefined. */
  deepestContaining(borough: number, point: { latitude: number; longitude: number }): SiteArea | undefined {
    let best: IndexedArea | undefined;
    for (const entry of this.byId.values()) {
      if (entry.borough !== borough || !entry.outline || (best && entry.depth <= best.depth)) continue;
      if (outlineContains(entry.outline, point, entry.box!)) best = entry;
    }
    return best?.area;
  }
}
