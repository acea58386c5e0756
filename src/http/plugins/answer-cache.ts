import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { Metrics } from '../../metrics/metrics.js';
import { answerFromCache, type Admitted, type Entry, keeper, type Pending } from './cached-answers.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** true: identical requests to this GET route may be answered from the {@link registerAnswerCache answer cache}. */
    answerCache?: boolean;
  }
}

/** The freshness part of an answer's meta (spec 3): what decides whether it may be reused, and for how long. */
interface CacheableMeta {
  dataAge?: string;
  source?: string;
  freshnessThreshold?: number;
  refreshTriggered?: boolean;
}

/** How many recently asked keys the admission check remembers (a key is some 150 bytes). */
const DOORKEEPER_KEYS = 20_000;

export interface AnswerCacheOptions {
  /** This process's write counts of the mirror's tables: an entry is only found while they are unchanged. */
  writeCounts: () => string;
  /** Seconds an answer may be reused (READ_CACHE_SECONDS: how long another instance's write may take to show). */
  readCacheSeconds: number;
  /** The most bytes of serialized answers held (each counted with about a kilobyte for its key and meta). */
  maxBytes: number;
  clock: () => Date;
  /** Where each look-up is counted: a hit (answered from the cache) or a miss (computed). */
  metrics?: Metrics;
}

/** Drops the answers past their time every `readCacheSeconds` (until the app closes), then tells `held`. */
function dropExpired(app: FastifyInstance, entries: LRUCache<string, Entry>, options: AnswerCacheOptions, held: () => void): void {
  const sweep = setInterval(() => {
    const now = options.clock().getTime();
    const past: string[] = [];
    for (const [key, entry] of entries.entries()) if (entry.until <= now) past.push(key);
    for (const key of past) entries.delete(key);
    held();
  }, Math.max(0.1, options.readCacheSeconds) * 1000);
  sweep.unref();
  app.addHook('onClose', (_instance, done) => {
    clearInterval(sweep);
    done();
  });
}

/**
 * The cache key of a request: the write counts (`writeCounts`), the caller's plan, Accept, Accept-Encoding,
 * X-No-Compression and the URL, joined by a line feed, which no header value nor URL may hold: no two distinct
 * requests share a key (docs/performance.md's registry).
 */
export function answerKey(request: FastifyRequest, writeCounts: string): string {
  const { headers } = request;
  const noCompression = headers['x-no-compression'] === undefined ? '' : 'x';
  return `${writeCounts}\n${request.principal?.plan ?? ''}\n${headers.accept ?? ''}\n${headers['accept-encoding'] ?? ''}\n${noCompression}\n${request.url}`;
}

/**
 * The preSerialization hook: notes an admitted 200 JSON answer whose meta makes it reusable (with its freshness and
 * until when), so that the last onSend hook keeps it as written, by whatever serializer the route used.
 */
function notePending(admitted: WeakMap<FastifyRequest, Admitted>, pending: WeakMap<FastifyRequest, Pending>, options: AnswerCacheOptions) {
  return (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
    const asked = admitted.get(request);
    // Not admitted: not opted in, asked for the first time, or answered from the cache (a Buffer skips this hook).
    // Only JSON is kept (no content type set yet means the route's JSON serializer).
    const json = () => String(reply.getHeader('content-type') ?? 'application/json').startsWith('application/json');
    if (asked !== undefined && reply.statusCode === 200 && json()) {
      const meta = (payload as { meta?: CacheableMeta } | null)?.meta;
      const until = reusableUntil(meta, options);
      if (until !== null) {
        const freshness = { confirmedMs: Date.parse(meta!.dataAge!), freshnessThreshold: meta!.freshnessThreshold! };
        pending.set(request, { ...asked, freshness, until });
      }
    }
    done(null, payload);
  };
}

/**
 * The answer cache: the JSON answers of opted-in GET routes (`config.answerCache`), kept as written (compressed
 * when asked) from the second time a request is asked (admission, below) and reused when the same caller plan
 * asks the same URL with the same `Accept`, `Accept-Encoding` and `X-No-Compression`, while this process has
 * written nothing to the mirror since, for at most `readCacheSeconds`, and never past the moment the data turns
 * stale.
 * Only answers whose `meta.source` is `cached` and that started no refresh are kept, so a request that
 * must judge stale data or trigger a refresh always runs the route. Rate limits, quotas, auth and the
 * request's own headers are applied to a reused answer exactly as to a computed one (this runs after them); a hit
 * skips the route, the serialization, the hooks that read `meta` (its headers are kept) and the compression: it
 * writes the kept bytes and headers itself, and a conditional one (`If-None-Match`), or one whose answer compression
 * streamed, goes through the send path with them, where @fastify/etag answers 304 and compression compresses.
 * Another instance's writes show within `readCacheSeconds`, as in the read caches.
 * While an admitted answer is being computed, identical requests wait for it and are answered from the
 * cache (single flight); each is still counted and limited before it waits. Answers past their time are dropped every
 * `readCacheSeconds`: left until pushed out, they filled the cache to `maxBytes` under distinct searches and held that
 * memory for nothing (16 MB at a million listings).
 */
