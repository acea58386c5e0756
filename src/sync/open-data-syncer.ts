import type { Logger } from 'pino';
import { recordedSaleFromSoda, taxLotFromSoda, type RecordedSaleRow, type SodaRow } from '../domain/city-records.js';
import type { AreasRepository } from '../store/areas-repository.js';
import type { BuildingsRepository } from '../store/buildings-repository.js';
import type { CityRecordsRepository } from '../store/city-records-repository.js';
import { RECORDED_SALES_SCOPE, TAX_LOTS_SCOPE, type ScopesRepository } from '../store/scopes-repository.js';
import { DATASETS, type SodaClient } from '../upstream/soda-client.js';
import { SalePositioner } from './sale-positioner.js';
import type { Districts } from '../domain/city-districts.js';
import type { GeoPoint } from '../wire/common.js';
import type { Metrics } from '../metrics/metrics.js';
import { turnTaker } from '../lib/stepwise.js';

export interface OpenDataSyncerDeps {
  client: SodaClient;
  records: CityRecordsRepository;
  scopes: ScopesRepository;
  areas: AreasRepository;
  buildings: BuildingsRepository;
  /** The districts holding a position (the city's polygons), which each positioned sale is given. */
  districtsAt: (point: GeoPoint) => Districts;
  clock: () => Date;
  logger: Logger;
  /** Rows a SODA request (`$limit`). */
  pageSize: number;
  /** Where each dataset's sync is timed by outcome. */
  metrics?: Metrics;
}

/**
 * Mirrors NYC Open Data (docs/open-data.md): PLUTO's tax lots, then DOF's recorded sales, each
 * incrementally: only rows whose `:updated_at` is after the latest one stored, read page by page under
 * `$order=:updated_at,:id` and written page by page, so a failure keeps every page already written and
 * the next sync resumes after them. Sales are placed after each sync (see {@link positionSales}).
 * Each dataset's success or failure is recorded in its scope; a failure never touches stored rows.
 */
export class OpenDataSyncer {
  constructor(private readonly deps: OpenDataSyncerDeps) {}

  /** False while SODA's breaker refuses calls. */
  canRefresh(): boolean {
    return this.deps.client.circuitState() !== 'open';
  }

  /** Syncs tax lots, then recorded sales; returns the scopes that failed. */
  async syncAll(): Promise<string[]> {
    const failed: string[] = [];
    if (!(await this.syncTaxLots())) failed.push(TAX_LOTS_SCOPE);
    if (!(await this.syncRecordedSales())) failed.push(RECORDED_SALES_SCOPE);
    return failed;
  }

  /** Syncs PLUTO's tax lots; false (and the failure recorded) when SODA failed. */
  syncTaxLots(): Promise<boolean> {
    return this.syncDataset(TAX_LOTS_SCOPE, DATASETS.taxLots, 'tax_lots', async (rows) => {
      const lots = rows.map(taxLotFromSoda).filter((r) => r !== null);
      if (lots.length) await this.deps.records.putTaxLots(lots);
    });
  }

  /**
   * Syncs DOF's recorded sales, then places every sale again ({@link positionSales}); false (and the
   * failure recorded) when SODA failed.
   */
  async syncRecordedSales(): Promise<boolean> {
    const synced = await this.syncDataset(RECORDED_SALES_SCOPE, DATASETS.recordedSales, 'recorded_sales', async (rows) => {
      const sales = rows.map(recordedSaleFromSoda).filter((r): r is RecordedSaleRow => r !== null);
      if (sales.length) await this.deps.records.putRecordedSales(sales);
    });
    await this.positionSales();
    return synced;
  }

  /**
   * Gives every recorded sale its position, building and area from the tax lots, buildings and areas the
   * mirror holds now ({@link SalePositioner}), writing only the sales whose place changed. Buildings come
   * and go with the listings site's syncs, so this runs after every sync of recorded sales and after the
   * first hydration of buildings. Returns how many sales it moved.
   */
  async positionSales(): Promise<number> {
    const positioner = await SalePositioner.load(this.deps.records, this.deps.buildings, this.deps.areas, this.deps.districtsAt);
    let moved = 0;
    // Placing a sale can take a millisecond (its area's and districts' outlines): a turn every thousand sales held the
    // event loop for seconds under load, so requests get one once 5 ms of placing ran.
    const turn = turnTaker();
    for await (const page of this.deps.records.salesToPosition()) {
      const changed = [];
      for (const sale of page) {
        await turn();
        const place = positioner.position(sale);
        const same = (Object.keys(place) as (keyof typeof place)[]).every((k) =>
          place[k] === null ? sale[k] === null : sale[k] !== null && String(place[k]) === String(sale[k]),
        );
        if (!same) changed.push({ id: sale.id, ...place });
      }
      await this.deps.records.setPlaces(changed);
      moved += changed.length;
    }
    return moved;
  }

  private async syncDataset(
    scope: string,
    dataset: string,
    table: 'tax_lots' | 'recorded_sales',
    write: (rows: SodaRow[]) => Promise<void>,
  ): Promise<boolean> {
    const at = this.deps.clock().toISOString();
    await this.deps.scopes.recordAttempt(scope, at);
    const started = Date.now();
    try {
      const watermark = await this.deps.records.watermark(table);
      const read = await this.deps.client.each(
        dataset,
        // A publication updates its rows at once, so rows after the latest stored stamp are exactly the ones not yet read.
        { select: ':*, *', where: watermark ? `:updated_at > '${watermark}'` : undefined, order: ':updated_at, :id' },
        this.deps.pageSize,
        write,
      );
      await this.deps.scopes.recordSuccess(scope, this.deps.clock().toISOString(), await this.deps.records.count(table));
      this.deps.logger.info({ scope, read, ms: Date.now() - started }, 'open data synced');
      this.deps.metrics?.syncDuration.observe({ scope, outcome: 'success' }, (Date.now() - started) / 1000);
      return true;
    } catch (error) {
      this.deps.metrics?.syncDuration.observe({ scope, outcome: 'failure' }, (Date.now() - started) / 1000);
      await this.deps.scopes.recordFailure(scope, this.deps.clock().toISOString(), (error as Error).message);
      this.deps.logger.warn({ scope, err: (error as Error).message }, 'open data sync failed: stored rows kept');
      return false;
    }
  }
}
