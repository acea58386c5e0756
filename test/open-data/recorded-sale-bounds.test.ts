import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedSaleRow } from '../../src/domain/city-records.js';
import { RECORDED_SALE_FILTER_NAMES, type RecordedSaleFilterName, type RecordedSaleSearch } from '../../src/store/recorded-sale-filters.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';

// Every row of the table of recorded sales filters (src/store/recorded-sale-filters.ts) at its bounds (issue 66): a
// bound exactly at a sale's value, and the store's SQL and a plain reference filter written here keep the same sales.
// The test reads the table: a filter without cases here fails, and so does one no sale of the data holds a value for.
let rt: TestRuntime;
let sales: RecordedSaleRow[];

beforeAll(async () => {
  // The whole city's template holds NYC Open Data's recorded sales.
  rt = await startTestRuntime({}, { initialSync: false });
  sales = (await rt.store.db.selectFrom('recorded_sales').selectAll().execute()) as RecordedSaleRow[];
}, 180_000);
afterAll(async () => rt?.close());

const METRES_PER_DEGREE = 111_320;

/** A value some sale holds in `pick` (about the middle of them), or fails naming it. */
function held<T>(pick: (s: RecordedSaleRow) => T | null | undefined, what: string): { value: T; sale: RecordedSaleRow } {
  const candidates = sales.filter((s) => pick(s) !== null && pick(s) !== undefined);
  if (!candidates.length) throw new Error(`no recorded sale of the data holds ${what}: a filter on it would prove nothing`);
  candidates.sort((a, b) => (String(pick(a)) < String(pick(b)) ? -1 : 1));
  const sale = candidates[Math.floor(candidates.length / 2)];
  return { value: pick(sale) as T, sale };
}

interface Case {
  label: string;
  set: Partial<RecordedSaleSearch>;
  keeps: (s: RecordedSaleRow) => boolean;
}

const oneOf =
  (column: 'borough_id' | 'area_id' | 'community_district' | 'police_precinct' | 'school_district', name: RecordedSaleFilterName) =>
  (): Case[] => {
    const { value } = held((s) => s[column], column);
    return [
      { label: `${value}`, set: { [name]: [value] }, keeps: (s) => s[column] === value },
      // An empty list: no borough or area narrows nothing; no district matches nothing.
      { label: 'none', set: { [name]: [] }, keeps: () => name === 'boroughIds' || name === 'areaIds' },
    ];
  };

