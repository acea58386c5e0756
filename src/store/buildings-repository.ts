import type { Kysely } from 'kysely';
import type { Building } from '../wire/building.js';
import { appendChanges, lockChangeLog } from './changes-repository.js';
import type { Database } from './schema.js';
import { keysetPages } from '../lib/keyset-pages.js';

/** A stored building and when the upstream last confirmed it (UTC ISO 8601). */
export interface StoredBuilding {
  building: Building;
  fetchedAt: string;
}

/** Buildings in the mirror, stored whole as the API shows them. */
export class BuildingsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The building with this id or slug, or undefined. */
  async find(idOrSlug: string): Promise<StoredBuilding | undefined> {
    const row = await this.db
      .selectFrom('buildings')
      .select(['data', 'fetched_at'])
      .where((eb) => eb.or([eb('id', '=', idOrSlug), eb('slug', '=', idOrSlug)]))
      .executeTakeFirst();
    return row ? { building: JSON.parse(row.data) as Building, fetchedAt: row.fetched_at } : undefined;
  }

  /** Every building's street, ZIP code, position and area (null where unknown), for matching city records by address. */
  async places(): Promise<
    {
      id: string;
      street: string | null;
      zipCode: string | null;
      latitude: number | null;
      longitude: number | null;
      areaId: number | null;
    }[]
  > {
    // In pages by id with turns between them: on SQLite a read runs on the event loop, and every building's document
    // read and parsed in one piece held it for a second under load (docs/benchmark-history.md, the soak).
    const places: Awaited<ReturnType<BuildingsRepository['places']>> = [];
    const pages = keysetPages(
      '',
      (after, size) => this.db.selectFrom('buildings').select(['id', 'data']).where('id', '>', after).orderBy('id').limit(size).execute(),
      (row) => row.id,
    );
    for await (const rows of pages) {
      for (const { id, data } of rows) {
        const b = JSON.parse(data) as Building;
        places.push({
          id,
          street: b.address.street,
          zipCode: b.address.zipCode,
          latitude: b.geoCenter?.latitude ?? null,
          longitude: b.geoCenter?.longitude ?? null,
          areaId: b.area?.id ?? null,
        });
      }
    }
    return places;
  }

  /**
   * Inserts or replaces buildings (by id), all in one transaction; a slug held by another id moves to
   * the building now holding it. For each building with `changed` fields (those that differ from the
   * stored copy), a `building.updated` event is appended to the change log in the same transaction.
   */
  async put(items: { building: Building; changed: string[] }[], fetchedAt: string): Promise<void> {
    if (!items.length) return;
    await this.db.transaction().execute(async (trx) => {
      const updates = items.filter((item) => item.changed.length);
      if (updates.length) {
        await lockChangeLog(trx);
        await appendChanges(
          trx,
          updates.map(({ building, changed }) => ({
            type: 'building.updated',
            listing_id: null,
            building_id: building.id,
            kind: null,
            area_id: building.area?.id ?? null,
            price: null,
            bedrooms: null,
            occurred_at: fetchedAt,
            data: JSON.stringify({ building, changedFields: changed }),
          })),
        );
      }
      for (const { building } of items) {
        await trx.deleteFrom('buildings').where('slug', '=', building.slug).where('id', '!=', building.id).execute();
        const data = JSON.stringify(building);
        await trx
          .insertInto('buildings')
          .values({ id: building.id, slug: building.slug, data, fetched_at: fetchedAt })
          .onConflict((oc) => oc.column('id').doUpdateSet({ slug: building.slug, data, fetched_at: fetchedAt }))
          .execute();
      }
    });
  }
}
