import type { PostgresCursor, PostgresPool, PostgresPoolClient } from 'kysely';
import { LRUCache } from 'lru-cache';
import type pg from 'pg';

/** Parameterized texts given a name at most: past it, new texts run unnamed. */
const NAMED_STATEMENTS_MAX = 500;

/**
 * The pool Kysely runs on, whose connections run a parameterized query text they have seen before as a named
 * prepared statement: node-postgres sends every other query unnamed, so PostgreSQL parses and plans it anew
 * each time, which costs more than running a short query such as a listing's detail. A text is named on its
 * second sighting (one-off shapes never take a name), up to {@link NAMED_STATEMENTS_MAX} texts; the rest run
 * unnamed as before. node-postgres prepares a name once on each connection that runs it. PostgreSQL decides
 * per statement whether a cached generic plan is as cheap as a custom one (`plan_cache_mode` auto); a sync's
 * write transactions plan every run for its values instead (see the listings repository). PostgreSQL replans
 * a named statement by itself when an index it used is dropped or added; but one that reads `*` from a table
 * another instance has since given a column fails ("cached plan must not change result type") until this
 * process restarts, as a new version's instances are started afresh. `pool` itself is left as it is, for
 * what Kysely cannot say (a bulk `COPY`).
 */
export function namingRepeatedStatements(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>();
  const seenOnce = new LRUCache<string, true>({ max: 2 * NAMED_STATEMENTS_MAX });
  const nameOf = (text: string): string | undefined => {
    const known = names.get(text);
    if (known !== undefined || names.size >= NAMED_STATEMENTS_MAX) return known;
    if (!seenOnce.has(text)) {
      seenOnce.set(text, true);
      return undefined;
    }
    const name = `nyc_listings_${names.size}`;
    names.set(text, name);
    return name;
  };
  return {
    connect: async () => {
      const client = await pool.connect();
      function query<R>(text: string, values: ReadonlyArray<unknown>): Promise<pg.QueryResult<R & pg.QueryResultRow>>;
      function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
      function query(textOrCursor: string | PostgresCursor<unknown>, values?: ReadonlyArray<unknown>): unknown {
        if (typeof textOrCursor !== 'string') return client.query(textOrCursor as unknown as pg.Submittable);
        const name = nameOf(textOrCursor);
        return client.query({ text: textOrCursor, values: values as unknown[], ...(name === undefined ? {} : { name }) });
      }
      return { query, release: () => client.release() } as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}
