import { Type, type Static } from 'typebox';
import { CHANGE_TYPES } from '../../domain/change.js';
import { commonFilters, queryObject } from './search-query.js';

const typeList = CHANGE_TYPES.map((t) => t.replace('.', '\\.')).join('|');

/**
 * Filters on change events, as on search: the feed, the stream and a webhook subscription's
 * `--filter` all read this one schema. Price and bedrooms are the listing's after the change.
 */
export const changeFilters = {
  types: Type.String({ pattern: `^(${typeList})(,(${typeList}))*$`, maxLength: 200, description: `Comma-separated event types: ${CHANGE_TYPES.join(', ')}.` }),
  kind: Type.Enum(['rental', 'sale'], { description: 'Only rentals or only sales.' }),
  areas: commonFilters.areas,
  minPrice: commonFilters.minPrice,
  maxPrice: commonFilters.maxPrice,
  minBeds: commonFilters.minBeds,
  maxBeds: commonFilters.maxBeds,
};

const since = Type.String({ pattern: '^[0-9]{1,15}$', description: 'The cursor to continue from (an event id: `meta.next` of the previous page); 0 or absent: the oldest kept.' });

/** A webhook subscription's filter (`webhooks add --filter 'kind=rental&areas=200'`). */
export const ChangeFilterQuery = queryObject(changeFilters);
export type ChangeFilterQuery = Static<typeof ChangeFilterQuery>;

/** Query of GET /v1/changes. */
export const ChangesQuery = queryObject({
  ...changeFilters,
  since,
  perPage: Type.Integer({ minimum: 1, maximum: 500, description: 'Events a page, 1-500, default 100, capped by the plan.' }),
});
export type ChangesQuery = Static<typeof ChangesQuery>;

/** Query of GET /v1/changes/stream (`Last-Event-ID` takes precedence over `since`). */
export const ChangesStreamQuery = queryObject({ ...changeFilters, since });
export type ChangesStreamQuery = Static<typeof ChangesStreamQuery>;
