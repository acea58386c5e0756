import { stringify } from 'csv-stringify';
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { ListingSummary } from '../wire/listing.js';

/** The answer formats of a search: the `{data, meta}` envelope, a GeoJSON FeatureCollection, or CSV. */
export type SearchFormat = 'json' | 'geojson' | 'csv';

/**
 * The format a search answers in: `format=` when given, else the first of `application/geo+json` and
 * `text/csv` the `Accept` header names, else JSON.
 */
export function searchFormat(format: string | undefined, accept: string | undefined): SearchFormat {
  if (format === 'geojson' || format === 'csv' || format === 'json') return format;
  const wanted = (accept ?? '').toLowerCase();
  if (wanted.includes('application/geo+json')) return 'geojson';
  if (wanted.includes('text/csv')) return 'csv';
  return 'json';
}

/** A page of listings as a GeoJSON FeatureCollection: a Point a listing (null without a position), the summary as properties, `meta` as a foreign member. */
export function toFeatureCollection<T extends { id: string; geoPoint: { latitude: number; longitude: number } | null }>(
  items: T[],
  meta: unknown,
) {
  return {
    type: 'FeatureCollection' as const,
    features: items.map(({ geoPoint, ...properties }) => ({
      type: 'Feature' as const,
      id: properties.id,
      geometry: geoPoint ? { type: 'Point' as const, coordinates: [geoPoint.longitude, geoPoint.latitude] } : null,
      properties,
    })),
    meta,
  };
}

/** The CSV columns of a listing summary, flattened: address and position parts get their own column. */
export const CSV_COLUMNS = [
  'id',
  'street',
  'unit',
  'city',
  'state',
  'zipCode',
  'price',
  'bedroomCount',
  'fullBathroomCount',
  'halfBathroomCount',
  'buildingType',
  'areaName',
  'status',
  'latitude',
  'longitude',
  'leadPhotoKey',
  'sourceGroupLabel',
  'urlPath',
  'tier',
  'daysOnMarket',
  'distance',
] as const;

/** A page of listings as CSV (RFC 4180, header row first), streamed row by row (csv-stringify). Unknown values are empty. */
export function toCsv(items: ListingSummary[]): Readable {
  const stream = stringify({ header: true, columns: [...CSV_COLUMNS] });
  for (const l of items) {
    stream.write({
      ...l,
      street: l.address.street,
      unit: l.address.unit,
      city: l.address.city,
      state: l.address.state,
      zipCode: l.address.zipCode,
      latitude: l.geoPoint?.latitude ?? null,
      longitude: l.geoPoint?.longitude ?? null,
    });
  }
  stream.end();
  return stream;
}

/** The GeoJSON answer's schema (RFC 7946 FeatureCollection of Points, with `meta`). */
export const FeatureCollectionSchema = Type.Object(
  {
    type: Type.Literal('FeatureCollection'),
    features: Type.Array(
      Type.Object({
        type: Type.Literal('Feature'),
        id: Type.String(),
        geometry: Type.Union([
          Type.Object({ type: Type.Literal('Point'), coordinates: Type.Array(Type.Number(), { minItems: 2, maxItems: 2 }) }),
          Type.Null(),
        ]),
        properties: Type.Object(
          {},
          { additionalProperties: true, description: 'The item (listing summary, recorded sale) without `geoPoint`.' },
        ),
      }),
    ),
    meta: Type.Ref('ListMeta'),
  },
  { description: 'format=geojson or Accept: application/geo+json: the page as a GeoJSON FeatureCollection; paging in `meta`.' },
);
