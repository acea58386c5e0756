import { turnTaker } from './stepwise.js';

/**
 * Rows a page holds unless told otherwise: on SQLite a read runs on the event loop, and a page of 5,000 wide rows
 * (a scope's ids by a scan of the table, the estimates' active listings) held it many turns' length under the soak's
 * load, every request waiting behind it; a fifth of that stays near a turn's length (figures in docs/benchmark-history.md).
 */
export const PAGE_ROWS = 1_000;

/**
 * The rows of a long read in keyset pages: `page(after, size)` reads at most `size` rows ({@link PAGE_ROWS} by default) whose key is above `after`, in
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
  size = PAGE_ROWS,
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
