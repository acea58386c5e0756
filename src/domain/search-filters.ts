import { Type, type Static } from 'typebox';
import { SALE_TYPES } from './listing.js';

/**
 * The listing search's filters that mean the same on the wire and in the store: one definition (TypeBox)
 * that the query schemas of both searches spread and the store's search type is derived from. Units:
 * prices and monthly cost in US dollars (rent a month), floor area in square feet, whole days, instants
 * UTC (ISO 8601). Filters the route must first resolve (area ids, comma lists, geography) are not here.
 * Boolean filters: `true` keeps listings known to have the feature; `false` keeps the others.
 */
const MONEY_MAX = 10_000_000_000;
const Money = (description: string) => Type.Integer({ minimum: 0, maximum: MONEY_MAX, description });
const Count = (description: string) => Type.Integer({ minimum: 0, maximum: 100, description });
const Flag = (description: string) => Type.Boolean({ description });

/** An `areas=` list as a query string writes it: the searches, the market and the change filters take it. */
export const AREA_LIST = Type.String({
  pattern: '^[0-9A-Za-z-]{1,80}(,[0-9A-Za-z-]{1,80}){0,49}$',
  maxLength: 2000,
  description:
    'Comma-separated areas from /v1/areas (at most 50), by id or slug (`200,williamsburg`; find slugs with /v1/areas?q=). A listing matches when its area or any ancestor is listed.',
});

/** Filters of every search. */
export const COMMON_FILTERS = {
  minPrice: Money('Minimum price in US dollars (a month for rentals).'),
  maxPrice: Money('Maximum price in US dollars (a month for rentals).'),
  minBeds: Count('Minimum bedrooms (a studio has 0).'),
  maxBeds: Count('Maximum bedrooms.'),
  minBaths: Count('Minimum full bathrooms.'),
  maxBaths: Count('Maximum full bathrooms.'),
  minSqft: Type.Integer({
    minimum: 0,
    maximum: 1_000_000,
    description: 'Minimum floor area, square feet (listings of unknown area are left out).',
  }),
  maxSqft: Type.Integer({
    minimum: 0,
    maximum: 1_000_000,
    description: 'Maximum floor area, square feet (listings of unknown area are left out).',
  }),
  petsAllowed: Flag('true: pets known to be allowed; false: the others.'),
  prewar: Flag('true: built before 1940; false: built 1940 or later, or year unknown.'),
  minDaysOnMarket: Type.Integer({ minimum: 0, maximum: 100_000, description: 'Minimum whole days on market (UTC).' }),
  maxDaysOnMarket: Type.Integer({ minimum: 0, maximum: 100_000, description: 'Maximum whole days on market (UTC).' }),
  listedAfter: Type.String({
    format: 'date-time',
    maxLength: 40,
    description: 'Listed strictly after this instant (ISO 8601). Listings with no known date are left out.',
  }),
  listedBefore: Type.String({
    format: 'date-time',
    maxLength: 40,
    description: 'Listed strictly before this instant (ISO 8601). Listings with no known date are left out.',
  }),
  hasOpenHouse: Flag('true: an open house is scheduled in the future.'),
  has3dTour: Flag('true: the listing has a 3D tour.'),
  minTransitScore: Type.Integer({
    minimum: 0,
    maximum: 100,
    description:
      'Transit score 0-100: 100 x max(0, 1 - d/1600) for the nearest subway station at d metres, plus 5 per further station within 800 m, capped at 100 (MTA station list).',
  }),
  maxPricePosition: Type.Number({
    minimum: -100,
    maximum: 10_000,
    description:
      "Listed at most this many percent above the estimate of what it is worth (`-5`: at least 5 % under it), as the listing's `pricePosition`; listings without an estimate are left out. Positions are stored by the valuation after each sync (docs/estimates.md).",
  }),
};

/** Filters of sale searches only. */
export const SALE_FILTERS = {
  saleType: Type.Enum([...SALE_TYPES], { description: 'RESALE, SPONSOR_UNIT or FORECLOSURE.' }),
  maxMonthlyCost: Money(
    'Maximum monthly cost in dollars: mortgage payment on the price (20% down, 30-year fixed, configurable rate, 6.5% by default) + maintenance + common charges + property tax (unknown charges count as 0).',
  ),
};

/** Filters of rental searches only. */
export const RENTAL_FILTERS = {
  noFee: Flag('true: no broker fee.'),
  furnished: Flag('true: furnished.'),
  availableBefore: Type.String({
    format: 'date',
    description: 'Available on or before this day (YYYY-MM-DD); listings with no known date are left out.',
  }),
};

/** Every filter above, each optional: what a search of either kind may carry. */
export const SearchFilters = Type.Partial(Type.Object({ ...COMMON_FILTERS, ...SALE_FILTERS, ...RENTAL_FILTERS }));
export type SearchFilters = Static<typeof SearchFilters>;

/** The names of {@link SearchFilters}, in its order. */
export const SEARCH_FILTER_NAMES = Object.keys(SearchFilters.properties) as (keyof SearchFilters)[];
