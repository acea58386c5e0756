import { describe, expect, it } from 'vitest';
import { keysetPages } from '../../src/lib/keyset-pages.js';

/** A table's rows by key, read as a store reads them: `key > after order by key limit size`, each read recorded. */
function table<Key>(rows: { key: Key }[], compare: (a: Key, b: Key) => number) {
  const sorted = [...rows].sort((a, b) => compare(a.key, b.key));
  const reads: Key[] = [];
  const page = async (after: Key, size: number) => {
    reads.push(after);
    return sorted.filter((row) => compare(row.key, after) > 0).slice(0, size);
  };
  return { sorted, reads, page };
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function collect<T>(pages: AsyncIterable<T[]>): Promise<T[][]> {
  const out: T[][] = [];
  for await (const page of pages) out.push(page);
  return out;
}

describe('keysetPages', () => {
  it('yields every row once, in the key order, in pages of the size, reading from after the last key of each page', async () => {
    const t = table(
      Array.from({ length: 12 }, (_, i) => ({ key: `id-${String(11 - i).padStart(2, '0')}` })),
      byText,
    );
    const pages = await collect(keysetPages('', t.page, (row) => row.key, 5));
    expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
    expect(pages.flat()).toEqual(t.sorted);
    expect(t.reads).toEqual(['', t.sorted[4].key, t.sorted[9].key]);
  });

  it('yields no empty page when the rows fill the last one exactly, and none for an empty table', async () => {
    const full = table(
      Array.from({ length: 10 }, (_, i) => ({ key: `k${i}` })),
      byText,
    );
    expect((await collect(keysetPages('', full.page, (row) => row.key, 5))).map((p) => p.length)).toEqual([5, 5]);
    expect(full.reads).toHaveLength(3);
    const empty = table<string>([], byText);
    expect(await collect(keysetPages('', empty.page, (row) => row.key, 5))).toEqual([]);
  });

  it('reads no further page once the caller stops, and pages by a key of two parts', async () => {
    const rows = ['a', 'b', 'c'].flatMap((id) => ['x', 'y'].map((amenity) => ({ key: [id, amenity] as [string, string] })));
    const t = table(rows, (a, b) => byText(a[0], b[0]) || byText(a[1], b[1]));
    const seen: [string, string][] = [];
    for await (const page of keysetPages(['', ''] as [string, string], t.page, (row) => row.key, 2)) {
      seen.push(...page.map((row) => row.key));
      if (seen.length === 4) break;
    }
    expect(seen).toEqual(t.sorted.slice(0, 4).map((row) => row.key));
    expect(t.reads).toEqual([
      ['', ''],
      ['a', 'y'],
    ]);
  });
});
