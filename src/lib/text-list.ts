/** Lists of this many texts or more are packed ({@link TextList.of}). */
export const PACKED_FROM = 1024;

/**
 * A read-only list of texts. Long lists (a listing's id or URL, for each listing) are kept packed: their UTF-8 bytes
 * in one buffer and where each begins, read back as a string when asked for. A million of them then take their bytes
 * and 4 more each, outside the JavaScript heap, where a million strings took some 40 bytes each and made every full
 * garbage collection several times longer (docs/search-index.md). Short lists stay arrays.
 */
export class TextList {
  private constructor(
    private readonly strings: readonly string[] | null,
    private readonly bytes: Buffer | null,
    /** Where text `i` begins in `bytes`, and (at `i + 1`) ends. */
    private readonly starts: Int32Array | null,
    readonly length: number,
  ) {}

  /** The texts of `values`, in their order: packed from {@link PACKED_FROM} of them, else the array itself. */
  static of(values: readonly string[]): TextList {
    if (values.length < PACKED_FROM) return new TextList(values, null, null, values.length);
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
    return new TextList(null, bytes, starts, values.length);
  }

  /** Text `index` (0 to `length - 1`). */
  at(index: number): string {
    if (this.strings !== null) return this.strings[index];
    return this.bytes!.toString('utf8', this.starts![index], this.starts![index + 1]);
  }
}
