import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { Metrics } from '../../metrics/metrics.js';

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

interface Entry {
  /**
   * The answer's `meta` alone (not its data, which the body holds): on a hit the hooks that set headers
   * from `meta` read it again. Keeping the data objects too would hold several times the body's size.
   */
  meta: unknown;
  /**
   * The same answer serialized once by the route's serializer, as bytes: a Buffer is compact and outside
   * the JavaScript heap, where the serializer's string (built by concatenation) may take several times its length.
   */
  body: Buffer;
  /** Its ETag (of the plain body, as @fastify/etag makes it before any compression). */
  etag: string | undefined;
  /** Milliseconds since the epoch after which the entry is not used. */
  until: number;
}

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

/**
 * The answer cache: the serialized JSON answers of opted-in GET routes (`config.answerCache`), kept
 * from the second time a request is asked (admission, below) and reused when the same caller plan asks
 * the same URL with the same `Accept`, while this process has written nothing to the mirror since, for
 * at most `readCacheSeconds`, and never past the moment the data turns stale.
 * Only answers whose `meta.source` is `cached` and that started no refresh are kept, so a request that
 * must judge stale data or trigger a refresh always runs the route. Rate limits, quotas, auth and
 * every header are applied to a reused answer exactly as to a computed one (this runs after them, and
 * the hooks that set headers from `meta` read the kept meta); only the route's work and the
 * serialization are skipped. Another instance's writes show within `readCacheSeconds`, as in the read caches.
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
  const keys = new WeakMap<FastifyRequest, string>();
  const held = () => options.metrics?.answerCacheBytes.set(entries.calculatedSize);
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

  /** The kept answer of `key` if still usable, sent on `reply` (true); false when there is none. */
  const answerFromCache = (key: string, reply: FastifyReply): boolean => {
    const entry = entries.get(key);
    if (!entry || entry.until <= options.clock().getTime()) return false;
    // With the ETag set, @fastify/etag does not hash the body again (it still answers If-None-Match).
    if (entry.etag) reply.header('etag', entry.etag);
    // A Buffer is a valid serialized payload; the serializer type says string only.
    reply
      .type('application/json; charset=utf-8')
      .serializer(() => entry.body as unknown as string)
      .send({ meta: entry.meta });
    return true;
  };

  app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done) => {
    if (request.method !== 'GET' || !request.routeOptions.config?.answerCache) return done();
    const key = `${options.writeCounts()}|${request.principal?.plan ?? ''}|${request.headers.accept ?? ''}|${request.url}`;
    const count = (outcome: 'hit' | 'miss') => options.metrics?.answerCache.inc({ outcome });
    // Answered here, so `done` is not called.
    if (answerFromCache(key, reply)) return void count('hit');
    const inFlight = computing.get(key);
    if (inFlight) {
      // Kept once computed: answered from the cache. Otherwise (not cacheable, an error, the client gone) computed here.
      void inFlight.done.then(() => {
        if (answerFromCache(key, reply)) return void count('hit');
        count('miss');
        keys.set(request, key);
        done();
      });
      return;
    }
    count('miss');
    if (askedOnce.has(key)) {
      keys.set(request, key);
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

  // A computed answer worth keeping is noted before serialization (its meta says so), and kept with its
  // body once serialized, by whatever serializer the route used (its schema's, or JSON.stringify for
  // sparse fields). This onSend hook runs after @fastify/etag's (registered before it) and before the
  // route-level one of compression: the body is still plain and its ETag is set.
  const pending = new WeakMap<FastifyRequest, { key: string; meta: CacheableMeta; until: number }>();
  app.addHook('preSerialization', (request, reply, payload: unknown, done) => {
    const key = keys.get(request);
    // No key: not opted in, asked for the first time, or answered from the cache (a hit sets none).
    // Only JSON is kept (no content type set yet means the route's JSON serializer).
    const json = () => String(reply.getHeader('content-type') ?? 'application/json').startsWith('application/json');
    if (key !== undefined && reply.statusCode === 200 && json()) {
      const meta = (payload as { meta?: CacheableMeta } | null)?.meta;
      const until = reusableUntil(meta, options);
      if (until !== null) pending.set(request, { key, meta: meta!, until });
    }
    done(null, payload);
  });
  app.addHook('onSend', (request, reply, body: unknown, done) => {
    const kept = pending.get(request);
    if (kept && typeof body === 'string' && reply.statusCode === 200) {
      const etag = reply.getHeader('etag');
      // A Buffer of its own: a small Buffer.from() is a slice of a shared 8 KB pool, which it would keep alive.
      const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(body));
      bytes.write(body);
      entries.set(kept.key, { meta: kept.meta, body: bytes, etag: typeof etag === 'string' ? etag : undefined, until: kept.until });
      held();
    }
    settle(request);
    done(null, body);
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
