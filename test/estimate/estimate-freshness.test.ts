import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dataVersionBump } from '../../src/store/data-version.js';
import { get } from '../helpers/http.js';
import { startTestRuntime, useTestRuntime, type TestRuntime } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// Another instance's writes show once READ_CACHE_SECONDS pass: 0 here, so the store's version is read on every estimate.
const t = useTestRuntime('pro', { READ_CACHE_SECONDS: '0', ANSWER_CACHE_MB: '0' });

/** Writes as another instance would: the change, then the data version moved (in `rt`, by default the file's runtime). */
async function write(change: (trx: any) => Promise<unknown>, rt: TestRuntime = t.rt): Promise<void> {
  await rt.store.db.transaction().execute(async (trx) => {
    await change(trx);
    await dataVersionBump(trx).execute();
  });
}

describe('the comparables of the estimates', () => {
  it('show in /v1/health and the metrics; a write is answered by the pool in hand, then by the pool read again', async () => {
    const { rt, key } = t;
    // A rental with a comparable in its own building (the same point), whose price the other instance changes.
    const subject = await rt.store.db
      .selectFrom('listings as a')
      .innerJoin('listings as b', (join) =>
        join
          .onRef('a.latitude', '=', 'b.latitude')
          .onRef('a.longitude', '=', 'b.longitude')
          .onRef('a.bedroom_count', '=', 'b.bedroom_count')
          .onRef('a.full_bathroom_count', '=', 'b.full_bathroom_count')
          .onRef('a.half_bathroom_count', '=', 'b.half_bathroom_count')
          .onRef('a.price', '<>', 'b.price'),
      )
      .select(['a.id as id', 'b.id as other', 'b.price as otherPrice'])
      .where('a.kind', '=', 'rental')
      .where('a.status', '=', 'ACTIVE')
      .where('b.status', '=', 'ACTIVE')
      .orderBy('a.id')
      .limit(1)
      .executeTakeFirstOrThrow();
    const before = (await get(rt.app, `/v1/property/${subject.id}/estimate`, key)).body.data;
    const sameBuilding = before.comparables.find((c: { distance: number }) => c.distance === 0);
    expect(sameBuilding).toBeDefined();

    // The store as the pool read it: once the pool holds the store's version (a background write may move it), the
    // distinct properties are counted at that same version.
    const countProperties = async () =>
      Number(
        (
          await rt.store.db
            .selectFrom('listings')
            .select(
              sql<number>`count(distinct latitude || '|' || longitude || '|' || coalesce(bedroom_count, -1) || '|' || coalesce(full_bathroom_count, -1) || '|' || coalesce(half_bathroom_count, -1) || '|' || price)`.as(
                'n',
              ),
            )
            .where('kind', '=', 'rental')
            .where('status', '=', 'ACTIVE')
            .where('latitude', 'is not', null)
            .executeTakeFirstOrThrow()
        ).n,
      );
    let properties = 0;
    let health: any;
    let version = 0;
    await waitFor(async () => {
      await get(rt.app, `/v1/property/${subject.id}/estimate`, key);
      version = await rt.listings.dataVersion();
      health = (await get(rt.app, '/v1/health')).body.estimates;
      if (health.kinds[0]?.dataVersion !== version || health.building.length) return false;
      properties = await countProperties();
      return (await rt.listings.dataVersion()) === version;
    }, "the rental comparables read at the store's version");
    expect(health.kinds).toEqual([
      expect.objectContaining({ kind: 'rental', properties, dataVersion: version, calibratedOn: expect.any(Number) }),
    ]);
    expect(health.kinds[0].calibratedOn).toBeGreaterThan(1500);
    expect(health).toMatchObject({ failedBuilds: 0, lastError: null, building: [] });
    expect((await rt.metrics.scrape()).body).toContain(`nyc_listings_estimate_properties{kind="rental"} ${properties}`);

    // The comparable's price doubled by another instance: answered at once from the pool in hand, read again meanwhile.
    const price = Number(sameBuilding.price) * 2;
    await write((trx) => trx.updateTable('listings').set({ price }).where('id', '=', sameBuilding.id).execute());
    const stale = (await get(rt.app, `/v1/property/${subject.id}/estimate`, key)).body.data;
    expect(stale.asOf).toBe(health.kinds[0].builtAt);
    await waitFor(async () => {
      await get(rt.app, `/v1/property/${subject.id}/estimate`, key);
      return (await get(rt.app, '/v1/health')).body.estimates.kinds[0].dataVersion > version;
    }, 'the rental comparables read again at a newer version');
    const after = (await get(rt.app, `/v1/property/${subject.id}/estimate`, key)).body.data;
    expect(after.asOf > health.kinds[0].builtAt).toBe(true);
    // The same property at its new price is a new property of the pool: its own listing id leads it.
    expect(after.comparables.find((c: { id: string }) => c.id === sameBuilding.id)?.price ?? price).toBe(price);
    expect(after.comparables.some((c: { id: string; price: number }) => c.id === sameBuilding.id && c.price === sameBuilding.price)).toBe(
      false,
    );
  });

  it('a read that fails is logged, counted and shown, the pool in hand answers meanwhile, and the next estimate reads again', async () => {
    const { rt, key } = t;
    const id = (
      await rt.store.db
        .selectFrom('listings')
        .select('id')
        .where('kind', '=', 'rental')
        .where('status', '=', 'ACTIVE')
        .orderBy('id')
        .limit(1)
        .executeTakeFirstOrThrow()
    ).id;
    const before = (await get(rt.app, `/v1/property/${id}/estimate`, key)).body.data;
    const failed = (await get(rt.app, '/v1/health')).body.estimates.failedBuilds;
    // A column the read needs is gone for a while (a migration half done on another instance, say).
    await write((trx) => sql`alter table listings rename column sqft to sqft_moved`.execute(trx));
    const during = await get(rt.app, `/v1/property/${id}/estimate`, key);
    expect(during.status).toBe(200);
    expect(during.body.data.estimate).toBe(before.estimate);
    await waitFor(async () => (await get(rt.app, '/v1/health')).body.estimates.failedBuilds === failed + 1, 'the failed read counted');
    const health = (await get(rt.app, '/v1/health')).body.estimates;
    expect(health.lastError).toMatch(/sqft/);
    expect((await rt.metrics.scrape()).body).toContain(`nyc_listings_estimate_failed_builds ${failed + 1}`);
    await write((trx) => sql`alter table listings rename column sqft_moved to sqft`.execute(trx));
    const version = await rt.listings.dataVersion();
    await get(rt.app, `/v1/property/${id}/estimate`, key);
    await waitFor(
      async () =>
        (await get(rt.app, '/v1/health')).body.estimates.kinds.find((k: { kind: string }) => k.kind === 'rental').dataVersion === version,
      'the rental comparables read again once the column is back',
    );
    expect((await get(rt.app, `/v1/property/${id}/estimate`, key)).body.data.estimate).toBe(before.estimate);
  });

  it('a write is answered by the comparables in hand until they are ESTIMATE_REFRESH_SECONDS old, then they are read again', async () => {
    let now = Date.now();
    const rt = await startTestRuntime(
      { READ_CACHE_SECONDS: '0', ANSWER_CACHE_MB: '0', ESTIMATE_REFRESH_SECONDS: '60' },
      { clock: () => new Date(now) },
    );
    try {
      const key = await rt.key('pro');
      const listing = await rt.store.db
        .selectFrom('listings')
        .select(['id', 'price'])
        .where('kind', '=', 'rental')
        .where('status', '=', 'ACTIVE')
        .where('latitude', 'is not', null)
        .orderBy('id')
        .limit(1)
        .executeTakeFirstOrThrow();
      const estimate = async () => (await get(rt.app, `/v1/property/${listing.id}/estimate`, key)).body.data;
      const estimates = async () => (await get(rt.app, '/v1/health')).body.estimates;
      // The first estimate of a kind waits for its comparables.
      const first = await estimate();
      const before = await estimates();
      expect(before.kinds.map((k: { kind: string }) => k.kind)).toEqual(['rental']);
      expect(before.building).toEqual([]);

      await write(
        (trx) =>
          trx
            .updateTable('listings')
            .set({ price: Number(listing.price) + 1 })
            .where('id', '=', listing.id)
            .execute(),
        rt,
      );
      now += 59_000;
      // Younger than a minute: they answer, and no read starts (none under way, none finished).
      expect((await estimate()).asOf).toBe(first.asOf);
      const young = await estimates();
      expect(young.building).toEqual([]);
      expect(young.builds).toBe(before.builds);

      now += 2_000;
      await waitFor(async () => {
        await estimate();
        return (await estimates()).kinds[0].dataVersion > before.kinds[0].dataVersion;
      }, 'the rental comparables read again once a minute old');
      expect((await estimate()).asOf > first.asOf).toBe(true);
    } finally {
      await rt.close();
    }
  });
});
