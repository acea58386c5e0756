import { Type, type Static } from 'typebox';
import { Nullable, type WireRefs } from './common.js';

/**
 * An estimate of what a property is worth on the wire (docs/estimates.md): dollars (a month's rent for a rental, the
 * price for a sale), distances in metres, square feet, instants in UTC.
 */

export const EstimateComparable = Type.Object(
  {
    id: Type.String({ description: 'The listing id (the lowest, when the same property is listed more than once).' }),
    listingCount: Type.Integer({ description: 'How many listings are this one property (the same point, layout and price).' }),
    geoPoint: Type.Ref('GeoPoint'),
    bedroomCount: Nullable(Type.Integer()),
    bathrooms: Nullable(Type.Number({ description: 'Full bathrooms plus a half for each half bath.' })),
    sqft: Nullable(Type.Integer({ description: 'Square feet.' })),
    buildingType: Nullable(Type.String()),
    distance: Type.Integer({ description: 'Metres from the property estimated (great-circle).' }),
    similarity: Type.Number({ description: "0-100: the comparable's weight in the estimate, 100 for the weightiest." }),
    price: Type.Integer({ description: "The comparable's own price, dollars." }),
    adjustedPrice: Type.Integer({ description: 'Its price adjusted to the property estimated: price + size + layout + time.' }),
    adjustments: Type.Object(
      {
        size: Type.Integer({ description: 'Dollars for the difference in size (price per square foot times the size estimated).' }),
        layout: Type.Integer({ description: 'Dollars for the difference in bedrooms and bathrooms.' }),
        time: Type.Integer({ description: 'Dollars for the time between its price and now (0: an active listing is priced now).' }),
      },
      { description: 'What was added to the price, dollars.' },
    ),
  },
  {
    $id: 'EstimateComparable',
    description: 'A comparable property used by an estimate, with its price as adjusted to the property estimated.',
  },
);

export const Estimate = Type.Object(
  {
    kind: Type.Enum(['rental', 'sale']),
    estimate: Nullable(
      Type.Integer({
        description: "Dollars: a month's rent for a rental, the price for a sale; null when the data are too thin (see reason).",
      }),
    ),
    low: Nullable(Type.Integer({ description: 'The low end of the 80 % interval, dollars.' })),
    high: Nullable(Type.Integer({ description: 'The high end of the 80 % interval, dollars.' })),
    confidence: Nullable(
      Type.Enum(['high', 'medium', 'low'], {
        description:
          'high: interval at most 20 % of the estimate wide and 8 or more comparables; medium: at most 50 % and 5 or more; low otherwise.',
      }),
    ),
    pricePosition: Nullable(
      Type.Number({
        description:
          'Percent the asking price lies above (+) or below (-) the estimate, one decimal; null for a property not listed or without an estimate.',
      }),
    ),
    reason: Nullable(Type.String({ description: 'Why there is no estimate; null when there is one.' })),
    method: Type.Enum(['same-layout-weighted-median', 'price-per-sqft-weighted-median'], {
      description: 'How the comparables were combined (docs/estimates.md).',
    }),
    radius: Type.Integer({ description: 'Metres within which comparables were taken.' }),
    asOf: Type.String({ format: 'date-time', description: 'When the comparables were read from the mirror (UTC).' }),
    comparables: Type.Array(Type.Ref('EstimateComparable'), { description: 'The comparables used, weightiest first.' }),
    place: Nullable(
      Type.Object(
        {
          bbl: Type.String({ description: "The tax lot's borough, block and lot (10 digits)." }),
          address: Nullable(Type.String({ description: "The lot's address as the city writes it." })),
          geoPoint: Type.Ref('GeoPoint'),
        },
        { description: 'For `address=`: the tax lot (PLUTO) the address was found at, whose position was estimated.' },
      ),
    ),
  },
  {
    $id: 'Estimate',
    description: 'What a property is worth, estimated from comparable properties, with an 80 % interval (docs/estimates.md).',
  },
);

export type EstimateComparable = Static<typeof EstimateComparable, WireRefs>;
export type Estimate = Static<typeof Estimate, WireRefs & { EstimateComparable: typeof EstimateComparable }>;
