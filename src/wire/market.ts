import { Type, type Static } from 'typebox';

/**
 * Market figures of a set of active listings on the wire: prices in US dollars (rent a month, or asking
 * price), price per square foot in dollars, days on market in whole days.
 */
export const MarketFigures = Type.Object({
  activeCount: Type.Integer({ description: 'Active listings.' }),
  medianPrice: Type.Union([Type.Number(), Type.Null()], { description: 'Median price, dollars (rent a month, or asking price).' }),
  p25Price: Type.Union([Type.Number(), Type.Null()], { description: '25th percentile price, dollars.' }),
  p75Price: Type.Union([Type.Number(), Type.Null()], { description: '75th percentile price, dollars.' }),
  medianPricePerSqft: Type.Union([Type.Number(), Type.Null()], {
    description: 'Median dollars per square foot, over listings of known size.',
  }),
  medianDaysOnMarket: Type.Union([Type.Number(), Type.Null()], {
    description: 'Median whole days on market, over listings of known listing date.',
  }),
  byBedroom: Type.Array(
    Type.Object({ bedrooms: Type.String(), activeCount: Type.Integer(), medianPrice: Type.Union([Type.Number(), Type.Null()]) }),
    {
      description: 'Active listings by bedroom count (STUDIO, 1, 2, ..., UNKNOWN) with their median price.',
    },
  ),
});

export type MarketFigures = Static<typeof MarketFigures>;
