/**
 * The upstream site numbers boroughs 100 Manhattan, 200 Bronx, 300 Brooklyn, 400 Queens,
 * 500 Staten Island; the API (spec 2.7) uses 100 Manhattan, 200 Brooklyn, 300 Queens, 400 Bronx,
 * 500 Staten Island. Only the five borough ids are swapped; every other area id is the upstream's.
 */
const UPSTREAM_TO_API: Readonly<Record<number, number>> = { 100: 100, 200: 400, 300: 200, 400: 300, 500: 500 };
const API_TO_UPSTREAM: Readonly<Record<number, number>> = { 100: 100, 400: 200, 200: 300, 300: 400, 500: 500 };

/** Upstream area id -> API area id. */
export function toApiAreaId(upstreamId: number): number {
  return UPSTREAM_TO_API[upstreamId] ?? upstreamId;
}

/** API area id -> upstream area id. */
export function toUpstreamAreaId(apiId: number): number {
  return API_TO_UPSTREAM[apiId] ?? apiId;
}
