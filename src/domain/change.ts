import { Type, type Static } from 'typebox';
import type { ListingKind } from './listing.js';
import type { AreaTree } from './area.js';
import { AREA_LIST, COMMON_FILTERS } from './search-filters.js';

/** Kinds of change the feed, the stream and webhooks report. */
export const CHANGE_TYPES = ['listing.listed', 'listing.price_changed', 'listing.status_changed', 'building.updated'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/**
 * One change the sync applied. `id` is the feed's cursor (monotonic); `occurredAt` is when the sync
 * applied it (UTC). A listing event's `data` holds the listing summary after the change (`listing`) and
 * the before/after facts (`oldPrice`, `newPrice` in dollars, `pctChange` in percent, `fromStatus`,
 * `toStatus`); a building event's (`building.updated`, no listing, no kind) the building after the
 * change and the names of the fields that changed (`building`, `changedFields`).
 */
export interface ChangeEvent {
  id: number;
  type: string;
  listingId: string | null;
  buildingId: string | null;
  kind: ListingKind | null;
  occurredAt: string;
  data: Record<string, unknown>;
}

/**
 * The top-level fields of a building that differ between what the mirror held and what the site now
 * says (compared as JSON), in the building's own field order; empty when nothing changed or when the
 * building is new (a first sight is not an update). Fields in `ignore` are not compared.
 */
export function changedFields<T extends object>(before: T | undefined, after: T, ignore: readonly (keyof T)[] = []): string[] {
  if (!before) return [];
  return Object.keys(after).filter(
    (k) =>
      !ignore.includes(k as keyof T) &&
      JSON.stringify((before as Record<string, unknown>)[k]) !== JSON.stringify((after as Record<string, unknown>)[k]),
  );
}

/**
 * Which events a reader wants: types, kind, area ids (already expanded to descendants), and the
 * listing's price (dollars) and bedrooms after the change. An absent field does not filter.
 */
export interface ChangeFilter {
  types?: string[];
  kind?: ListingKind;
  areaIds?: number[];
  minPrice?: number;
  maxPrice?: number;
  minBeds?: number;
  maxBeds?: number;
}

const typeList = CHANGE_TYPES.map((t) => t.replace('.', '\\.')).join('|');

/**
 * Filters on change events as a query string writes them (`types` and `areas` comma-separated), the
 * same as on search where they overlap: the feed, the stream and a webhook subscription's `--filter`
 * all read this one definition. Price and bedrooms are the listing's after the change.
 */
export const CHANGE_FILTERS = {
  types: Type.String({
    pattern: `^(${typeList})(,(${typeList}))*$`,
    maxLength: 200,
    description: `Comma-separated event types: ${CHANGE_TYPES.join(', ')}.`,
  }),
  kind: Type.Enum(['rental', 'sale'], { description: 'Only rentals or only sales.' }),
  areas: AREA_LIST,
  minPrice: COMMON_FILTERS.minPrice,
  maxPrice: COMMON_FILTERS.maxPrice,
  minBeds: COMMON_FILTERS.minBeds,
  maxBeds: COMMON_FILTERS.maxBeds,
};

/** A change filter as written in a query string, every field optional. */
export const ChangeFilterParams = Type.Partial(Type.Object(CHANGE_FILTERS));
export type ChangeFilterParams = Static<typeof ChangeFilterParams>;

/**
 * A query string's filter -> the filter the log is read with: types split, areas expanded to their
 * descendants with `tree` (an id the tree no longer has matches nothing).
 */
export function changeFilterOf(params: ChangeFilterParams, tree: AreaTree): ChangeFilter {
  const { types, areas, ...rest } = params;
  return {
    ...rest,
    types: types?.split(','),
    areaIds:
      areas === undefined
        ? undefined
        : [
            ...new Set(
              areas.split(',').flatMap((token) => {
                const area = tree.find(token);
                return area ? tree.withDescendants(area.id) : [];
              }),
            ),
          ],
  };
}

/**
 * An event as every channel sends it (feed page item, stream `data`, webhook payload `data`): a listing
 * event `{id, type, occurredAt, listingId, kind, listing, oldPrice, newPrice, pctChange, fromStatus,
 * toStatus}`; a building event `{id, type, occurredAt, listingId: null, kind: null, buildingId, building,
 * changedFields}`.
 */
export function changeBody(e: ChangeEvent): Record<string, unknown> {
  return {
    id: String(e.id),
    type: e.type,
    occurredAt: e.occurredAt,
    listingId: e.listingId,
    kind: e.kind,
    ...(e.buildingId ? { buildingId: e.buildingId } : {}),
    ...e.data,
  };
}
