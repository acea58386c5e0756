/**
 * GraphQL documents the client sends, built from the fields ../shared/data/upstream-api.md grades
 * confirmed or seen in several clients, and only those the mirror uses. Inputs are written as literals
 * in the query text with bare enum tokens (the form the site accepts; JSON strings for enums in
 * `variables` are rejected). Fields the site has rejected (drift) are left out.
 */

/** A selection: field names, or `[name, sub-selection]` for an object field. */
export type Selection = (string | [string, Selection])[];

/** An enum token, written bare in a literal. */
export class EnumToken {
  constructor(readonly token: string) {}
}

/** A JavaScript value as a GraphQL input literal (strings quoted, {@link EnumToken}s bare). */
export function literal(value: unknown): string {
  if (value instanceof EnumToken) {
    if (!/^[A-Z_][A-Z0-9_]*$/.test(value.token)) throw new Error(`not an enum token: ${value.token}`);
    return value.token;
  }
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('a GraphQL literal number must be finite');
    return String(value);
  }
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${k}: ${literal(v)}`).join(', ')}}`;
}

/** The selection as GraphQL text, without the fields named in `dropped`; an object left empty goes too. */
export function render(selection: Selection, dropped: ReadonlySet<string>): string {
  const parts: string[] = [];
  for (const item of selection) {
    if (typeof item === 'string') {
      if (!dropped.has(item)) parts.push(item);
      continue;
    }
    const [name, sub] = item;
    if (dropped.has(name)) continue;
    const inner = render(sub, dropped);
    if (inner) parts.push(`${name} { ${inner} }`);
  }
  return parts.join(' ');
}

/** Search node fields the mirror reads: the confirmed ones, and several clients' where the mirror needs them. */
export const SEARCH_NODE: Selection = [
  'id',
  'areaName',
  'bedroomCount',
  'fullBathroomCount',
  'halfBathroomCount',
  'buildingType',
  ['geoPoint', ['latitude', 'longitude']],
  ['leadMedia', [['photo', ['key']]]],
  'price',
  'sourceGroupLabel',
  'status',
  'street',
  'unit',
  'urlPath',
  'tier',
  // seen in several clients
  'availableAt',
  'furnished',
  'hasTour3d',
  'hasVideos',
  'livingAreaSize',
  'monthsFree',
  'noFee',
  'netEffectivePrice',
  ['upcomingOpenHouse', ['startTime', 'endTime']],
];

const PROPERTY_DETAILS: Selection = [
  ['address', ['street', 'city', 'state', 'zipCode', 'unit']],
  'roomCount',
  'bedroomCount',
  'fullBathroomCount',
  'halfBathroomCount',
  'livingAreaSize',
  ['amenities', ['list', 'doormanTypes', 'parkingTypes', 'storageSpaceTypes']],
];
const DETAIL_COMMON: Selection = [
  'id',
  'status',
  'createdAt',
  'availableAt',
  'offMarketAt',
  'buildingId',
  'description',
  ['media', [['photos', ['key']], ['floorPlans', ['key']], 'tour3dUrl']],
  ['propertyDetails', PROPERTY_DETAILS],
  ['upcomingOpenHouses', ['startTime', 'endTime']],
];
/** `rentalByListingId` fields (three independent clients ask for them). */
export const RENTAL_DETAIL: Selection = [...DETAIL_COMMON, ['pricing', ['price', 'noFee', 'monthsFree', 'leaseTermMonths']]];
/** `saleByListingId` fields: pricing adds maintenance and taxes. */
export const SALE_DETAIL: Selection = [...DETAIL_COMMON, ['pricing', ['price', 'maintenanceFee', 'taxes']]];
/** `buildingByRentalListingId` / `buildingBySaleListingId` fields. */
export const BUILDING_DETAIL: Selection = [
  'id',
  'name',
  'type',
  'residentialUnitCount',
  'yearBuilt',
  'status',
  ['address', ['street', 'city', 'state', 'zipCode']],
  ['media', [['photos', ['key']]]],
  ['area', ['name']],
  ['policies', ['list', ['petPolicy', ['catsAllowed', 'dogsAllowed']]]],
];
export const AREAS: Selection = ['id', 'name', 'numericId', 'parentId', ['geometry', ['encodedBoundary']]];

const SEARCH_FIELD = { sale: 'searchSales', rental: 'searchRentals' } as const;
const EDGE = { sale: 'OrganicSaleEdge', rental: 'OrganicRentalEdge' } as const;

/**
 * A search with its input written as a literal. Only organic edges are selected: featured and sponsored
 * edges repeat organic nodes, and come back as empty objects.
 */
export function searchQuery(kind: 'sale' | 'rental', input: Record<string, unknown>, dropped: ReadonlySet<string>): string {
  return `query { result: ${SEARCH_FIELD[kind]}(input: ${literal(input)}) { totalCount edges { ... on ${EDGE[kind]} { node { ${render(SEARCH_NODE, dropped)} } } } } }`;
}

/** Many listing details in one request, aliased `l0`, `l1`, ... in the order of `ids`. */
export function detailsQuery(kind: 'sale' | 'rental', ids: string[], dropped: ReadonlySet<string>): string {
  const field = kind === 'sale' ? 'saleByListingId' : 'rentalByListingId';
  const fields = render(kind === 'sale' ? SALE_DETAIL : RENTAL_DETAIL, dropped);
  return `query { ${ids.map((id, i) => `l${i}: ${field}(id: ${literal(id)}) { ${fields} }`).join(' ')} }`;
}

/** The buildings of many listings in one request, aliased `b0`, `b1`, ... in the order of `ids`. */
export function buildingsQuery(kind: 'sale' | 'rental', ids: string[], dropped: ReadonlySet<string>): string {
  const field = kind === 'sale' ? 'buildingBySaleListingId' : 'buildingByRentalListingId';
  const fields = render(BUILDING_DETAIL, dropped);
  return `query { ${ids.map((id, i) => `b${i}: ${field}(id: ${literal(id)}) { ${fields} }`).join(' ')} }`;
}

export function areasQuery(dropped: ReadonlySet<string>): string {
  return `query { areas { ${render(AREAS, dropped)} } }`;
}
