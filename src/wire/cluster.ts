import { Type, type Static } from 'typebox';

/**
 * One cell of a map's grid with the listings of a search in it (`/v1/search/{kind}/clusters`): how many, the
 * centroid of their positions (WGS84 degrees), their price range (dollars, a month for rentals) and the cell's
 * bounds `[minLon, minLat, maxLon, maxLat]`.
 */
export const ListingClusterSchema = Type.Object(
  {
    count: Type.Integer({ minimum: 1, description: 'Matching listings in the cell.' }),
    latitude: Type.Number({
      description: 'Centroid of their positions: the mean of their latitudes, each taken to a millionth of a degree, to a millionth.',
    }),
    longitude: Type.Number({
      description: 'Centroid of their positions: the mean of their longitudes, each taken to a millionth of a degree, to a millionth.',
    }),
    minPrice: Type.Integer({ description: 'Lowest price in the cell, dollars (a month for rentals).' }),
    maxPrice: Type.Integer({ description: 'Highest price in the cell, dollars (a month for rentals).' }),
    cell: Type.Array(Type.Number(), {
      minItems: 4,
      maxItems: 4,
      description: "The cell's bounds: `[minLon, minLat, maxLon, maxLat]`, WGS84 degrees.",
    }),
  },
  { $id: 'ListingCluster' },
);
export type ListingCluster = Static<typeof ListingClusterSchema>;
