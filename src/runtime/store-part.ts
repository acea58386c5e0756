import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { AreasRepository } from '../store/areas-repository.js';
import { BillingRepository } from '../store/billing-repository.js';
import { BuildingsRepository } from '../store/buildings-repository.js';
import { ChangesRepository } from '../store/changes-repository.js';
import { CityRecordsRepository } from '../store/city-records-repository.js';
import { openStore, type Store } from '../store/database.js';
import { KeysRepository } from '../store/keys-repository.js';
import { ListingsRepository } from '../store/listings-repository.js';
import { MarketRepository } from '../store/market-repository.js';
import { QuotaRepository } from '../store/quota-repository.js';
import { ScopesRepository } from '../store/scopes-repository.js';
import { WebhooksRepository } from '../store/webhooks-repository.js';

/** The store and a repository for each of its tables. */
export interface StorePart {
  store: Store;
  listings: ListingsRepository;
  areas: AreasRepository;
  buildings: BuildingsRepository;
  scopes: ScopesRepository;
  market: MarketRepository;
  changes: ChangesRepository;
  keys: KeysRepository;
  cityRecords: CityRecordsRepository;
  webhooks: WebhooksRepository;
  quotas: QuotaRepository;
  billing: BillingRepository;
  /** Closes the store's connections. */
  stop: () => Promise<void>;
}

/**
 * Opens the store at `DATABASE_URL` (running its migrations) and its repositories. The reads of listings, areas,
 * scopes and market figures go through the read connection: none waits behind a crawl's write transaction. With
 * `autocheckpoint` false, a SQLite writer never checkpoints (the background thread's store does).
 * @throws Error when the store cannot be opened or migrated.
 */
export async function openStorePart(config: Config, logger: Logger, options: { autocheckpoint?: boolean } = {}): Promise<StorePart> {
  const store = await openStore(config.databaseUrl, {
    autocheckpoint: options.autocheckpoint,
    rowBuilders: config.rowBuilders,
    namedStatements: config.namedStatements,
    walCheckpointSeconds: config.walCheckpointSeconds,
    onConnectionError: (error) => logger.warn({ err: error.message }, 'database connection dropped: a new one is opened when needed'),
    warn: (message, cause) => logger.warn({ err: cause }, message),
  });
  return {
    store,
    listings: new ListingsRepository(store.db, store.readDb),
    areas: new AreasRepository(store.db, config.readCacheSeconds, store.readDb),
    buildings: new BuildingsRepository(store.db),
    scopes: new ScopesRepository(store.db, store.readDb),
    market: new MarketRepository(store.db, store.readDb),
    changes: new ChangesRepository(store.db),
    keys: new KeysRepository(store.db),
    cityRecords: new CityRecordsRepository(store.db),
    webhooks: new WebhooksRepository(store.db),
    quotas: new QuotaRepository(store.db),
    billing: new BillingRepository(store.db),
    stop: () => store.close(),
  };
}
