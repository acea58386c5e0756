import {
  Type,
  type Static,
  type TBoolean,
  type TInteger,
  type TNull,
  type TNumber,
  type TSchema,
  type TString,
  type TUnion,
  type TUnsafe,
} from 'typebox';

/**
 * Wire shapes shared by several answers. The `src/wire/` folder is the one definition of what the API
 * answers: TypeBox schemas (registered by `$id` as the OpenAPI document's components, and used to
 * serialize answers), with the TypeScript types derived from them by `Static<>`.
 */

/**
 * `schema` or null. A primitive becomes `type: [t, "null"]` (JSON Schema 2020-12 / OpenAPI 3.1), which
 * the response serializer handles far faster than `anyOf`; objects and references use `anyOf`.
 */
export function Nullable<T extends TString | TNumber | TInteger | TBoolean>(schema: T): TUnsafe<Static<T> | null>;
export function Nullable<T extends TSchema>(schema: T): TUnion<[T, TNull]>;
export function Nullable(schema: TSchema): TSchema {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string' && ['string', 'number', 'integer', 'boolean'].includes(type)) {
    return Type.Unsafe({ ...schema, type: [type, 'null'] });
  }
  return Type.Union([schema, Type.Null()]);
}

export const Address = Type.Object(
  {
    street: Nullable(Type.String()),
    unit: Nullable(Type.String()),
    city: Nullable(Type.String()),
    state: Nullable(Type.String()),
    zipCode: Nullable(Type.String()),
  },
  { $id: 'Address', description: 'Street address; any part may be unknown (null).' },
);

export const GeoPoint = Type.Object(
  { latitude: Type.Number(), longitude: Type.Number() },
  { $id: 'GeoPoint', description: 'WGS84 position in decimal degrees.' },
);

export type Address = Static<typeof Address>;
export type GeoPoint = Static<typeof GeoPoint>;

/** The schemas a `Type.Ref` may name, for `Static<T, WireRefs>` to resolve references. */
export type WireRefs = {
  Address: typeof Address;
  GeoPoint: typeof GeoPoint;
};
