/**
 * A text column as ranks: each distinct value's place among them in code-unit order, which is the order
 * both stores compare this column's text in (SQLite's bytes, PostgreSQL's C.UTF-8 collation, for the
 * ASCII of instants, days and codes). A condition on the text becomes a range of ranks: exact, with no
 * string read per listing.
 */
export class TextRanks {
  /** Rank of each listing (by slot); -1 for null. */
  readonly ranks: Int32Array;
  /** The distinct values, ascending: `values[rank]`. */
  readonly values: readonly string[];

  constructor(column: readonly (string | null)[]) {
    this.values = [...new Set(column.filter((v): v is string => v !== null))].sort(compareText);
    const rankOf = new Map(this.values.map((v, i) => [v, i]));
    this.ranks = Int32Array.from(column, (v) => (v === null ? -1 : rankOf.get(v)!));
  }

  /** How many distinct values sort before `text`: `value < text` is `rank < below(text)`, `value >= text` is `rank >= below(text)`. */
  below(text: string): number {
    let [lo, hi] = [0, this.values.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareText(this.values[mid], text) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** How many distinct values sort at or before `text`: `value <= text` is `rank < atOrBelow(text)`, `value > text` is `rank >= atOrBelow(text)`. */
  atOrBelow(text: string): number {
    const below = this.below(text);
    return below < this.values.length && this.values[below] === text ? below + 1 : below;
  }

  /** The rank of exactly `text`, or -2 (no listing's) when no listing has it. */
  rankOf(text: string): number {
    const below = this.below(text);
    return this.values[below] === text ? below : -2;
  }
}

/** Text order by UTF-16 code units (JavaScript's `<`), which is byte order for the ASCII stored here. */
export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
