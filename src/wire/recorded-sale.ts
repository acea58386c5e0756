import { Type, type Static } from 'typebox';
import { Nullable, type WireRefs } from './common.js';

const NInt = () => Nullable(Type.Integer());
const NStr = () => Nullable(Type.String());

/**
 * One recorded sale (NYC Department of Finance rolling sales, via NYC Open Data) on the wire: dollars,
 * square feet, the sale's day (`YYYY-MM-DD`, New York). Unknown values are null.
 */
export const RecordedSaleSchema = Type.Object(
  {
    id: Type.String({ description: "NYC Open Data's row id (`:id`)." }),
    boroughId: Type.Integer({ description: 'Borough (area id 100 Manhattan, 200 Brooklyn, 300 Queens, 400 Bronx, 500 Staten Island).' }),
    bbl: NStr(),
    address: Type.Ref('Address'),
    neighborhood: Nullable(Type.String({ description: "DOF's neighbourhood name, as published (not an area of /v1/areas)." })),
    buildingClassCategory: Nullable(
      Type.String({ description: 'DOF building class category, e.g. `13 CONDOS - ELEVATOR APARTMENTS`; filter by its two digits.' }),
    ),
    buildingClass: Nullable(Type.String({ description: 'Building class at the time of sale (DOF code).' })),
    buildingClassDescription: NStr(),
    taxClass: NStr(),
    residentialUnits: NInt(),
    commercialUnits: NInt(),
    totalUnits: NInt(),
    landSquareFeet: NInt(),
    grossSquareFeet: Nullable(Type.Integer({ description: 'Null where DOF gives 0 or none (most condominium and co-op units).' })),
    yearBuilt: NInt(),
    salePrice: Nullable(Type.Integer({ description: 'Dollars; null where DOF gives none.' })),
    saleDate: Type.String({ format: 'date' }),
    pricePerSqft: Nullable(
      Type.Number({
        description: 'Sale price over gross square feet, dollars; null for a transfer without consideration or an unknown size.',
      }),
    ),
    noConsideration: Type.Boolean({
      description: 'A transfer without consideration (price under $10,000 or none): kept, and out of every figure.',
    }),
    geoPoint: Nullable(Type.Ref('GeoPoint')),
    positionSource: Nullable(
      Type.Union([Type.Literal('tax-lot'), Type.Literal('building')], {
        description: "`tax-lot`: PLUTO's lot; `building`: a mirrored building at the same address; null: no position.",
      }),
    ),
    areaId: Nullable(Type.Integer({ description: 'The deepest area of /v1/areas holding the position; null without one.' })),
    buildingId: Nullable(Type.String({ description: 'The mirrored building at the same address and ZIP code, if any.' })),
  },
  { $id: 'RecordedSale' },
);
export type RecordedSale = Static<typeof RecordedSaleSchema, WireRefs>;

/** Figures of recorded sales of one month (transfers without consideration left out); dollars. */
export const RecordedSalesMonth = Type.Object({
  month: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}$', description: 'YYYY-MM.' }),
  saleCount: Type.Integer(),
  medianPrice: Nullable(Type.Number()),
  medianPricePerSqft: Nullable(Type.Number({ description: 'Over sales of known gross square feet.' })),
});
export type RecordedSalesMonth = Static<typeof RecordedSalesMonth>;
