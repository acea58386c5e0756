import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { decodeOutline, outlineContains } from '../../src/domain/outline.js';
import { get } from '../helpers/http.js';
import { CLI, ROOT, SHARED_DATA, TEMPLATE_WITHOUT_RENTHOP_DB } from '../helpers/paths.js';
import { useRuntimesPerTest } from '../helpers/runtime.js';
import { indexedListings } from '../helpers/search-index.js';
import { waitFor } from '../helpers/wait.js';

// `nyc-listings seed`: synthetic listings for benchmarks, derived from the mirrored rows by a seeded rule,
// marked in the database, deterministic, and never swept by a sync.
const runtime = useRuntimesPerTest({ withoutRentHop: true });
const run = promisify(execFile);
const env = (db: string) => ({ ...process.env, DATABASE_URL: db, SHARED_DATA_DIR: SHARED_DATA, LOG_LEVEL: 'info' });
const seed = (db: string, ...args: string[]) => run(process.execPath, [CLI, 'seed', ...args], { cwd: ROOT, env: env(db) });

/** The file's indexes, triggers and virtual tables as SQLite stores their statements. */
function schema(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare(
        "select type, name, sql from sqlite_master where type in ('index', 'trigger') or sql like 'create virtual table%' order by type, name",
      )
      .all();
  } finally {
    db.close();
  }
}

function rows(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    const all = db.prepare('select * from listings where status = ? order by id').all('ACTIVE') as any[];
    const areas = new Map(
      (db.prepare('select id, outline from areas').all() as { id: number; outline: string | null }[]).map((a) => [
        a.id,
        decodeOutline(a.outline),
      ]),
    );
    return { real: all.filter((r) => r.synthetic === 0), synthetic: all.filter((r) => r.synthetic === 1), areas };
  } finally {
    db.close();
  }
}

