import type { SearchAfter } from './listing-search.js';
import { INDEXED_SORTS, SORTS, type IndexedSort, type SortColumn } from './sorts.js';
import { idAt, type ListingColumns } from './listing-columns.js';
import { numberRanks } from './slot-order.js';
import { compareText } from './text-ranks.js';

export type Direction = 'ASC' | 'DESC';

/** A sort key column's values as ranks: 0 to `count - 1` for the distinct known values ascending, `count` for null. */
interface KeyRanks {
  ranks: Int32Array;
  count: number;
}

/**
 * The listings of one kind in each order a search may ask (the table of sorts, both directions): the order the
 * store's ORDER BY gives (each key in the direction asked with unknown values last, then the id in the same
 * direction), as slots. Each listing's place in an order is one number, its sort key: the keys' ranks and
 * then the id's, mixed into a whole number below 2^53, so that a native sort of numbers orders the listings,
 * and a few matches are ordered the same way without the whole order.
 */
export class SortedOrders {
  private readonly keyRanks = new Map<SortColumn, KeyRanks>();
  private readonly orders = new Map<string, Int32Array>();
  private readonly idRanks: Int32Array;
  private readonly slotByIdRank: Int32Array;

  constructor(private readonly columns: ListingColumns) {
    this.idRanks = columns.texts.id.ranks;
    this.slotByIdRank = new Int32Array(columns.size);
    for (let slot = 0; slot < columns.size; slot++) this.slotByIdRank[this.idRanks[slot]] = slot;
    for (const sort of INDEXED_SORTS) {
      let largest = columns.size;
      for (const { column } of SORTS[sort].keyset) {
        if (!this.keyRanks.has(column)) this.keyRanks.set(column, this.ranksOf(column));
        largest *= this.keyRanks.get(column)!.count + 1;
      }
      // Past 2^53 two sort keys could round to one number (some tens of millions of listings).
      if (largest > Number.MAX_SAFE_INTEGER) throw new Error(`too many listings to order by ${sort} in memory: ${columns.size}`);
    }
    for (const sort of INDEXED_SORTS) {
      for (const dir of ['ASC', 'DESC'] as const) {
        const keys = new Float64Array(columns.size);
        for (let slot = 0; slot < columns.size; slot++) keys[slot] = this.sortKey(sort, dir, slot);
        keys.sort();
        this.orders.set(
          `${sort} ${dir}`,
          Int32Array.from(keys, (key) => this.slotOfKey(dir, key)),
        );
      }
    }
  }

  /** Every listing's slot in the order `sort`, `dir`. */
  order(sort: IndexedSort, dir: Direction): Int32Array {
    return this.orders.get(`${sort} ${dir}`)!;
  }

  /** The number that places `slot` in the order `sort`, `dir`: smaller comes first; no two listings share one. */
  sortKey(sort: IndexedSort, dir: Direction, slot: number): number {
    let key = 0;
    for (const { column } of SORTS[sort].keyset) {
      const { ranks, count } = this.keyRanks.get(column)!;
      const rank = ranks[slot];
      // Unknown values last in either direction, as the store's NULLS LAST.
      key = key * (count + 1) + (rank === count || dir === 'ASC' ? rank : count - 1 - rank);
    }
    const n = this.columns.size;
    return key * n + (dir === 'ASC' ? this.idRanks[slot] : n - 1 - this.idRanks[slot]);
  }

  /** The listing whose sort key (in an order of direction `dir`) is `key`. */
  slotOfKey(dir: Direction, key: number): number {
    const n = this.columns.size;
    const idPart = key % n;
    return this.slotByIdRank[dir === 'ASC' ? idPart : n - 1 - idPart];
  }

  /** The slot of listing `id`, or undefined when these columns do not hold it. */
  slotOfId(id: string): number | undefined {
    const rank = this.columns.texts.id.rankOf(id);
    return rank < 0 ? undefined : this.slotByIdRank[rank];
  }

  /** Listing `slot`'s place in the orders by `sort`: its sort key values as the store holds them, and its id (a cursor's position). */
  positionOf(sort: IndexedSort, slot: number): SearchAfter {
    return { keys: SORTS[sort].keyset.map(({ column }) => this.valueOf(column, slot)), id: idAt(this.columns, slot) };
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
      if (this.comesAfter(sort, dir, order[mid], after)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Whether listing `slot` comes after the position `after` in the order: the store's keyset condition (query.ts's `afterRow`). */
  comesAfter(sort: IndexedSort, dir: Direction, slot: number, after: SearchAfter): boolean {
    const keyset = SORTS[sort].keyset;
    for (let i = 0; i < keyset.length; i++) {
      const value = this.valueOf(keyset[i].column, slot);
      const bound = after.keys[i];
      if (value === null && bound === null) continue;
      if (value === null) return true;
      if (bound === null) return false;
      const c = typeof value === 'string' ? compareText(value, String(bound)) : value < Number(bound) ? -1 : value > Number(bound) ? 1 : 0;
      if (c !== 0) return dir === 'ASC' ? c > 0 : c < 0;
    }
    const c = compareText(idAt(this.columns, slot), after.id);
    return dir === 'ASC' ? c > 0 : c < 0;
  }

  /** A sort key's value for `slot` as the store holds it (null when unknown). */
  private valueOf(column: SortColumn, slot: number): number | string | null {
    if (column === 'listed_at') {
      const { ranks, values } = this.columns.texts.listed_at;
      return ranks[slot] < 0 ? null : values.at(ranks[slot]);
    }
    const value = this.columns.numbers[column][slot];
    return Number.isNaN(value) ? null : value;
  }

  /** A sort key column's ranks ({@link KeyRanks}). */
  private ranksOf(column: SortColumn): KeyRanks {
    if (column === 'listed_at') {
      const { ranks, values } = this.columns.texts.listed_at;
      return { ranks: ranks.map((r) => (r < 0 ? values.length : r)), count: values.length };
    }
    return numberRanks(this.columns.numbers[column]);
  }
}
