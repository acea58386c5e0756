import type { SearchAfter } from './listing-search.js';
import { INDEXED_SORTS, SORTS, type IndexedSort, type SortColumn } from './sorts.js';
import { idAt, valueAt, type ListingColumns } from './listing-columns.js';
import { numberRanks } from './row-order.js';
import { compareText } from './text-ranks.js';
import { codesFor, Decimals, type Codes } from '../lib/narrow-arrays.js';
import { runNow, type Steps } from '../lib/stepwise.js';

export type Direction = 'ASC' | 'DESC';

/** Positions of an order as a stretch of its array: `array[i]` for `count` values of i from `start`, by `step`. */
export interface OrderStretch {
  start: number;
  step: 1 | -1;
  count: number;
}

/**
 * Every listing's row in one order, position 0 first. An order by one sort key stored once serves both directions:
 * the descending order is the ascending one read backwards, its listings with the key (the first `known`) and those
 * without it (last in either direction, as NULLS LAST) each read backwards, since the id breaks ties in the direction
 * asked. Four bytes a listing for each order saved (3.5 MiB at a million rentals).
 */
export class RowOrder {
  readonly length: number;

  /**
   * @param array the rows in the ascending order (or in the order itself, not `backwards`).
   * @param known how many of them come before those without the key.
   */
  constructor(
    private readonly array: Int32Array,
    private readonly backwards: boolean,
    private readonly known: number,
  ) {
    this.length = array.length;
  }

  /** The row at position `p`. */
  at(p: number): number {
    if (!this.backwards) return this.array[p];
    return p < this.known ? this.array[this.known - 1 - p] : this.array[this.length - 1 - (p - this.known)];
  }

  /** Positions `from` to `to - 1` as stretches of the array, in order ({@link OrderStretch}); read with {@link rowOf}. */
  stretches(from: number, to: number): OrderStretch[] {
    if (!this.backwards) return [{ start: from, step: 1, count: Math.max(0, to - from) }];
    const split = Math.min(Math.max(from, this.known), to);
    return [
      { start: this.known - 1 - from, step: -1, count: Math.max(0, split - from) },
      { start: this.length - 1 - (split - this.known), step: -1, count: Math.max(0, to - split) },
    ];
  }

  /** The row at index `i` of the array (of a stretch). */
  rowOf(i: number): number {
    return this.array[i];
  }
}

/** A sort key column's values as ranks: 0 to `count - 1` for the distinct known values ascending, `count` for null. */
interface KeyRanks {
  ranks: Codes;
  count: number;
}

/**
 * The listings of one kind in each order a search may ask (the table of sorts, both directions): the order the
 * store's ORDER BY gives (each key in the direction asked with unknown values last, then the id in the same
 * direction), as rows. Each listing's place in an order is one number, its sort key: the keys' ranks and
 * then the id's, mixed into a whole number below 2^53, so that a native sort of numbers orders the listings,
 * and a few matches are ordered the same way without the whole order.
 */
export class SortedOrders {
  private readonly keyRanks = new Map<SortColumn, KeyRanks>();
  private readonly orders = new Map<string, RowOrder>();
  private readonly idRanks: Codes;
  private readonly rowByIdRank: Int32Array;

  private constructor(private readonly columns: ListingColumns) {
    this.idRanks = columns.texts.id.ranks;
    this.rowByIdRank = new Int32Array(columns.size);
    for (let rowId = 0; rowId < columns.size; rowId++) this.rowByIdRank[this.idRanks[rowId]] = rowId;
  }

  /** The orders of `columns`, made at once. */
  static of(columns: ListingColumns): SortedOrders {
    return runNow(SortedOrders.making(columns));
  }

  /** The orders of `columns`, made in steps: a pause after each sort key's ranks and each order ({@link Steps}). */
  static *making(columns: ListingColumns): Steps<SortedOrders> {
    const orders = new SortedOrders(columns);
    for (const sort of INDEXED_SORTS) {
      let largest = columns.size;
      for (const { column } of SORTS[sort].keyset) {
        if (!orders.keyRanks.has(column)) {
          orders.keyRanks.set(column, orders.ranksOf(column));
          yield;
        }
        largest *= orders.keyRanks.get(column)!.count + 1;
      }
      // Past 2^53 two sort keys could round to one number (some tens of millions of listings).
      if (largest > Number.MAX_SAFE_INTEGER) throw new Error(`too many listings to order by ${sort} in memory: ${columns.size}`);
    }
    for (const sort of INDEXED_SORTS) {
      // One key: the descending order is the ascending one read backwards ({@link RowOrder}). More than one (the
      // recommended order's score, then its listing date, which may be unknown within one score): an order each way.
      const keyset = SORTS[sort].keyset;
      const { ranks, count } = orders.keyRanks.get(keyset[0].column)!;
      let known = 0;
      for (let rowId = 0; rowId < columns.size; rowId++) known += +(ranks[rowId] < count);
      const ascending = yield* orders.sorted(sort, 'ASC');
      orders.orders.set(`${sort} ASC`, new RowOrder(ascending, false, known));
      orders.orders.set(
        `${sort} DESC`,
        keyset.length === 1 ? new RowOrder(ascending, true, known) : new RowOrder(yield* orders.sorted(sort, 'DESC'), false, columns.size),
      );
    }
    return orders;
  }

