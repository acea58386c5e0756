import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/store/database.js';
import { freePort } from '../helpers/processes.js';

// Which errors the API answers 503 DATABASE_UNAVAILABLE (docs/decisions.md): real ones, from real connections.
const PG_SERVER = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function errorOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('a database that cannot be reached, told from a query at fault', () => {
  it('a refused connection and one the server ends are unavailable; a bad query or a missing table is not', async () => {
    const port = await freePort();
    const refused = await errorOf(async () => {
      const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/test`, connectionTimeoutMillis: 2000 });
      await client.connect();
    });
    expect(isDatabaseUnavailable(refused)).toBe(true);

    const client = new pg.Client({ connectionString: PG_SERVER });
    await client.connect();
    // Errors the server sends on a live connection: the query's fault.
    expect(isDatabaseUnavailable(await errorOf(() => client.query('selec 1')))).toBe(false);
    expect(isDatabaseUnavailable(await errorOf(() => client.query('select * from no_such_table_here')))).toBe(false);
    // The server ends the connection (as a restart does): 57P01.
    client.on('error', () => undefined);
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const admin = new pg.Client({ connectionString: PG_SERVER });
    await admin.connect();
    try {
      const ended = errorOf(() => client.query('select pg_sleep(30)'));
      // Ended once its sleep has started (pg_stat_activity shows it), not before.
      for (let i = 0; i < 500; i++) {
        const { rowCount } = await admin.query("select 1 from pg_stat_activity where pid = $1 and query like 'select pg_sleep%'", [
          rows[0].pid,
        ]);
        if (rowCount) break;
      }
      await admin.query('select pg_terminate_backend($1)', [rows[0].pid]);
      expect(isDatabaseUnavailable(await ended)).toBe(true);
    } finally {
      await admin.end();
      await client.end().catch(() => undefined);
    }
    expect(isDatabaseUnavailable(new Error('something else'))).toBe(false);
    expect(isDatabaseUnavailable('not an error')).toBe(false);
  });
});