export function registerAnswerCache(app: FastifyInstance, options: AnswerCacheOptions): void {
  const entries = new LRUCache<string, Entry>({ maxSize: Math.max(1, options.maxBytes), sizeCalculation: (e) => e.body.length + 1000 });
  // Admission: an answer is kept the second time its key is asked within the last DOORKEEPER_KEYS keys.
  // Requests that never repeat (a random listing, a price typed once) then cost no copy and no eviction,
  // and the kept answers are not pushed out, nor the old generation churned, by ones nobody asks again.
  const askedOnce = new LRUCache<string, true>({ max: DOORKEEPER_KEYS });
  const held = () => options.metrics?.answerCacheBytes.set(entries.calculatedSize);
  dropExpired(app, entries, options, held);
  // Single flight: the key of an admitted answer being computed, and what resolves when it is kept or
  // given up. Identical requests that arrive meanwhile wait for it instead of computing it too: when a kept
  // answer expires (every READ_CACHE_SECONDS), up to one request per connection asked it again at once.
  const computing = new Map<string, { done: Promise<void>; resolve: () => void }>();
  const computedBy = new WeakMap<FastifyRequest, string>();
  const settle = (request: FastifyRequest) => {
    const key = computedBy.get(request);
    if (key === undefined) return;
    computedBy.delete(request);
    computing.get(key)?.resolve();
    computing.delete(key);
  };

  const admitted = new WeakMap<FastifyRequest, Admitted>();
  app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done) => {
    if (request.method !== 'GET' || !request.routeOptions.config?.answerCache) return done();
    const key = answerKey(request, options.writeCounts());
    const count = (outcome: 'hit' | 'miss') => options.metrics?.answerCache.inc({ outcome });
    const admit = () => admitted.set(request, { key, before: new Set(Object.keys(reply.getHeaders())) });
    // Answered here, so `done` is not called.
    if (answerFromCache(entries, options.clock().getTime(), key, request, reply)) return void count('hit');
    const inFlight = computing.get(key);
    if (inFlight) {
      // Kept once computed: answered from the cache. Otherwise (not cacheable, an error, the client gone) computed here.
      void inFlight.done.then(() => {
        if (answerFromCache(entries, options.clock().getTime(), key, request, reply)) return void count('hit');
        count('miss');
        admit();
        done();
      });
      return;
    }
    count('miss');
    if (askedOnce.has(key)) {
      admit();
      let resolve!: () => void;
      const flight = new Promise<void>((r) => (resolve = r));
      computing.set(key, { done: flight, resolve });
      computedBy.set(request, key);
    } else askedOnce.set(key, true);
    done();
  });
  // The flight ends once the answer is kept (onSend, below), or when the request ends otherwise.
  app.addHook('onResponse', (request, _reply, done) => {
    settle(request);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    settle(request);
    done();
  });

  // A computed answer worth keeping is noted before serialization (its meta says so), and kept as written, by
  // whatever serializer the route used (its schema's, or JSON.stringify for sparse fields) and compressed or not.
  const pending = new WeakMap<FastifyRequest, Pending>();
  app.addHook('preSerialization', notePending(admitted, pending, options));
  // The serialized answer before compression (this hook runs before the route-level one of compression).
  app.addHook('onSend', (request, _reply, body: unknown, done) => {
    const kept = pending.get(request);
    if (kept && typeof body === 'string') kept.plain = body;
    done(null, body);
  });
  const keep = keeper(entries, pending, (request) => {
    held();
    settle(request);
  });
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.config?.answerCache) return;
    const onSend = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : [];
    route.onSend = [...onSend, keep as never];
  });
}

/**
 * Until when (ms since the epoch) an answer with this meta may be reused: `readCacheSeconds` from now, but not
 * past the instant its data turns stale; null when it must not be reused (no freshness meta, not
 * `cached`, or it started a refresh).
 */
function reusableUntil(meta: CacheableMeta | undefined, options: AnswerCacheOptions): number | null {
  if (!meta?.dataAge || meta.source !== 'cached' || meta.refreshTriggered || meta.freshnessThreshold === undefined) return null;
  const now = options.clock().getTime();
  const staleAt = Date.parse(meta.dataAge) + meta.freshnessThreshold * 1000;
  const until = Math.min(now + options.readCacheSeconds * 1000, staleAt);
  return until > now ? until : null;
}
