/**
 * Another instance's writes while a scenario runs: every `everyMs`, one transaction that changes the price of
 * `perWrite` active listings drawn at random (a dollar up) and moves the listings' data version, as a sync's crawl
 * does. It takes the version's lock first and stamps the rows it writes with the version it moves to, as the
 * service's writers do (store/data-version.ts), where the store has row versions (migration 031); a store without
 * them (an earlier build, measured for a before) gets the same writes unstamped. Stopping it puts every price back,
 * in one more write.
 */
import { sql } from 'kysely';
import { openStore } from '../src/store/database.js';

/** A writer running: `stop` ends it and says how many writes it made. */
export interface Writer {
  stop(): Promise<{ writes: number; listings: number }>;
}

/** Starts writing `perWrite` of `ids` every `everyMs` milliseconds into the store at `databaseUrl` ({@link Writer}). */
export async function startWriter(databaseUrl: string, ids: readonly string[], perWrite: number, everyMs: number): Promise<Writer> {
  const store = await openStore(databaseUrl);
  const { db } = store;
  const stamped = await sql`select data_version from listings limit 1`
    .execute(db)
    .then(() => true)
    .catch(() => false);
  const raised = new Map<string, number>();
  let writes = 0;
  /** One write: each of `changes` (id, dollars) added to its listing's price. */
  const write = (changes: [string, number][]) =>
    db.transaction().execute(async (trx) => {
      // The version's lock first (PostgreSQL's row, SQLite's write lock); the rows then carry the version it moves to.
      const { version } = await trx
        .updateTable('data_versions')
        .set((eb) => ({ version: eb('version', '+', 1) }))
        .where('name', '=', 'listings')
        .returning('version')
        .executeTakeFirstOrThrow();
      for (const [id, dollars] of changes) {
        await trx
          .updateTable('listings')
          .set((eb) => ({ price: eb('price', '+', dollars), ...(stamped ? { data_version: Number(version) } : {}) }))
          .where('id', '=', id)
          .execute();
      }
    });
  let running = true;
  const loop = (async () => {
    while (running) {
      const drawn = Array.from({ length: perWrite }, () => ids[Math.floor(Math.random() * ids.length)]);
      await write(drawn.map((id) => [id, 1]));
      for (const id of drawn) raised.set(id, (raised.get(id) ?? 0) + 1);
      writes++;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await write([...raised].map(([id, dollars]) => [id, -dollars]));
      await store.close();
      return { writes, listings: raised.size };
    },
  };
}