/** The cases of each filter, typed by the table's names (a filter added without cases does not compile). */
const CASES: { [K in RecordedSaleFilterName]: () => Case[] } = {
  boroughIds: oneOf('borough_id', 'boroughIds'),
  areaIds: oneOf('area_id', 'areaIds'),
  communityDistrict: oneOf('community_district', 'communityDistrict'),
  policePrecinct: oneOf('police_precinct', 'policePrecinct'),
  schoolDistrict: oneOf('school_district', 'schoolDistrict'),
  from: () => {
    const { value } = held((s) => s.sale_date, 'a sale date');
    return [{ label: value, set: { from: value }, keeps: (s) => s.sale_date >= value }];
  },
  to: () => {
    const { value } = held((s) => s.sale_date, 'a sale date');
    return [{ label: value, set: { to: value }, keeps: (s) => s.sale_date <= value }];
  },
  minPrice: () => {
    const { value } = held((s) => s.sale_price, 'a price');
    return [{ label: `${value}`, set: { minPrice: value }, keeps: (s) => s.sale_price !== null && s.sale_price >= value }];
  },
  maxPrice: () => {
    const { value } = held((s) => s.sale_price, 'a price');
    return [{ label: `${value}`, set: { maxPrice: value }, keeps: (s) => s.sale_price !== null && s.sale_price <= value }];
  },
  categories: () => {
    const { value } = held((s) => s.building_class_category?.slice(0, 2), 'a building class category');
    return [{ label: value, set: { categories: [value] }, keeps: (s) => s.building_class_category?.startsWith(`${value} `) ?? false }];
  },
  bbl: () => {
    const { value } = held((s) => s.bbl, 'a BBL');
    return [{ label: value, set: { bbl: value }, keeps: (s) => s.bbl === value }];
  },
  buildingId: () => {
    const { value } = held((s) => s.building_id, 'a building');
    return [{ label: value, set: { buildingId: value }, keeps: (s) => s.building_id === value }];
  },
  noConsideration: () => {
    held((s) => (s.no_consideration === 1 ? 1 : null), 'a transfer without consideration');
    return [true, false].map((yes) => ({
      label: `${yes}`,
      set: { noConsideration: yes },
      keeps: (s: RecordedSaleRow) => s.no_consideration === (yes ? 1 : 0),
    }));
  },
  bbox: () => {
    // A box whose every edge passes through a sale: edges are inside.
    const placed = sales.filter((s) => s.latitude !== null).slice(0, 500);
    const box: [number, number, number, number] = [
      Math.min(...placed.map((s) => s.longitude!)),
      Math.min(...placed.map((s) => s.latitude!)),
      Math.max(...placed.map((s) => s.longitude!)),
      Math.max(...placed.map((s) => s.latitude!)),
    ];
    return [
      {
        label: box.join(','),
        set: { bbox: box },
        keeps: (s) =>
          s.latitude !== null && s.longitude! >= box[0] && s.latitude >= box[1] && s.longitude! <= box[2] && s.latitude <= box[3],
      },
    ];
  },
  near: () => {
    // The radius is another sale's distance from the centre, by the filter's own projection: that sale is on the circle.
    const { sale: centre } = held((s) => s.latitude, 'a position');
    const lonScale = Math.cos((centre.latitude! * Math.PI) / 180);
    const squared = (s: RecordedSaleRow) =>
      (s.latitude! - centre.latitude!) * (s.latitude! - centre.latitude!) +
      (s.longitude! - centre.longitude!) * lonScale * ((s.longitude! - centre.longitude!) * lonScale);
    const placed = sales.filter((s) => s.latitude !== null && s.id !== centre.id).sort((a, b) => squared(a) - squared(b));
    const edge = placed[Math.min(200, placed.length - 1)];
    const radius = Math.sqrt(squared(edge)) * METRES_PER_DEGREE;
    const near = { latitude: centre.latitude!, longitude: centre.longitude!, radius };
    const dLat = radius / METRES_PER_DEGREE;
    const dLon = dLat / lonScale;
    return [
      {
        label: `${radius} m`,
        set: { near },
        keeps: (s) =>
          s.latitude !== null &&
          s.latitude >= near.latitude - dLat &&
          s.latitude <= near.latitude + dLat &&
          s.longitude! >= near.longitude - dLon &&
          s.longitude! <= near.longitude + dLon &&
          squared(s) <= dLat * dLat,
      },
    ];
  },
};

describe('every recorded sales filter at its bounds', () => {
  it('has its cases here: a filter added to the table cannot be left out', () => {
    expect(Object.keys(CASES).sort()).toEqual([...RECORDED_SALE_FILTER_NAMES].sort());
  });

  it.each(RECORDED_SALE_FILTER_NAMES.map((name) => [name]))('%s: the SQL and the reference filter keep the same sales', async (name) => {
    let kept = 0;
    const tried: string[] = [];
    for (const c of CASES[name]()) {
      const search = { sort: 'saleDate', descending: false, page: 1, perPage: 1_000_000, ...c.set } as RecordedSaleSearch;
      const found = await rt.cityRecords.search(search);
      const expected = sales
        .filter(c.keeps)
        .map((s) => s.id)
        .sort();
      expect({ case: c.label, total: found.total, ids: found.rows.map((r) => r.id).sort() }).toEqual({
        case: c.label,
        total: expected.length,
        ids: expected,
      });
      kept += expected.length;
      tried.push(`${c.label} (${expected.length})`);
    }
    // The bounds tried, and how many sales each kept.
    console.log(`bounds of ${name}: ${tried.join('; ')}`);
    expect(kept).toBeGreaterThan(0);
  });
});
