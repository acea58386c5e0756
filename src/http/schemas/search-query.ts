import { Type, type TProperties, type TSchema } from 'typebox';
import { KNOWN_AMENITIES, KNOWN_BUILDING_TYPES } from '../../domain/listing.js';
import { AREA_LIST, COMMON_FILTERS, RENTAL_FILTERS, SALE_FILTERS } from '../../domain/search-filters.js';
import { districtParameters } from '../../domain/city-districts.js';
import { fieldsParam } from '../sparse-fields.js';
import { DEFAULT_SORT_DIRECTIONS, SORT_FIELDS } from '../../search/sorts.js';
import { ListingSummary } from '../../wire/listing.js';

/** Every property optional, no others allowed: a query string's schema. */
export function queryObject<T extends TProperties>(properties: T) {
  const optional = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v as TSchema)]));
  return Type.Object(optional as { [K in keyof T]: ReturnType<typeof Type.Optional<T[K]>> }, { additionalProperties: false });
}

/** A decimal degree: optional minus, digits, optional fraction. */
const COORD = '-?[0-9]{1,3}(\\.[0-9]{1,12})?';

const csv = (values: readonly string[]) => `^(${values.join('|')})(,(${values.join('|')}))*$`;

/** The filters every search takes (the change feed's filters reuse some of them). */
export const commonFilters = {
  areas: AREA_LIST,
  // The filters that mean the same in the store: defined once in the domain.
  ...COMMON_FILTERS,
  amenities: Type.String({
    pattern: csv(KNOWN_AMENITIES),
    maxLength: 400,
    description: `Comma-separated amenities, all required: ${KNOWN_AMENITIES.join(', ')}.`,
  }),
  buildingType: Type.String({
    pattern: csv(KNOWN_BUILDING_TYPES),
    maxLength: 400,
    description: `Comma-separated building types, any may match: ${KNOWN_BUILDING_TYPES.join(', ')}.`,
  }),
  ...districtParameters(
    'A listing is in the district whose polygon (NYC Open Data) holds its position; one without a position is in none.',
  ),
  bbox: Type.String({
    pattern: `^${COORD},${COORD},${COORD},${COORD}$`,
    maxLength: 100,
    description: 'Map bounds `minLon,minLat,maxLon,maxLat` (WGS84 degrees): only listings inside. Served by a spatial index.',
  }),
  near: Type.String({
    pattern: `^${COORD},${COORD}$`,
    maxLength: 50,
    description: 'A point `lat,lon` (WGS84 degrees): only listings within `radius` of it; each item then carries `distance` in metres.',
  }),
  radius: Type.Integer({
    minimum: 1,
    maximum: 50_000,
    description:
      'Metres around `near` (great-circle), 1 to 50,000; default 1,000. A listing is within it when its distance, rounded to the metre as `distance` shows it, is at most the radius. Needs `near`.',
  }),
  polygon: Type.String({
    minLength: 6,
    maxLength: 8000,
    pattern: '^[\\x3F-\\x7E]+$',
    description:
      "An outline as a Google encoded polyline (latitude first, 5 decimals), the upstream site's own outline format: only listings inside.",
  }),
  fields: fieldsParam(ListingSummary),
  format: Type.Enum(['json', 'geojson', 'csv'], {
    description:
      'Answer format: the JSON envelope (default), a GeoJSON FeatureCollection, or CSV; `Accept: application/geo+json` or `text/csv` does the same.',
  }),
  sortDir: Type.Enum(['ASC', 'DESC'], {
    description: `Sort direction; by default ${Object.entries(DEFAULT_SORT_DIRECTIONS)
      .map(([sort, dir]) => `${sort} ${dir}`)
      .join(', ')}.`,
  }),
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Page, 1-indexed; default 1.' }),
  cursor: Type.String({
    pattern: '^[A-Za-z0-9_-]{1,1000}$',
    description:
      "Keyset pagination: the opaque cursor `meta.links.next` carries. The page then starts after the previous page's last row (no rows skipped " +
      'or repeated when listings change in between, and a deep page costs what the first does); `page` only numbers it. It must come with the same ' +
      'filters, sort and sortDir (otherwise 400). Not for sort=DISTANCE, which pages by `page`.',
  }),
  perPage: Type.Integer({
    minimum: 1,
    maximum: 500,
    description:
      'Page size 1-500, default 50. Above the plan cap (Free 10, Starter 50, Pro and Business 500) it is clamped; meta.perPage shows the size in effect.',
  }),
};