describe('nyc-listings seed', () => {
  it('adds synthetic listings up to N by the documented rule, the same for the same seed, and a sync keeps them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seed-'));
    const [a, b, c] = ['a.db', 'b.db', 'c.db'].map((f) => join(dir, f));
    for (const f of [a, b, c]) copyFileSync(TEMPLATE_WITHOUT_RENTHOP_DB, f);
    const before = rows(a);
    const structure = schema(a);
    expect(structure.filter((o: any) => o.type === 'trigger')).toHaveLength(3);
    const n = before.real.length + 3000;
    // A server's connection open meanwhile: the seed's own close then does not copy its WAL back.
    const server = new Database(a);
    server.pragma('journal_mode = WAL');
    const [first] = await Promise.all([
      seed(a, '--listings', String(n)),
      seed(b, '--listings', String(n)),
      seed(c, '--listings', String(n), '--seed', '7'),
    ]);
    expect(first.stderr).toMatch(/seeded 3000 synthetic listings/);
    // The seed checkpointed its WAL itself (truncated to nothing): no server write after it inherits the copy.
    expect(statSync(`${a}-wal`).size).toBe(0);
    server.close();
    const [ra, rb, rc] = [rows(a), rows(b), rows(c)];
    expect(ra.real.length + ra.synthetic.length).toBe(n);
    expect(ra.real).toEqual(before.real); // mirrored rows untouched
    expect(schema(a)).toEqual(structure); // every index, trigger and the spatial index built again as they were
    expect(JSON.stringify(ra.synthetic)).toBe(JSON.stringify(rb.synthetic)); // deterministic
    expect(JSON.stringify(rc.synthetic)).not.toBe(JSON.stringify(ra.synthetic)); // the seed matters
    const realIds = new Set(before.real.map((r) => r.id));
    let inside = 0;
    for (const s of ra.synthetic) {
      expect(Number(s.id)).toBeGreaterThanOrEqual(9_000_000_001);
      expect(realIds.has(s.id)).toBe(false);
      expect(s.url_path).toBe(`/synthetic/${s.id}`);
      expect(s.price % (s.kind === 'rental' ? 5 : 1000)).toBe(0);
      if (s.sqft) expect(s.price_per_sqft).toBeCloseTo(s.price / s.sqft, 1);
      const outline = ra.areas.get(s.area_id);
      if (outline && outlineContains(outline, s)) inside++;
    }
    expect(inside / ra.synthetic.length).toBeGreaterThan(0.9);
    // Drawn uniformly from the sources: the share of rentals is the sources' within a few points.
    const share = (list: any[]) => list.filter((r) => r.kind === 'rental').length / list.length;
    expect(Math.abs(share(ra.synthetic) - share(before.real))).toBeLessThan(0.03);
    // Prices keep the sources' scale (median within 10 %).
    const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const rentals = (list: any[]) => list.filter((r) => r.kind === 'rental').map((r) => r.price);
    expect(median(rentals(ra.synthetic)) / median(rentals(before.real))).toBeGreaterThan(0.9);
    expect(median(rentals(ra.synthetic)) / median(rentals(before.real))).toBeLessThan(1.1);

    // Seeding again replaces the earlier synthetic listings: still N.
    const again = await seed(a, '--listings', String(n));
    expect(again.stderr).toMatch(/"removed":3000,"added":3000,/);
    expect(JSON.stringify(rows(a).synthetic)).toBe(JSON.stringify(ra.synthetic));
    expect(schema(a)).toEqual(structure);

    // The service serves them, and a sync (the upstream does not have them) leaves them active.
    const rt = await runtime({ DATABASE_URL: a }, { initialSync: false });
    const key = await rt.key('pro');
    const one = ra.synthetic.find((s) => s.kind === 'rental')!;
    expect((await get(rt.app, `/v1/property/${one.id}`, key)).body.data).toMatchObject({ id: one.id, price: one.price });
    // The spatial index holds every placed listing (filled after the load), and its trigger is back.
    const file = new Database(a, { readonly: true });
    const counts = file
      .prepare(
        "select (select count(*) from listings_rtree) as indexed, (select count(*) from listings where latitude is not null and longitude is not null) as placed, (select count(*) from sqlite_master where type = 'trigger' and name = 'listings_rtree_insert') as triggers",
      )
      .get() as Record<string, number>;
    file.close();
    expect(counts).toEqual({ indexed: counts.placed, placed: counts.placed, triggers: 1 });
    const box = [one.longitude - 0.0005, one.latitude - 0.0005, one.longitude + 0.0005, one.latitude + 0.0005]
      .map((v) => v.toFixed(6))
      .join(',');
    const nearby = await get(rt.app, `/v1/search/rentals?bbox=${box}&perPage=500`, key);
    expect(nearby.status, JSON.stringify(nearby.body)).toBe(200);
    expect(nearby.body.data.map((l: { id: string }) => l.id)).toContain(one.id);
    await rt.syncer.syncScope('rental', one.borough_id);
    expect(rows(a).synthetic.filter((s) => s.status === 'ACTIVE').length).toBe(3000);

    // A running instance's search index follows a seed another process runs.
    const live = await runtime({ DATABASE_URL: c, READ_CACHE_SECONDS: '0.5' }, { initialSync: false });
    const liveKey = await live.key('pro');
    const activeRentals = () =>
      Object.values(rows(c))
        .slice(0, 2)
        .flat()
        .filter((r: any) => r.kind === 'rental').length;
    const seeded = activeRentals();
    await waitFor(async () => (await indexedListings(live, 'rental')) === seeded, 'the search index built');
    await seed(c, '--listings', String(n + 2000), '--seed', '7');
    const reseeded = activeRentals();
    expect(reseeded).toBeGreaterThan(seeded);
    await waitFor(
      async () => (await get(live.app, '/v1/search/rentals?perPage=1', liveKey)).body.meta.total === reseeded,
      'the seed in the totals',
    );
    await waitFor(async () => (await indexedListings(live, 'rental')) === reseeded, 'the search index built again');
  }, 120_000);

  it('on a terminal shows a progress bar; a bad --listings is a usage error', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'seed-tty-')), 'mirror.db');
    copyFileSync(TEMPLATE_WITHOUT_RENTHOP_DB, db);
    const n = rows(db).real.length + 10_000;
    const { stdout } = await run('script', ['-qec', `${process.execPath} ${CLI} seed --listings ${n}`, '/dev/null'], {
      cwd: ROOT,
      env: env(db),
    });
    expect(stdout).toMatch(/seed\s+\[[█░]+\] 10000\/10000/);
    await expect(seed(db, '--listings', 'many')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--listings') });
  }, 120_000);
});
