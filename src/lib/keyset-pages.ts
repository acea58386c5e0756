import { turnTaker } from './stepwise.js';

/**
 * The rows of a long read in keyset pages: `page(after, size)` reads at most `size` rows whose key is above `after`, in
 * the key's order (`where key > after order by key limit size`), and `keyOf` gives a row's key. Starts after `start`
 * (the least key: `''` for text keys), yields each page that holds rows, and stops after a short one. The event loop
 * has a turn between pages once {@link turnTaker}'s time ran: on SQLite a read runs on the event loop, and one read of
 * a whole table held every request behind it (docs/benchmark-history.md). Stopping early (a `break` in `for await`)
 * reads no further page.
 */
export async function* keysetPages<Row, Key>(
  start: Key,
  page: (after: Key, size: number) => Promise<Row[]>,
  keyOf: (row: Row) => Key,
  size: number,
): AsyncGenerator<Row[], void, void> {
  const turn = turnTaker();
  for (let after = start; ; ) {
    const rows = await page(after, size);
    if (rows.length) yield rows;
    if (rows.length < size) return;
    after = keyOf(rows[rows.length - 1]);
    await turn();
  }
}
