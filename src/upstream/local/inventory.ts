import type { UpstreamArea, UpstreamBuilding, UpstreamListingNode } from '../types.js';

/** One listing of the local upstream: the node it answers (search, extension and detail fields). */
export interface InventoryListing {
  kind: 'sale' | 'rental';
  node: UpstreamListingNode & { areaId: number; listedAt: string | null };
  /** Upstream area id of the listing's neighbourhood. */
  areaId: number;
  buildingId: string | null;
}

/**
 * The local upstream's whole market, in the upstream site's shapes and area numbering, built from
 * the real public data under `../shared/data` as of `asOf` (UTC midnight of the build day).
 * Building inventories are left empty here: the local upstream computes them from the listings.
 */
export interface Inventory {
  asOf: Date;
  areas: UpstreamArea[];
  listings: InventoryListing[];
  buildings: UpstreamBuilding[];
}
