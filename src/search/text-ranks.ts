import { TextList } from '../lib/text-list.js';

/**
 * A text column as ranks: each distinct value's place among them in code-unit order, which is the order
 * both stores compare this column's text in (SQLite's bytes, PostgreSQL's C.UTF-8 collation, for the
 * ASCII of instants, days and codes). A condition on the text becomes a range of ranks: exact, with no
 * string read per listing.
 */
export class TextRanks {
  /**
   * @param ranks rank of each listing (by slot); -1 for null.
   * @param values the distinct values, ascending: `values.at(rank)`.
   */
  constructor(
    readonly ranks: Int32Array,
    readonly values: TextList,
  ) {}

  /** A column's texts (by slot) as ranks. */
  static of(column: readonly (string | null)[]): TextRanks {
    const values = [...new Set(column.filter((v): v is string => v !== null))].sort(compareText);
    const rankOf = new Map(values.map((v, i) => [v, i]));
    const ranks = new Int32Array(column.length);
    for (let slot = 0; slot < column.length; slot++) ranks[slot] = column[slot] === null ? -1 : rankOf.get(column[slot] as string)!;
    return new TextRanks(ranks, TextList.of(values));
  }

  /** The same texts with listing `slot` now at `slotAdded[slot]`'s place: only the ranks move. */
  renumbered(slotAdded: Int32Array): TextRanks {
    const ranks = new Int32Array(slotAdded.length);
    for (let slot = 0; slot < slotAdded.length; slot++) ranks[slot] = this.ranks[slotAdded[slot]];
    return new TextRanks(ranks, this.values);
  }

  /** How many distinct values sort before `text`: `value < text` is `rank < below(text)`, `value >= text` is `rank >= below(text)`. */
  below(text: string): number {
    let [lo, hi] = [0, this.values.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareText(this.values.at(mid), text) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** How many distinct values sort at or before `text`: `value <= text` is `rank < atOrBelow(text)`, `value > text` is `rank >= atOrBelow(text)`. */
  atOrBelow(text: string): number {
    const below = this.below(text);
    return below < this.values.length && this.values.at(below) === text ? below + 1 : below;
  }

  /** The rank of exactly `text`, or -2 (no listing's) when no listing has it. */
  rankOf(text: string): number {
    const below = this.below(text);
    return below < this.values.length && this.values.at(below) === text ? below : -2;
  }
}

/** Text order by UTF-16 code units (JavaScript's `<`), which is byte order for the ASCII stored here. */
export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
