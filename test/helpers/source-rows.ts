import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { decodePolyline, inRings } from './geometry.js';
import { SHARED_DATA } from './paths.js';

/**
 * Source rows read here in the tests, independently of the dataset builders, with the rules docs/data.md
 * states applied again in this file: what the mirror should hold, to compute expectations from.
 */

/** Rows of a shared CSV file. */
export function csvRows(relative: string): Record<string, string>[] {
  return parse(readFileSync(join(SHARED_DATA, relative), 'utf8'), { columns: true, trim: true }) as Record<string, string>[];
}

type Rings = number[][][];
type Box = [number, number, number, number];
let boroughPolygons: Map<string, { rings: Rings; box: Box }[]> | undefined;
const boroughByPoint = new Map<string, string | undefined>();

/** [west, south, east, north] of rings of [lon, lat] positions. */
function boxOf(rings: Rings): Box {
  const box: Box = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [lon, lat] of rings.flat())
    [box[0], box[1], box[2], box[3]] = [Math.min(box[0], lon), Math.min(box[1], lat), Math.max(box[2], lon), Math.max(box[3], lat)];
  return box;
}
const inBox = (b: Box, lon: number, lat: number) => lon >= b[0] && lon <= b[2] && lat >= b[1] && lat <= b[3];

/** The borough (by name) whose 2010 NTA polygons hold the point, or undefined. */
export function boroughAt(longitude: number, latitude: number): string | undefined {
  if (!boroughPolygons) {
    const nta = JSON.parse(readFileSync(join(SHARED_DATA, 'nta', 'nta-2010.geojson'), 'utf8')) as {
      features: { properties: { BoroName: string }; geometry: { type: string; coordinates: Rings | Rings[] } }[];
    };
    boroughPolygons = new Map();
    for (const f of nta.features) {
      const parts = f.geometry.type === 'Polygon' ? [f.geometry.coordinates as Rings] : (f.geometry.coordinates as Rings[]);
      boroughPolygons.set(f.properties.BoroName, [
        ...(boroughPolygons.get(f.properties.BoroName) ?? []),
        ...parts.map((rings) => ({ rings, box: boxOf(rings) })),
      ]);
    }
  }
  const key = `${longitude},${latitude}`;
  if (boroughByPoint.has(key)) return boroughByPoint.get(key);
  let found: string | undefined;
  for (const [name, polygons] of boroughPolygons) {
    if (polygons.some((p) => inBox(p.box, longitude, latitude) && inRings(p.rings, longitude, latitude))) {
      found = name;
      break;
    }
  }
  boroughByPoint.set(key, found);
  return found;
}

const UPSTREAM_BOROUGH: Record<string, number> = { Manhattan: 100, Bronx: 200, Brooklyn: 300, Queens: 400, 'Staten Island': 500 };
let outlines: { id: number; borough: number; depth: number; rings: Rings; box: Box }[] | undefined;
const areaByPoint = new Map<string, number>();

/** The site's id (upstream numbering) of the deepest area of `borough` whose outline holds the point, else the borough's. */
export function areaAt(borough: string, longitude: number, latitude: number): number {
  if (!outlines) {
    const parents = upstreamParents();
    outlines = [];
    for (const a of siteAreas() as { numericId: number; geometry?: { encodedBoundary?: string } }[]) {
      const chain: number[] = [];
      for (let c: number | null | undefined = a.numericId; c; c = parents.get(c)) chain.push(c);
      const top = chain.find((c) => Object.values(UPSTREAM_BOROUGH).includes(c));
      if (!top || !a.geometry?.encodedBoundary) continue;
      const rings = [decodePolyline(a.geometry.encodedBoundary)];
      outlines.push({ id: a.numericId, borough: top, depth: chain.indexOf(top), rings, box: boxOf(rings) });
    }
  }
  const key = `${borough},${longitude},${latitude}`;
  const known = areaByPoint.get(key);
  if (known !== undefined) return known;
  let best: { id: number; depth: number } | undefined;
  for (const o of outlines) {
    if (o.borough !== UPSTREAM_BOROUGH[borough] || (best && o.depth <= best.depth)) continue;
    if (inBox(o.box, longitude, latitude) && inRings(o.rings, longitude, latitude)) best = o;
  }
  const id = best?.id ?? UPSTREAM_BOROUGH[borough];
  areaByPoint.set(key, id);
  return id;
}

