import { codesFor, type Codes } from './narrow-arrays.js';
import { TextList } from './text-list.js';

/**
 * A read-only list of URL paths, one for each entry of a list whose own keys are held elsewhere (a listing's id, read
 * by `keyAt`). Each path is split at its last `/`: its head (`/rental/`, `/building/595-main-st-manhattan/`) is kept as
 * a code among the distinct heads, and its last segment not at all when it is the entry's key (`/rental/7025132` of
 * listing 7025132), else among the few kept in full (a sale's unit, `410`). The listing sites' paths end with the
 * listing's id or share their building's head, so a million of them take about a byte each, where packed they took
 * their 20 to 40 bytes and 4 more. Every path reads back exactly as given.
 */
export class PathList {
  private constructor(
    private readonly heads: TextList,
    private readonly headCodes: Codes,
    /** The entries whose last segment is not their key, ascending, and those segments in the same order. */
    private readonly otherEntries: Int32Array,
    private readonly otherSegments: TextList,
    private readonly keyAt: (index: number) => string,
    readonly length: number,
  ) {}

  /** The paths of `values`, in their order; `keyAt(i)` is the key of entry `i`, read again whenever its path is. */
  static of(values: readonly string[], keyAt: (index: number) => string): PathList {
    const heads: string[] = [];
    const headCode = new Map<string, number>();
    const codes: number[] = new Array(values.length);
    const otherEntries: number[] = [];
    const otherSegments: string[] = [];
    for (let i = 0; i < values.length; i++) {
      const path = values[i];
      const split = path.lastIndexOf('/') + 1;
      const head = path.slice(0, split);
      let code = headCode.get(head);
      if (code === undefined) {
        code = heads.push(head) - 1;
        headCode.set(head, code);
      }
      codes[i] = code;
      const segment = path.slice(split);
      if (segment !== keyAt(i)) {
        otherEntries.push(i);
        otherSegments.push(segment);
      }
    }
    const headCodes = codesFor(heads.length - 1, values.length);
    headCodes.set(codes);
    return new PathList(TextList.of(heads), headCodes, Int32Array.from(otherEntries), TextList.of(otherSegments), keyAt, values.length);
  }

  /** Path `index` (0 to `length - 1`). */
  at(index: number): string {
    const head = this.heads.at(this.headCodes[index]);
    let [low, high] = [0, this.otherEntries.length];
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.otherEntries[mid] < index) low = mid + 1;
      else high = mid;
    }
    return low < this.otherEntries.length && this.otherEntries[low] === index
      ? head + this.otherSegments.at(low)
      : head + this.keyAt(index);
  }
}
