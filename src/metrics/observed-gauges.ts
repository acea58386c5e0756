/** The gauges the metrics read from the service's parts at each scrape: their sources, readings and list. */

/** What a gauge reads when it is scraped: a value, or one per label set. */
export type Reading = number | { labels: Record<string, string>; value: number }[];

/** The service's state read at each scrape, from the parts that hold it; each may be missing (a role without it). */
export interface MetricSources {
  /** Each upstream's circuit (`closed`, `half-open`, `open`) and calls waiting their turn. */
  upstreams?: () => { upstream: string; circuit: 'closed' | 'half-open' | 'open'; queued: number }[];
  /** Hydration: listings waiting, parked, whether a run is under way, listings hydrated since start. */
  hydration?: () => Promise<{ backlog: number; parked: number; running: boolean; hydrated: number }>;
  /** The webhook queue: pending deliveries, those due now, the oldest due one's age (seconds), dead letters. */
  webhooks?: () => Promise<{ pending: number; due: number; oldestDueAgeSeconds: number; dead: number }>;
  /** The database pool: connections open, idle, and requests waiting for one (PostgreSQL only). */
  databasePool?: () => { total: number; idle: number; waiting: number } | null;
  /** The search index (`SearchIndex.state`): listings it holds by kind, whether a build runs, builds finished and failed, the last one's seconds. */
  searchIndex?: () => SearchIndexReading;
  /** The estimates' comparables (`Estimator.state`): properties in memory by kind, reads finished and failed. */
  estimates?: () => EstimatesReading;
  /** The valuation of price positions (`Valuation.state`): runs finished and given up, the last run's listings and seconds. */
  valuation?: () => ValuationReading;
  /** SQLite's write-ahead log checkpoints in their thread (`WalCheckpointer.state`); null when none run. */
  walCheckpoints?: () => WalCheckpointsReading | null;
}

/** What the metrics read of the checkpoints' state (a part of `WalCheckpointsState`, which /v1/health shows whole). */
interface WalCheckpointsReading {
  running: boolean;
  checkpoints: number;
  failures: number;
  walFrames: number | null;
}

/** What the metrics read of the valuation's state (a part of `ValuationState`, which /v1/health shows whole). */
interface ValuationReading {
  runs: number;
  failedRuns: number;
  lastRunSeconds: number | null;
  lastChanged: number;
}

/** What the metrics read of the estimates' state (a part of `EstimatesState`, which /v1/health shows whole). */
interface EstimatesReading {
  kinds: { kind: string; properties: number; buildSeconds: number }[];
  builds: number;
  failedBuilds: number;
}

/** What the metrics read of the search index's state (a part of `SearchIndexState`, which /v1/health shows whole). */
interface SearchIndexReading {
  enabled: boolean;
  listings: Record<string, number> | null;
  building: boolean;
  builds: number;
  deltaListings: number;
  failedBuilds: number;
  buildSeconds: number | null;
}

type UpstreamReading = ReturnType<NonNullable<MetricSources['upstreams']>>[number];

/** The sources' readings at one scrape. */
export interface Snapshot {
  upstreams?: UpstreamReading[];
  hydration?: Awaited<ReturnType<NonNullable<MetricSources['hydration']>>>;
  webhooks?: Awaited<ReturnType<NonNullable<MetricSources['webhooks']>>>;
  databasePool?: { total: number; idle: number; waiting: number };
  searchIndex?: SearchIndexReading;
  estimates?: EstimatesReading;
  valuation?: ValuationReading;
  walCheckpoints?: WalCheckpointsReading;
}

/** A circuit's state as a number, the usual way to chart it: 0 closed, 1 half-open, 2 open. */
export const CIRCUIT_STATE_VALUE = { closed: 0, 'half-open': 1, open: 2 } as const;

/** A gauge read at each scrape: its name, its help, how it reads the snapshot, its label names. */
export type ObservedGauge = [name: string, help: string, read: (s: Snapshot) => Reading | undefined, labelNames?: string[]];

/** A reading of each upstream, labelled by its name. */
const byUpstream = (s: Snapshot, pick: (u: UpstreamReading) => number) =>
  s.upstreams?.map((u) => ({ labels: { upstream: u.upstream }, value: pick(u) }));

/** The search index's state when it is on (absent with SEARCH_INDEX off). */
const index = (s: Snapshot) => (s.searchIndex?.enabled ? s.searchIndex : undefined);

