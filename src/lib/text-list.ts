/** Lists of this many texts or more are packed ({@link TextList.of}). */
export const PACKED_FROM = 1024;

/** A whole number written as JavaScript writes it (no sign, no leading zero), of at most 15 digits: kept exactly by a double. */
const CANONICAL_WHOLE_NUMBER = /^(?:0|[1-9][0-9]{0,14})$/;

/**
 * A read-only list of texts. Long lists (a listing's id or URL, for each listing) are kept packed: their UTF-8 bytes
 * in one buffer and where each begins, read back as a string when asked for. A million of them then take their bytes
 * and 4 more each, outside the JavaScript heap, where a million strings took some 40 bytes each and made every full
 * garbage collection several times longer (docs/search-index.md). A long list of which every text is a whole number
 * written plainly (the listing sites' ids) is kept as those numbers, 8 bytes each, where packed ids of 7 to 10 digits
 * took 11 to 14. Short lists stay arrays.
 */
export class TextList {
  private constructor(
    private readonly strings: readonly string[] | null,
    private readonly numbers: Float64Array | null,
    private readonly bytes: Buffer | null,
    /** Where text `i` begins in `bytes`, and (at `i + 1`) ends. */
    private readonly starts: Int32Array | null,
    readonly length: number,
  ) {}

  /** The texts of `values`, in their order: from {@link PACKED_FROM} of them as numbers or packed, else the array itself. */
  static of(values: readonly string[]): TextList {
    if (values.length < PACKED_FROM) return new TextList(values, null, null, null, values.length);
    if (values.every((value) => CANONICAL_WHOLE_NUMBER.test(value))) {
      const numbers = new Float64Array(values.length);
      for (let i = 0; i < values.length; i++) numbers[i] = Number(values[i]);
      return new TextList(null, numbers, null, null, values.length);
    }
    let size = 0;
    for (const value of values) size += Buffer.byteLength(value);
    const bytes = Buffer.allocUnsafeSlow(size);
    const starts = new Int32Array(values.length + 1);
    let at = 0;
    for (let i = 0; i < values.length; i++) {
      starts[i] = at;
      at += bytes.write(values[i], at);
    }
    starts[values.length] = at;
    return new TextList(null, null, bytes, starts, values.length);
  }

  /** Text `index` (0 to `length - 1`). */
  at(index: number): string {
    if (this.strings !== null) return this.strings[index];
    if (this.numbers !== null) return String(this.numbers[index]);
    return this.bytes!.toString('utf8', this.starts![index], this.starts![index + 1]);
  }
}

/** What reads a list of texts by place: a {@link TextList}, or a list kept another way (lib/path-list.ts). */
export interface Texts {
  readonly length: number;
  at(index: number): string;
}
