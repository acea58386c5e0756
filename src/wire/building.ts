import { Type, type Static } from 'typebox';
import { Nullable, type WireRefs } from './common.js';

/** Buildings (spec 2.6) and areas (spec 2.7) on the wire. Prices in dollars; unknown values are null. */

const NInt = (options: { description?: string } = {}) => Nullable(Type.Integer(options));
const NStr = () => Nullable(Type.String());
const NBool = () => Nullable(Type.Boolean());

/** Units of one kind in a building, by bedroom count: counts, and prices in dollars. */
export const Inventory = Type.Object({
  activeCount: Type.Integer(),
  byBedroom: Type.Array(
    Type.Object({
      bedrooms: Type.String({ description: 'STUDIO, 1, 2, ... or UNKNOWN.' }),
      availableCount: Type.Integer(),
      minPrice: NInt(),
      maxPrice: NInt(),
      historicalCount: Type.Integer(),
      historicalMinPrice: NInt(),
      historicalMaxPrice: NInt(),
    }),
  ),
});

export const BuildingSchema = Type.Object(
  {
    id: Type.String(),
    name: NStr(),
    slug: Type.String(),
    type: NStr(),
    status: NStr(),
    yearBuilt: NInt(),
    floorCount: NInt(),
    unitCount: NInt(),
    address: Type.Ref('Address'),
    geoCenter: Nullable(Type.Ref('GeoPoint')),
    area: Nullable(
      Type.Object({
        id: Type.Integer(),
        name: Type.String(),
        slug: Type.String(),
        breadcrumbs: Type.Array(Type.Object({ name: Type.String(), url: Type.String() })),
      }),
    ),
    amenities: Type.Object({
      list: Type.Array(Type.String()),
      doormanTypes: Type.Array(Type.String()),
      parkingTypes: Type.Array(Type.String()),
      storageTypes: Type.Array(Type.String()),
    }),
    policies: Type.Object({
      list: Type.Array(Type.String()),
      petPolicy: Nullable(Type.Object({ catsAllowed: NBool(), dogsAllowed: NBool() })),
    }),
    additionalDetails: Type.Object({
      developer: NStr(),
      architect: NStr(),
      interiors: NStr(),
      manager: NStr(),
      owner: NStr(),
      website: NStr(),
    }),
    nycData: Nullable(
      Type.Object({
        communityDistrict: NInt({
          description:
            "Community district as PLUTO writes it: the borough's digit and the district (105: Manhattan 5). PLUTO's where its lot matches, else the district polygon holding the building; null in a joint-interest area (parks, airports).",
        }),
        councilDistrict: NInt({ description: 'City Council district (1-51, lines of 2023) holding the building.' }),
        policePrecinct: NInt({
          description: "NYPD precinct: PLUTO's where its lot matches, else the precinct polygon holding the building.",
        }),
        schoolDistrict: NInt({
          description: 'Extension member: the community school district (1-32) holding the building (DCP lines of 2013).',
        }),
        buildingClass: NStr(),
        buildingClassDescription: NStr(),
        hasAbatements: NBool(),
        hurricaneEvacuationZone: NStr(),
      }),
    ),
    photos: Type.Array(Type.String()),
    rentalInventory: Inventory,
    saleInventory: Inventory,
  },
  { $id: 'Building' },
);

export const AreaSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    level: Type.Integer({ description: '0 borough, 1 sub-borough, 2 neighbourhood.' }),
    parentId: Nullable(Type.Integer({ description: 'Parent area id; null for a borough.' })),
    slug: Type.String({ description: "The upstream site's own slug for the area." }),
    boundary: Type.Optional(
      Nullable(
        Type.Object(
          { type: Type.Literal('Polygon'), coordinates: Type.Array(Type.Array(Type.Array(Type.Number(), { minItems: 2, maxItems: 2 }))) },
          {
            description:
              "The area's outline as a GeoJSON Polygon ([longitude, latitude] positions), decoded from the site's own; present when asked (`include=boundary`, or one area by id).",
          },
        ),
      ),
    ),
  },
  { $id: 'Area' },
);

export type Inventory = Static<typeof Inventory>;
export type ByBedroom = Inventory['byBedroom'][number];
export type Building = Static<typeof BuildingSchema, WireRefs>;