const SORT_DESCRIPTION =
  'RECOMMENDED (default): score = round(0.6 x transit score) + 20 if floor area known + 10 if a lead photo + 10 if no fee. DISTANCE: from `near` (needs it). ' +
  'Every sort puts unknown values last; ties are broken by listing date (RECOMMENDED) and then id, in the same direction, so pages never overlap.';

/** Query of GET /v1/search/sales (spec 4.1). */
export const SalesQuery = queryObject({
  ...commonFilters,
  ...SALE_FILTERS,
  sort: Type.Enum(SORT_FIELDS, { description: SORT_DESCRIPTION }),
});

/** Query of GET /v1/search/rentals: the common filters plus rental ones (DESIGN.md). */
export const RentalsQuery = queryObject({
  ...commonFilters,
  ...RENTAL_FILTERS,
  sort: Type.Enum(SORT_FIELDS, { description: SORT_DESCRIPTION }),
});

export const AreasQuery = queryObject({
  q: Type.String({
    minLength: 1,
    maxLength: 80,
    description:
      'Areas whose name, or a word of it, starts with this, ignoring case and accents (`williams` finds Williamsburg); whole-name matches first, then by name.',
  }),
  level: Type.Integer({ enum: [0, 1, 2], description: '0 borough, 1 sub-borough, 2 neighbourhood.' }),
  borough: Type.Integer({
    enum: [100, 200, 300, 400, 500],
    description: 'Borough id: 100 Manhattan, 200 Brooklyn, 300 Queens, 400 Bronx, 500 Staten Island.',
  }),
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Page, 1-indexed; default 1.' }),
  perPage: Type.Integer({
    minimum: 1,
    maximum: 500,
    description: 'Page size 1-500; default 500 (every area on one page). Not capped by plan.',
  }),
  include: Type.Enum(['boundary'], { description: "`boundary`: each area's outline as a GeoJSON Polygon." }),
});

/** Parameters of a search that say how its page is read or written, which a map's clusters do not take. */
const PAGE_PARAMETERS = ['sort', 'sortDir', 'page', 'perPage', 'cursor', 'fields', 'format'];

/**
 * The query of a search's map clusters: the search's filters (`query`'s, unchanged) without its page parameters,
 * `bbox` required, and the map's `zoom`.
 */
function clustersQuery(query: typeof SalesQuery | typeof RentalsQuery) {
  const filters = Object.fromEntries(
    Object.entries(query.properties).filter(([name]) => !PAGE_PARAMETERS.includes(name) && name !== 'bbox'),
  );
  return Type.Object(
    {
      ...filters,
      bbox: Type.String({
        ...commonFilters.bbox,
        description: 'Map bounds `minLon,minLat,maxLon,maxLat` (WGS84 degrees): the listings counted are those inside.',
      }),
      zoom: Type.Integer({
        minimum: 0,
        maximum: 22,
        description: "The map's zoom (Web Mercator, 0 to 22): a cell is 32 pixels on the screen at it.",
      }),
    },
    { additionalProperties: false },
  );
}

/** Query of GET /v1/search/sales/clusters. */
export const SaleClustersQuery = clustersQuery(SalesQuery);
/** Query of GET /v1/search/rentals/clusters. */
export const RentalClustersQuery = clustersQuery(RentalsQuery);
