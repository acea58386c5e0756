import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client';
import { getHeapStatistics } from 'node:v8';
import { OBSERVED_GAUGES, type MetricSources, type Reading, type Snapshot } from './observed-gauges.js';

export { CIRCUIT_STATE_VALUE, type MetricSources } from './observed-gauges.js';

/**
 * The service's Prometheus metrics (prom-client), in a registry of their own (one a runtime: tests run several
 * in one process). Events are counted as they happen through the counters and histograms below; the state of
 * queues, backlogs and circuits is read from {@link MetricSources} at each scrape. Names follow Prometheus'
 * conventions: seconds and bytes, `_total` for counters, `nyc_listings_` before the service's own. The list,
 * with what each means, is in docs/operations.md.
 */
export class Metrics {
  readonly registry = new Registry();

  /** HTTP requests by the matched route's pattern (never the URL's text), method and status. */
  readonly httpRequests = new Counter({
    name: 'nyc_listings_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'nyc_listings_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  /** Answer cache look-ups: `hit` (answered from it), `miss` (computed). */
  readonly answerCache = new Counter({
    name: 'nyc_listings_answer_cache_requests_total',
    help: 'Answer cache look-ups, by outcome (hit, miss)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  /** Upstream requests by upstream (`listings`, `open-data`) and outcome (`ok` or the failure's kind). */
  readonly upstreamRequests = new Counter({
    name: 'nyc_listings_upstream_requests_total',
    help: 'Requests sent to an upstream, by upstream and outcome (ok, or the failure: timeout, http, network, graphql, malformed, blocked)',
    labelNames: ['upstream', 'outcome'] as const,
    registers: [this.registry],
  });
  /** A sync of one scope (listing kind x borough, areas, an open data set), by outcome (`success`, `failure`). */
  readonly syncDuration = new Histogram({
    name: 'nyc_listings_sync_duration_seconds',
    help: 'Time a sync of one scope took, by scope and outcome (success, failure)',
    labelNames: ['scope', 'outcome'] as const,
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers: [this.registry],
  });
  /** Detail batches that failed after their retries, and listings parked. */
  readonly hydrationFailures = new Counter({
    name: 'nyc_listings_hydration_failed_batches_total',
    help: 'Detail batches that failed after their retries (their listings counted a failure each)',
    registers: [this.registry],
  });
  /** Webhook attempts by outcome: `delivered`, `retry` (failed, tried again later), `dead` (failed, its last). */
  readonly webhookAttempts = new Counter({
    name: 'nyc_listings_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome (delivered, retry, dead)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  /** How late a webhook attempt started after its delivery was due (seconds), by attempt kind (`first`, `retry`). */
  readonly webhookLateness = new Histogram({
    name: 'nyc_listings_webhook_attempt_delay_seconds',
    help: 'Seconds between a delivery falling due and its attempt starting, by kind (first, retry)',
    labelNames: ['kind'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  /** Bytes of answers the answer cache holds, each counted with a kilobyte for its key and meta (http/plugins/answer-cache.ts). */
  /**
   * Events from the subscription provider's webhook, by type (`unverified` for a rejected one) and outcome: `applied`,
   * `duplicate` (an id applied already), `ignored` (a type the service does not act on), `rejected` (forged, stale,
   * unsigned or malformed: a 400), `failed` (not applied, answered 5xx: the provider sends it again).
   */
  readonly billingEvents = new Counter({
    name: 'nyc_listings_billing_events_total',
    help: 'Subscription provider events received, by type and outcome (applied, duplicate, ignored, rejected, failed)',
    labelNames: ['type', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly answerCacheBytes = new Gauge({
    name: 'nyc_listings_answer_cache_bytes',
    help: 'Bytes of serialized answers the answer cache holds (each counted with a kilobyte for its key and meta)',
    registers: [this.registry],
  });

  /** Open change streams (Server-Sent Events) on this instance: the route counts them in and out. */
  readonly changeStreams = new Gauge({
    name: 'nyc_listings_change_stream_clients',
    help: 'Open change streams (Server-Sent Events) on this instance',
    registers: [this.registry],
  });

  /**
   * The V8 heap of the thread this registry belongs to, read at each scrape (`v8.getHeapStatistics`): bytes `used`
   * by live and not yet collected objects, and `total` reserved for the heap. prom-client's `nodejs_heap_*` are the
   * thread that collects them; this one names its thread, so that a scrape of `serve` shows the background thread's
   * heap beside the API thread's (each thread's registry reads its own).
   */
  readonly threadHeap: Gauge<'thread' | 'state'>;

  /**
   * `thread` names the thread whose heap {@link threadHeap} reads: `main` (the process's own, which answers requests
   * in `serve`) unless told `background`.
   */
  constructor(options: { defaultMetrics?: boolean; thread?: 'main' | 'background' } = {}) {
    // Process metrics, the event loop's lag among them (nodejs_eventloop_lag_seconds).
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    const thread = options.thread ?? 'main';
    this.threadHeap = new Gauge({
      name: 'nyc_listings_thread_heap_bytes',
      help: "A thread's V8 heap: bytes used, and bytes reserved in all (total), by thread",
      labelNames: ['thread', 'state'] as const,
      registers: [this.registry],
      collect() {
        const heap = getHeapStatistics();
        this.set({ thread, state: 'used' }, heap.used_heap_size);
        this.set({ thread, state: 'total' }, heap.total_heap_size);
      },
    });
  }

  /** What the sources said at the scrape under way (each read once a scrape, however many gauges show it). */
  private snapshot: Snapshot = {};
  private sources: MetricSources = {};

  /**
   * Registers the gauges read from `sources` at each scrape. Call once.
   */
  observe(sources: MetricSources): void {
    this.sources = sources;
    const snap = () => this.snapshot;
    const gauge = (name: string, help: string, read: (s: Snapshot) => Reading | undefined, labelNames: string[] = []) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        collect() {
          const value = read(snap());
          this.reset();
          if (value === undefined) return;
          if (typeof value === 'number') this.set(value);
          else for (const { labels, value: v } of value) this.set(labels, v);
        },
      });
    for (const [name, help, read, labelNames] of OBSERVED_GAUGES) gauge(name, help, read, labelNames);
  }

  /** Another thread's metrics, added to each scrape ({@link include}). */
  private included: (() => Promise<MetricJson[]>) | null = null;

  /**
   * Adds the metrics `read` gives (another registry's `getMetricsAsJSON`: the background thread's) to every scrape,
   * each sample summed with this registry's of the same name and labels. Each metric is moved by one thread only,
   * and each thread observes its own sources, so a sum adds a value to zeros.
   */
  include(read: () => Promise<MetricJson[]>): void {
    this.included = read;
  }

  /** This registry's metrics as JSON (prom-client's `getMetricsAsJSON`), the observed gauges read first. */
  async json(): Promise<MetricJson[]> {
    await this.read();
    return this.registry.getMetricsAsJSON();
  }

  /** The text a scrape answers (Prometheus' exposition format), and its content type. */
  async scrape(): Promise<{ body: string; contentType: string }> {
    await this.read();
    if (!this.included) return { body: await this.registry.metrics(), contentType: this.registry.contentType };
    // The other thread down (restarting): this one's metrics still answer, /v1/health says why.
    const [own, other] = await Promise.all([this.registry.getMetricsAsJSON(), this.included().catch(() => [])]);
    const merged = AggregatorRegistry.aggregate([own, other]);
    return { body: await merged.metrics(), contentType: merged.contentType };
  }

  /** Reads every source once, for the observed gauges of the scrape under way. */
  private async read(): Promise<void> {
    const src = this.sources;
    const [hydration, webhooks] = await Promise.all([src.hydration?.(), src.webhooks?.()]);
    this.snapshot = {
      upstreams: src.upstreams?.(),
      hydration,
      webhooks,
      databasePool: src.databasePool?.() ?? undefined,
      searchIndex: src.searchIndex?.(),
      estimates: src.estimates?.(),
      valuation: src.valuation?.(),
      walCheckpoints: src.walCheckpoints?.() ?? undefined,
    };
  }
}

/** One metric as prom-client's `getMetricsAsJSON` gives it. */
export type MetricJson = MetricObjectWithValues<MetricValue<string>>;
