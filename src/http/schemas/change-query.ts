import { Type, type Static } from 'typebox';
import { CHANGE_FILTERS } from '../../domain/change.js';
import { queryObject } from './search-query.js';

const since = Type.String({
  pattern: '^([0-9]{1,15}|latest)$',
  description:
    'The cursor to continue from (an event id: `meta.next` of the previous page); 0 or absent: the oldest kept; `latest`: the newest event now (a new consumer starts there and reads only what comes next). A cursor beyond the newest event is a 400.',
});

/** A webhook subscription's filter (`webhooks add --filter 'kind=rental&areas=200'`). */
export const ChangeFilterQuery = queryObject(CHANGE_FILTERS);
export type ChangeFilterQuery = Static<typeof ChangeFilterQuery>;

/** Query of GET /v1/changes. */
export const ChangesQuery = queryObject({
  ...CHANGE_FILTERS,
  since,
  perPage: Type.Integer({ minimum: 1, maximum: 500, description: 'Events a page, 1-500, default 100, capped by the plan.' }),
});
export type ChangesQuery = Static<typeof ChangesQuery>;

/** Query of GET /v1/changes/stream (`Last-Event-ID` takes precedence over `since`). */
export const ChangesStreamQuery = queryObject({
  ...CHANGE_FILTERS,
  since,
  access_token: Type.String({
    pattern: '^[A-Za-z0-9_-]{1,100}$',
    description:
      "The API key, for a browser's `EventSource`, which cannot send an Authorization header (RFC 6750, section 2.3); never both. " +
      'A URL is seen by more parties than a header (history, proxies): the service never logs it (redacted) and the stream is `Cache-Control: no-store`. Prefer a publishable key restricted to your origins.',
  }),
});
export type ChangesStreamQuery = Static<typeof ChangesStreamQuery>;
