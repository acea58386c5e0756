import { codesFor, type Codes } from '../lib/narrow-arrays.js';
import { TextList } from '../lib/text-list.js';

/**
 * A text column as ranks: each distinct value's place among them in code-unit order, which is the order
 * both stores compare this column's text in (SQLite's bytes, PostgreSQL's C.UTF-8 collation, for the
 * ASCII of instants, days and codes). A condition on the text becomes a range of ranks: exact, with no
 * string read per listing.
 */
export class TextRanks {
  /**
   * @param ranks rank of each listing (by row); -1 for null. The narrowest array that holds them (a byte a listing for
   *   a column of a few values: a building type).
   * @param values the distinct values, ascending: `values.at(rank)`.
   */
  constructor(
    readonly ranks: Codes,
    readonly values: TextList,
  ) {}

  /**
   * A column gathered as codes into its distinct values (`values[codes[i]]`, -1 for null) as ranks, listing `rowId`
   * taking the code at `addedByRow[rowId]` (the columns' renumbering). Values that came ascending (a listing's id, read
   * in order) are ranked without a sort.
   */
  static ofCodes(codes: Int32Array, values: readonly string[], addedByRow: Int32Array): TextRanks {
    let ascending = true;
    for (let i = 1; i < values.length && ascending; i++) ascending = values[i - 1] < values[i];
    let sorted = values;
    let rankOfCode: Int32Array | null = null;
    if (!ascending) {
      const byValue = new Int32Array(values.length);
      for (let code = 0; code < values.length; code++) byValue[code] = code;
      byValue.sort((a, b) => compareText(values[a], values[b]));
      rankOfCode = new Int32Array(values.length);
      for (let rank = 0; rank < values.length; rank++) rankOfCode[byValue[rank]] = rank;
      sorted = Array.from(byValue, (code) => values[code]);
    }
    const ranks = codesFor(values.length - 1, addedByRow.length);
    for (let rowId = 0; rowId < addedByRow.length; rowId++) {
      const code = codes[addedByRow[rowId]];
      ranks[rowId] = code < 0 || rankOfCode === null ? code : rankOfCode[code];
    }
    return new TextRanks(ranks, TextList.of(sorted));
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