  /** Every listing's row in the order `sort`, `dir`, by sorting their sort keys: three steps. */
  private *sorted(sort: IndexedSort, dir: Direction): Steps<Int32Array> {
    const keys = new Float64Array(this.columns.size);
    for (let rowId = 0; rowId < this.columns.size; rowId++) keys[rowId] = this.sortKey(sort, dir, rowId);
    yield;
    keys.sort();
    yield;
    const rowIds = new Int32Array(keys.length);
    for (let p = 0; p < keys.length; p++) rowIds[p] = this.rowOfKey(dir, keys[p]);
    yield;
    return rowIds;
  }

  /** Every listing's row in the order `sort`, `dir`. */
  order(sort: IndexedSort, dir: Direction): RowOrder {
    return this.orders.get(`${sort} ${dir}`)!;
  }

  /** The number that places `rowId` in the order `sort`, `dir`: smaller comes first; no two listings share one. */
  sortKey(sort: IndexedSort, dir: Direction, rowId: number): number {
    let key = 0;
    for (const { column } of SORTS[sort].keyset) {
      const { ranks, count } = this.keyRanks.get(column)!;
      const rank = ranks[rowId];
      // Unknown values last in either direction, as the store's NULLS LAST.
      key = key * (count + 1) + (rank === count || dir === 'ASC' ? rank : count - 1 - rank);
    }
    const n = this.columns.size;
    return key * n + (dir === 'ASC' ? this.idRanks[rowId] : n - 1 - this.idRanks[rowId]);
  }

  /** The listing whose sort key (in an order of direction `dir`) is `key`. */
  rowOfKey(dir: Direction, key: number): number {
    const n = this.columns.size;
    const idPart = key % n;
    return this.rowByIdRank[dir === 'ASC' ? idPart : n - 1 - idPart];
  }

  /** The row of listing `id`, or undefined when these columns do not hold it. */
  rowOfId(id: string): number | undefined {
    const rank = this.columns.texts.id.rankOf(id);
    return rank < 0 ? undefined : this.rowByIdRank[rank];
  }

  /** Listing `rowId`'s place in the orders by `sort`: its sort key values as the store holds them, and its id (a cursor's position). */
  positionOf(sort: IndexedSort, rowId: number): SearchAfter {
    return { keys: SORTS[sort].keyset.map(({ column }) => this.valueOf(column, rowId)), id: idAt(this.columns, rowId) };
  }

  /**
   * Where the rows after `after` begin in the order `sort`, `dir` (keyset pagination): the first position
   * whose listing comes after it ({@link comesAfter}). `after` need not be a listing the index holds.
   */
  startAfter(sort: IndexedSort, dir: Direction, after: SearchAfter): number {
    const order = this.order(sort, dir);
    let [lo, hi] = [0, order.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.comesAfter(sort, dir, order.at(mid), after)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Whether listing `rowId` comes after the position `after` in the order: the store's keyset condition (query.ts's `afterRow`). */
  comesAfter(sort: IndexedSort, dir: Direction, rowId: number, after: SearchAfter): boolean {
    const keyset = SORTS[sort].keyset;
    for (let i = 0; i < keyset.length; i++) {
      const value = this.valueOf(keyset[i].column, rowId);
      const bound = after.keys[i];
      if (value === null && bound === null) continue;
      if (value === null) return true;
      if (bound === null) return false;
      const c = typeof value === 'string' ? compareText(value, String(bound)) : value < Number(bound) ? -1 : value > Number(bound) ? 1 : 0;
      if (c !== 0) return dir === 'ASC' ? c > 0 : c < 0;
    }
    const c = compareText(idAt(this.columns, rowId), after.id);
    return dir === 'ASC' ? c > 0 : c < 0;
  }

  /** A sort key's value for `rowId` as the store holds it (null when unknown). */
  private valueOf(column: SortColumn, rowId: number): number | string | null {
    if (column === 'listed_at') {
      const { ranks, values } = this.columns.texts.listed_at;
      return ranks[rowId] < 0 ? null : values.at(ranks[rowId]);
    }
    return valueAt(this.columns.numbers[column], rowId);
  }

  /** A sort key column's ranks ({@link KeyRanks}). */
  private ranksOf(column: SortColumn): KeyRanks {
    if (column === 'listed_at') {
      const { ranks, values } = this.columns.texts.listed_at;
      const keyRanks = codesFor(values.length, ranks.length);
      for (let rowId = 0; rowId < ranks.length; rowId++) keyRanks[rowId] = ranks[rowId] < 0 ? values.length : ranks[rowId];
      return { ranks: keyRanks, count: values.length };
    }
    const values = this.columns.numbers[column];
    if (!(values instanceof Decimals)) return numberRanks(values);
    // Decimals as the doubles they stand for, for the while of the ranking (a loop: TypedArray.from with a function is slow).
    const doubles = new Float64Array(this.columns.size);
    for (let rowId = 0; rowId < doubles.length; rowId++) doubles[rowId] = values.at(rowId);
    return numberRanks(doubles);
  }
}