/** The gauges {@link Metrics.observe} registers, read from its sources at each scrape (docs/operations.md lists them). */
export const OBSERVED_GAUGES: ObservedGauge[] = [
  [
    'nyc_listings_upstream_circuit_state',
    'Circuit breaker of each upstream: 0 closed, 1 half-open, 2 open',
    (s) => byUpstream(s, (u) => CIRCUIT_STATE_VALUE[u.circuit]),
    ['upstream'],
  ],
  ['nyc_listings_upstream_queued_requests', 'Upstream calls waiting their turn', (s) => byUpstream(s, (u) => u.queued), ['upstream']],
  ['nyc_listings_hydration_backlog', 'Active listings waiting for their details', (s) => s.hydration?.backlog],
  ['nyc_listings_hydration_parked', 'Active listings parked after repeated detail failures', (s) => s.hydration?.parked],
  [
    'nyc_listings_hydration_running',
    '1 while a hydration of the backlog runs on this instance',
    (s) => (s.hydration ? Number(s.hydration.running) : undefined),
  ],
  ['nyc_listings_hydrated_listings', 'Listings hydrated by this instance since it started', (s) => s.hydration?.hydrated],
  [
    'nyc_listings_search_index_listings',
    'Active listings the search index holds, by kind (absent with SEARCH_INDEX off)',
    (s) => (index(s)?.listings ? Object.entries(index(s)!.listings!).map(([kind, value]) => ({ labels: { kind }, value })) : undefined),
    ['kind'],
  ],
  [
    'nyc_listings_search_index_building',
    '1 while the search index is being built on this instance',
    (s) => (index(s) ? Number(index(s)!.building) : undefined),
  ],
  ['nyc_listings_search_index_builds', 'Search index builds finished on this instance since it started', (s) => index(s)?.builds],
  [
    'nyc_listings_search_index_delta_listings',
    'Listings written since the last search index build, held as its delta (their row versions)',
    (s) => index(s)?.deltaListings,
  ],
  [
    'nyc_listings_search_index_failed_builds',
    'Search index builds that failed on this instance since it started',
    (s) => index(s)?.failedBuilds,
  ],
  [
    'nyc_listings_search_index_build_seconds',
    "The last search index build's duration, reading the store included",
    (s) => index(s)?.buildSeconds ?? undefined,
  ],
  [
    'nyc_listings_estimate_properties',
    'Distinct properties the estimates draw comparables from, by kind (a kind is read on its first estimate)',
    (s) => s.estimates?.kinds.map((k) => ({ labels: { kind: k.kind }, value: k.properties })),
    ['kind'],
  ],
  [
    'nyc_listings_estimate_builds',
    "Reads of the estimates' comparables finished on this instance since it started",
    (s) => s.estimates?.builds,
  ],
  [
    'nyc_listings_estimate_failed_builds',
    "Reads of the estimates' comparables that failed on this instance since it started",
    (s) => s.estimates?.failedBuilds,
  ],
  ['nyc_listings_valuation_runs', 'Valuations of the price positions finished on this instance since it started', (s) => s.valuation?.runs],
  [
    'nyc_listings_valuation_failed_runs',
    'Valuations in which a kind was given up after its attempts (its positions stayed as stored)',
    (s) => s.valuation?.failedRuns,
  ],
  ['nyc_listings_valuation_seconds', "The last valuation's duration", (s) => s.valuation?.lastRunSeconds ?? undefined],
  ['nyc_listings_valuation_changed', 'Price positions the last valuation changed', (s) => s.valuation?.lastChanged],
  ['nyc_listings_webhook_queue_depth', 'Pending webhook deliveries (due now or later)', (s) => s.webhooks?.pending],
  ['nyc_listings_webhook_due', 'Webhook deliveries due now', (s) => s.webhooks?.due],
  [
    'nyc_listings_webhook_oldest_due_age_seconds',
    'Seconds since the oldest due webhook delivery fell due (0 when none is due)',
    (s) => s.webhooks?.oldestDueAgeSeconds,
  ],
  ['nyc_listings_webhook_dead_letters', 'Webhook deliveries given up after their last attempt', (s) => s.webhooks?.dead],
  [
    'nyc_listings_sqlite_checkpoints_running',
    "1 while SQLite's checkpoints run in their thread, 0 once it stopped (absent on PostgreSQL or with SQLITE_CHECKPOINT_SECONDS 0)",
    (s) => (s.walCheckpoints ? Number(s.walCheckpoints.running) : undefined),
  ],
  [
    'nyc_listings_sqlite_checkpoints',
    'SQLite write-ahead log checkpoints run in their thread since the service started',
    (s) => s.walCheckpoints?.checkpoints,
  ],
  [
    'nyc_listings_sqlite_checkpoint_failures',
    'SQLite checkpoints that failed since the service started',
    (s) => s.walCheckpoints?.failures,
  ],
  [
    'nyc_listings_sqlite_wal_frames',
    "Pages (4 KiB) in SQLite's write-ahead log at the last checkpoint",
    (s) => s.walCheckpoints?.walFrames ?? undefined,
  ],
  [
    'nyc_listings_db_pool_connections',
    'PostgreSQL pool connections, by state (total, idle, waiting requests)',
    (s) => (s.databasePool ? Object.entries(s.databasePool).map(([state, value]) => ({ labels: { state }, value })) : undefined),
    ['state'],
  ],
];
