import { sql, type Kysely } from 'kysely';
import type { RecordedSaleRow, TaxLotRow } from '../domain/city-records.js';
import type { Database } from './schema.js';
import { applyRecordedSaleFilters, type RecordedSaleSearch } from './recorded-sale-filters.js';
import { keysetPages, PAGE_ROWS } from '../lib/keyset-pages.js';
import { turnTaker } from '../lib/stepwise.js';

/** What positioning reads of a recorded sale: its address. */
export const SALE_ADDRESS_COLUMNS = ['borough_id', 'bbl', 'block', 'address', 'zip_code'] as const;
/** What positioning sets on a recorded sale (`SalePositioner`): its position and its source, building, area and districts. */
export const SALE_PLACE_COLUMNS = [
  'latitude',
  'longitude',
  'position_source',
  'building_id',
  'area_id',
  'community_district',
  'police_precinct',
  'school_district',
] as const;
export type SaleAddress = Pick<RecordedSaleRow, (typeof SALE_ADDRESS_COLUMNS)[number]>;
export type SalePlace = Pick<RecordedSaleRow, (typeof SALE_PLACE_COLUMNS)[number]>;

/** Rows written a statement: both tables have under 30 columns, so this stays under SQLite's 32,766 bound values. */
const CHUNK = 500;

const SORT_COLUMNS = { saleDate: 'sale_date', salePrice: 'sale_price', pricePerSqft: 'price_per_sqft' } as const;