/**
 * A rental as the mirror should hold it, in the StreetEasy sample's columns: the sample's rows as they
 * are, and RentHop's mapped into them (`rental_id` 7,000,000 + row index, `rent` its price, `area_id`
 * the deepest outline holding it; no size, fee, amenities, neighbourhood or building age: ''). `source` says which; RentHop rows keep their
 * position (`latitude`, `longitude`, 4 decimals).
 */
export type RentalRow = Record<string, string> & { source: 'streeteasy' | 'renthop' };

let rentals: RentalRow[] | undefined;

/** The StreetEasy sample's rows, then every RentHop row on a borough's land with a rent of $500 to $50,000. */
export function rentalRows(): RentalRow[] {
  rentals ??= [...csvRows('streeteasy-2016/rentals.csv').map((r) => ({ ...r, source: 'streeteasy' as const })), ...rentHopRows()];
  return rentals;
}

function rentHopRows(): RentalRow[] {
  const out: RentalRow[] = [];
  csvRows('renthop-2016/rent.csv').forEach((r, index) => {
    const rent = Number(r.price);
    if (rent < 500 || rent > 50_000) return;
    const [latitude, longitude] = [Math.round(Number(r.latitude) * 1e4) / 1e4, Math.round(Number(r.longitude) * 1e4) / 1e4];
    const borough = boroughAt(longitude, latitude);
    if (!borough) return;
    out.push({
      source: 'renthop',
      rental_id: String(7_000_000 + index),
      rent: r.price,
      bedrooms: r.bedrooms,
      bathrooms: r.bathrooms,
      size_sqft: '',
      no_fee: '',
      has_doorman: '',
      has_elevator: '',
      has_gym: '',
      has_roofdeck: '',
      has_washer_dryer: '',
      has_dishwasher: '',
      has_patio: '',
      building_age_yrs: '',
      neighborhood: '',
      area_id: String(areaAt(borough, longitude, latitude)),
      borough,
      latitude: String(latitude),
      longitude: String(longitude),
    });
  });
  return out;
}

/** A NY-House for-sale listing as the mirror should hold it (docs/data.md), with the file's row index. */
export interface SaleRow {
  index: number;
  id: string;
  price: number;
  /** Null for land (the publisher's 3). */
  bedrooms: number | null;
  /** Whole bathrooms; null for the publisher's filled mean. */
  fullBaths: number | null;
  /** Square feet; null for the publisher's filled mean. */
  sqft: number | null;
  type: string;
  broker: string;
  borough: string;
  /** The site's area id (upstream numbering): the deepest outline holding the point. */
  areaId: number;
  inContract: boolean;
  latitude: number;
  longitude: number;
}

let sales: SaleRow[] | undefined;

/** Every NY-House row once (exact copies dropped), without the 2,147,483,647 sentinel: active and in contract. */
export function allSaleRows(): SaleRow[] {
  if (sales) return sales;
  const seen = new Set<string>();
  sales = [];
  csvRows('ny-house-market/NY-House-Dataset.csv').forEach((r, index) => {
    const key = JSON.stringify(r);
    if (seen.has(key) || r.PRICE === '2147483647') return;
    seen.add(key);
    const [latitude, longitude] = [Number(r.LATITUDE), Number(r.LONGITUDE)];
    const borough = boroughAt(longitude, latitude)!;
    sales!.push({
      index,
      id: String(8_000_000 + index),
      price: Number(r.PRICE),
      bedrooms: r.TYPE === 'Land for sale' ? null : Number(r.BEDS),
      fullBaths: r.BATH === '2.3738608579684373' ? null : Math.floor(Number(r.BATH)),
      sqft: r.PROPERTYSQFT === '2184.207862' ? null : Number(r.PROPERTYSQFT),
      type: r.TYPE,
      broker: r.BROKERTITLE,
      borough,
      areaId: areaAt(borough, longitude, latitude),
      inContract: r.TYPE === 'Pending' || r.TYPE === 'Contingent',
      latitude,
      longitude,
    });
  });
  return sales;
}

/** The sales an active search finds: every sale of {@link allSaleRows} not in contract. */
export function saleRows(): SaleRow[] {
  return allSaleRows().filter((s) => !s.inContract);
}

/** The site's real area list (`streeteasy-areas/areas.json`): numeric id, name, slug, parent. */
export function siteAreas(): { id: string; name: string; numericId: number; parentId: number | null }[] {
  return JSON.parse(readFileSync(join(SHARED_DATA, 'streeteasy-areas', 'areas.json'), 'utf8'));
}

/** The upstream area tree (the site's numbering), as parent links. */
export function upstreamParents(): Map<number, number | null> {
  return new Map(siteAreas().map((r) => [r.numericId, r.parentId]));
}
