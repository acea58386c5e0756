import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AreasRepository } from '../../src/store/areas-repository.js';
import { openStore, type Store } from '../../src/store/database.js';
import { TEMPLATE_WITHOUT_RENTHOP_DB } from '../helpers/paths.js';

// The area tree each instance keeps (src/store/areas-repository.ts): read whole once, then kept while the area
// list's counter (migration 035) stands still, so that an instance under traffic does not read every area and its
// outline again each READ_CACHE_SECONDS; another instance's replacement of the list is still seen within them.
let here: Store;
let other: Store;

beforeAll(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'areas-')), 'mirror.db');
  copyFileSync(TEMPLATE_WITHOUT_RENTHOP_DB, file);
  here = await openStore(file);
  other = await openStore(file);
});
afterAll(async () => {
  await here?.close();
  await other?.close();
});
afterEach(() => vi.useRealTimers());

describe('the area tree kept by the area list counter', () => {
  it("is read whole once while the counter stands still, and again within the period after another instance's replacement", async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const areas = new AreasRepository(here.db, 2, here.readDb);
    const elsewhere = new AreasRepository(other.db, 0, other.readDb);
    const wholeReads = vi.spyOn(areas, 'list');
    const first = await areas.tree();
    expect(first.areas.length).toBeGreaterThan(100);
    for (let period = 1; period <= 3; period++) {
      vi.advanceTimersByTime(2000);
      expect(await areas.tree()).toBe(first);
    }
    expect(wholeReads).toHaveBeenCalledTimes(1);

    const stored = await elsewhere.list();
    const renamed = { ...stored[0], name: `${stored[0].name} (renamed)` };
    const before = await elsewhere.version();
    await elsewhere.replaceAll([renamed, ...stored.slice(1)]);
    expect(await elsewhere.version()).toBe(before + 1);
    // Within the period the kept tree answers; past it the moved counter reads the list again.
    expect(await areas.tree()).toBe(first);
    vi.advanceTimersByTime(2000);
    const after = await areas.tree();
    expect(after.areas.find((a) => a.id === renamed.id)?.name).toBe(renamed.name);
    expect(after.areas).toHaveLength(stored.length);
    expect(wholeReads).toHaveBeenCalledTimes(2);
  });

  it('a replacement by this instance is seen at once', async () => {
    const areas = new AreasRepository(here.db, 60, here.readDb);
    const stored = await areas.list();
    await areas.tree();
    await areas.replaceAll(stored.slice(1));
    expect((await areas.tree()).areas).toHaveLength(stored.length - 1);
    await areas.replaceAll(stored);
  });
});
