import { Type, type Static } from 'typebox';
import { Nullable, type WireRefs } from './common.js';

/**
 * Listings on the wire (spec 2.4 summary, 2.5 detail). Money in US dollars (rent a month for rentals,
 * asking price for sales), areas in square feet, distances in metres, dates and instants in UTC.
 */

const NInt = () => Nullable(Type.Integer());
const NNum = () => Nullable(Type.Number());
const NStr = () => Nullable(Type.String());
const NBool = () => Nullable(Type.Boolean());

/** A fee of a rental, as the site lists it; `amount` in dollars. */
export const Fee = Type.Object({
  typeLabel: NStr(),
  requirement: NStr(),
  refundability: NStr(),
  calcType: NStr(),
  amount: NNum(),
  timing: NStr(),
  occurrence: NStr(),
});

/** Who lists the unit. */
export const Contact = Type.Object({ name: NStr(), phone: NStr(), sourceGroup: NStr() });

/** One price event; `pctChange` is null for the first event. */
export const PriceEvent = Type.Object({
  date: Type.String({ format: 'date' }),
  price: Type.Number(),
  event: Type.String({ description: 'LISTED, PRICE_INCREASE, PRICE_DECREASE, DELISTED (open set).' }),
  pctChange: Nullable(Type.Number({ description: 'Percent change from the previous price.' })),
});

const summaryFields = {
  id: Type.String({ description: "The upstream site's listing id." }),
  address: Type.Ref('Address'),
  price: Type.Integer({ description: 'US dollars: rent a month for rentals, asking price for sales.' }),
  bedroomCount: NInt(),
  fullBathroomCount: NInt(),
  halfBathroomCount: NInt(),
  buildingType: Nullable(
    Type.String({
      description:
        "Open set: the site's upper-case tokens (CONDO, CO_OP, HOUSE, ...); the search's buildingType filter lists the known ones.",
    }),
  ),
  areaName: NStr(),
  status: Type.String({ description: 'Open set; known: ACTIVE, IN_CONTRACT (answered by id, never found by a search), OFF_MARKET.' }),
  geoPoint: Nullable(Type.Ref('GeoPoint')),
  leadPhotoKey: NStr(),
  sourceGroupLabel: NStr(),
  urlPath: NStr(),
  tier: Nullable(Type.String({ description: 'Listing tier (open set; observed BASIC). Not the subscription plan.' })),
  daysOnMarket: Nullable(Type.Integer({ description: 'Whole days since the listing date, counted at request time (UTC).' })),
};

export const ListingSummary = Type.Object(
  {
    ...summaryFields,
    distance: Type.Optional(
      Type.Integer({ description: 'Metres (great-circle) from the `near` point; present only when the search has one.' }),
    ),
  },
  { $id: 'ListingSummary' },
);

export const ListingDetail = Type.Object(
  {
    ...summaryFields,
    areaId: Nullable(Type.Integer({ description: 'Area id (extension: not in the interface spec).' })),
    buildingId: Nullable(Type.String({ description: 'Building id for /v1/building/{id} (extension).' })),
    listedAt: Nullable(Type.String({ format: 'date-time', description: 'When the listing went on the market, UTC (extension).' })),
    transitScore: Nullable(Type.Integer({ description: '0-100 from subway stations nearby (extension).' })),
    netEffective: Nullable(Type.Number({ description: 'Net effective rent, dollars a month (rentals).' })),
    monthsFree: NNum(),
    sqft: Nullable(Type.Number({ description: 'Floor area in square feet.' })),
    pricePerSqft: Nullable(Type.Number({ description: 'Dollars per square foot.' })),
    rooms: NNum(),
    leaseTerm: Nullable(Type.Number({ description: 'Lease term in months.' })),
    furnished: NBool(),
    availableAt: Nullable(Type.String({ format: 'date' })),
    saleType: Nullable(Type.String({ description: 'RESALE, SPONSOR_UNIT, FORECLOSURE (sales).' })),
    noFee: NBool(),
    petsAllowed: NBool(),
    amenities: Type.Array(Type.Object({ name: Type.String(), available: Type.Boolean() })),
    fees: Type.Array(Fee),
    contacts: Type.Array(Contact),
    photos: Type.Array(Type.String()),
    floorPlanKey: NStr(),
    has3dTour: NBool(),
    hasVideo: NBool(),
    priceHistory: Type.Array(PriceEvent),
    estimate: Nullable(
      Type.Integer({
        description:
          'What the listing should rent (a month) or sell for, dollars, from comparable active listings (extension; docs/estimates.md). ' +
          'GET /v1/property/{id}/estimate gives its interval and comparables. Null when the data are too thin.',
      }),
    ),
    pricePosition: Nullable(
      Type.Number({ description: 'Percent the price lies above (+) or below (-) the estimate, one decimal (extension).' }),
    ),
  },
  { $id: 'ListingDetail' },
);

export type Fee = Static<typeof Fee>;
export type Contact = Static<typeof Contact>;
export type PriceEvent = Static<typeof PriceEvent>;
export type ListingSummary = Static<typeof ListingSummary, WireRefs>;
export type ListingDetail = Static<typeof ListingDetail, WireRefs>;
