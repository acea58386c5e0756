/**
 * The benchmark's peer: a generic database-to-REST server over the same data, @platformatic/db 2.x (the
 * line that runs on Node 20; 3.x needs Node 22). It is installed into bench/peer/ from its own lockfile
 * on first use, never by the project's `npm ci`.
 *
 * Its SQL mapper refuses a `text` primary key (the mirror's listing id is text: upstream ids), so it
 * serves a copy of the mirror's SQLite file made here: the same rows of `listings` and `areas`, the id
 * declared `varchar`, and the same indexes. The peer runs on SQLite only.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';

const PEER_DIR = resolve('bench', 'peer');

/** Installs the peer from bench/peer/package-lock.json unless it is there. */
function install(): void {
  if (existsSync(join(PEER_DIR, 'node_modules', '@platformatic', 'db'))) return;
  console.log('installing the peer (@platformatic/db) into bench/peer ...');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefix', PEER_DIR], { stdio: 'inherit' });
}

/** Copies `listings` and `areas` of the mirror at `mirrorFile` into `peerFile`, with the mirror's indexes. */
function copyTables(mirrorFile: string, peerFile: string): number {
  rmSync(peerFile, { force: true });
  const db = new Database(peerFile);
  db.pragma('journal_mode = WAL');
  db.exec(`attach database '${mirrorFile.replace(/'/g, "''")}' as mirror`);
  const ddl = db
    .prepare(
      "select name, tbl_name, type, sql from mirror.sqlite_master where tbl_name in ('listings', 'areas') and sql is not null and type in ('table', 'index')",
    )
    .all() as {
    name: string;
    type: string;
    sql: string;
  }[];
  db.transaction(() => {
    for (const { sql } of ddl.filter((d) => d.type === 'table')) db.exec(sql.replace('"id" text primary key', '"id" varchar primary key'));
    db.exec('insert into main.listings select * from mirror.listings; insert into main.areas select * from mirror.areas');
    for (const { sql } of ddl.filter((d) => d.type === 'index')) db.exec(sql);
  })();
  db.exec('analyze');
  const count = (db.prepare('select count(*) as n from listings').get() as { n: number }).n;
  db.exec('detach database mirror');
  db.close();
  return count;
}

/** A running peer: its base URL and how to stop it. */
export interface Peer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts the peer on `port` over a copy of the mirror's SQLite file (made beside it), and waits until
 * it answers. Page sizes: 50 by default, 500 at most, as the service's.
 */
export async function startPeer(mirrorFile: string, port: number): Promise<Peer> {
  install();
  const peerFile = join(resolve(mirrorFile, '..'), 'peer.db');
  const rows = copyTables(mirrorFile, peerFile);
  const configFile = join(resolve(mirrorFile, '..'), 'platformatic.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      server: { logger: { level: 'warn' } },
      db: { connectionString: `sqlite://${peerFile}`, graphql: false, openapi: true, limit: { default: 50, max: 500 } },
      watch: false,
    }),
  );
  const child: ChildProcess = spawn(process.execPath, [join(PEER_DIR, 'start.mjs'), configFile, String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`the peer exited (${child.exitCode}): ${log}`);
    try {
      if ((await fetch(`${url}/areas?limit=1`)).ok) break;
    } catch {
      // not listening yet
    }
    if (tries > 600) throw new Error(`the peer did not answer in 60 s: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  console.log(`peer @platformatic/db ready on ${url} (${rows} listings, a copy of the mirror's file)`);
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((exited) => child.once('exit', exited));
    },
  };
}