/** NYC Open Data's records in the mirror: recorded sales and tax lots (issue 30). */
export class CityRecordsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts or replaces recorded sales by id, in one transaction. */
  putRecordedSales(rows: RecordedSaleRow[]): Promise<void> {
    return this.upsert('recorded_sales', 'id', rows);
  }

  /** Inserts or replaces tax lots by BBL, in one transaction. */
  putTaxLots(rows: TaxLotRow[]): Promise<void> {
    return this.upsert('tax_lots', 'bbl', rows);
  }

  /** Inserts rows, replacing every other column of a row whose `key` is already stored, in chunks of one transaction. */
  private async upsert(table: 'recorded_sales' | 'tax_lots', key: 'id' | 'bbl', rows: (RecordedSaleRow | TaxLotRow)[]): Promise<void> {
    if (!rows.length) return;
    const columns = Object.keys(rows[0]).filter((c) => c !== key);
    await this.db.transaction().execute(async (trx) => {
      // On SQLite each statement runs on the event loop: requests get turns between chunks.
      const turn = turnTaker();
      for (let i = 0; i < rows.length; i += CHUNK) {
        if (i > 0) await turn();
        // The two tables' row types differ: Kysely cannot type a statement generic over both.
        // biome-ignore lint/suspicious/noExplicitAny: see above.
        await (trx as Kysely<any>)
          .insertInto(table as string)
          .values(rows.slice(i, i + CHUNK))
          .onConflict((oc) => oc.column(key).doUpdateSet((eb) => Object.fromEntries(columns.map((c) => [c, eb.ref(`excluded.${c}`)]))))
          .execute();
      }
    });
  }

  /** The latest SODA `:updated_at` stored in a table (UTC ISO 8601), or null when it is empty: the next incremental sync's watermark. */
  async watermark(table: 'recorded_sales' | 'tax_lots'): Promise<string | null> {
    const row = await this.db
      .selectFrom(table)
      .select((eb) => eb.fn.max('updated_at').as('at'))
      .executeTakeFirst();
    return (row?.at as string | null | undefined) ?? null;
  }

  async count(table: 'recorded_sales' | 'tax_lots'): Promise<number> {
    const row = await this.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Every tax lot's matching keys and position, for positioning recorded sales and matching buildings: read in pages by
   * BBL with turns between them (on SQLite a read runs on the event loop, and the city's 43,000 lots in one read held it).
   */
  async lotsForMatching(): Promise<
    Pick<TaxLotRow, 'bbl' | 'borough_id' | 'block' | 'address_key' | 'zip_code' | 'latitude' | 'longitude'>[]
  > {
    const lots: Pick<TaxLotRow, 'bbl' | 'borough_id' | 'block' | 'address_key' | 'zip_code' | 'latitude' | 'longitude'>[] = [];
    const pages = keysetPages(
      '',
      (after, size) =>
        this.db
          .selectFrom('tax_lots')
          .select(['bbl', 'borough_id', 'block', 'address_key', 'zip_code', 'latitude', 'longitude'])
          .where('bbl', '>', after)
          .orderBy('bbl')
          .limit(size)
          .execute(),
      (row) => row.bbl,
    );
    for await (const page of pages) lots.push(...page);
    return lots;
  }

  /**
   * Every recorded sale's address and current place, in keyset pages of {@link PAGE_ROWS} by id, for re-positioning
   * (the table is read a page at a time, {@link keysetPages}).
   */
  salesToPosition(): AsyncGenerator<({ id: string } & SaleAddress & SalePlace)[], void, void> {
    return keysetPages(
      '',
      (after, size) =>
        this.db
          .selectFrom('recorded_sales')
          .select(['id', ...SALE_ADDRESS_COLUMNS, ...SALE_PLACE_COLUMNS])
          .where('id', '>', after)
          .orderBy('id')
          .limit(size)
          .execute(),
      (row) => row.id,
    );
  }

  /** Sets the place (position, its source, building, area, districts) of recorded sales by id, in one transaction. */
  async setPlaces(places: ({ id: string } & SalePlace)[]): Promise<void> {
    if (!places.length) return;
    await this.db.transaction().execute(async (trx) => {
      // Turns for requests (see upsert).
      const turn = turnTaker();
      for (const [i, { id, ...place }] of places.entries()) {
        if (i > 0) await turn();
        await trx.updateTable('recorded_sales').set(place).where('id', '=', id).execute();
      }
    });
  }

  /** Sale prices (dollars) of a building's recorded sales with consideration. */
  async salePricesOfBuilding(buildingId: string): Promise<number[]> {
    const rows = await this.db
      .selectFrom('recorded_sales')
      .select('sale_price')
      .where('building_id', '=', buildingId)
      .where('no_consideration', '=', 0)
      .execute();
    return rows.map((r) => Number(r.sale_price));
  }

  /**
   * The facts the recorded sales matched to this building give (by address, {@link SalePositioner}): for each,
   * the latest sale's that knows it (DOF writes year 0 and units 0 for unknown, stored as null). Null fields when
   * no sale knows them.
   */
  async saleFactsOfBuilding(
    buildingId: string,
  ): Promise<{ yearBuilt: number | null; residentialUnits: number | null; buildingClass: string | null }> {
    const rows = await this.db
      .selectFrom('recorded_sales')
      .select(['year_built', 'residential_units', 'building_class'])
      .where('building_id', '=', buildingId)
      .orderBy('sale_date', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const latest = <T>(pick: (r: (typeof rows)[number]) => T | null) => rows.map(pick).find((v) => v !== null && v !== undefined) ?? null;
    return {
      yearBuilt: latest((r) => (r.year_built ? Number(r.year_built) : null)),
      residentialUnits: latest((r) => (r.residential_units ? Number(r.residential_units) : null)),
      buildingClass: latest((r) => r.building_class),
    };
  }

  /** The tax lots at an address key (domain/city-records.ts `addressKey`), by BBL: at most 100. */
  async lotsAtAddress(key: string): Promise<Pick<TaxLotRow, 'bbl' | 'borough_id' | 'address' | 'zip_code' | 'latitude' | 'longitude'>[]> {
    return this.db
      .selectFrom('tax_lots')
      .select(['bbl', 'borough_id', 'address', 'zip_code', 'latitude', 'longitude'])
      .where('address_key', '=', key)
      .orderBy('bbl')
      .limit(100)
      .execute();
  }

  /** The tax lot with this BBL, else the one at this address key and ZIP code, else undefined. */
  async findLot(bbl: string | null, key: string | null, zip: string | null): Promise<TaxLotRow | undefined> {
    if (bbl) {
      const byBbl = await this.db.selectFrom('tax_lots').selectAll().where('bbl', '=', bbl).executeTakeFirst();
      if (byBbl) return byBbl;
    }
    if (!key || !zip) return undefined;
    return this.db
      .selectFrom('tax_lots')
      .selectAll()
      .where('address_key', '=', key)
      .where('zip_code', '=', zip)
      .orderBy('bbl')
      .executeTakeFirst();
  }

  /** One page of recorded sales matching `q`, and how many match in all. */
  async search(q: RecordedSaleSearch): Promise<{ rows: RecordedSaleRow[]; total: number }> {
    const base = applyRecordedSaleFilters(this.db.selectFrom('recorded_sales'), q);
    const column = SORT_COLUMNS[q.sort];
    const direction = q.descending ? 'desc' : 'asc';
    const [{ n }, rows] = await Promise.all([
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      base
        .selectAll()
        // Unknown prices per square foot last in either direction; the id breaks ties so pages never overlap.
        .orderBy(sql`${sql.ref(column)} is null`)
        .orderBy(column, direction)
        .orderBy('id', direction)
        .limit(q.perPage)
        .offset((q.page - 1) * q.perPage)
        .execute(),
    ]);
    return { rows, total: Number(n) };
  }

  /**
   * Sales with consideration in a borough or in areas (ids with their descendants), dated `from` to `to`
   * inclusive: date, price and price per square foot, for monthly figures.
   */
  async salesForFigures(filter: {
    boroughIds?: number[];
    areaIds?: number[];
    from: string;
    to: string;
  }): Promise<{ sale_date: string; sale_price: number; price_per_sqft: number | null }[]> {
    // no_consideration = 0 implies a known price.
    let q = this.db
      .selectFrom('recorded_sales')
      .select(['sale_date', 'sale_price', 'price_per_sqft'])
      .where('no_consideration', '=', 0)
      .where('sale_date', '>=', filter.from)
      .where('sale_date', '<=', filter.to);
    if (filter.boroughIds?.length) q = q.where('borough_id', 'in', filter.boroughIds);
    if (filter.areaIds?.length) q = q.where('area_id', 'in', filter.areaIds);
    return (await q.execute()).map((r) => ({
      sale_date: r.sale_date,
      sale_price: Number(r.sale_price),
      price_per_sqft: r.price_per_sqft === null ? null : Number(r.price_per_sqft),
    }));
  }
}
