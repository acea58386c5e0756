import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LRUCache } from 'lru-cache';
import { cacheControl, varyOf } from './caching.js';

// The answers the answer cache keeps (http/plugins/answer-cache.ts): what one holds, how it is kept as written, and
// how it is written again.

/** A kept answer: its bytes as written, the headers the route set, its freshness, and until when it may be reused. */
export interface Entry {
  /**
   * When the answer's data was confirmed (ms since the epoch, its `meta.dataAge`) and for how many seconds it stays
   * fresh: each hit's `Cache-Control` counts down from them.
   */
  freshness: { confirmedMs: number; freshnessThreshold: number };
  /**
   * The answer as it was written: serialized by the route's serializer, then compressed when the request's
   * `Accept-Encoding` asked for it and compression did it in one call (else before compression: see `written`). A
   * Buffer is compact and outside the JavaScript heap, where the serializer's string (built by concatenation) may
   * take several times its length.
   */
  body: Buffer;
  /**
   * The headers the route and the send path set (the media type, `ETag` of the plain body, `Last-Modified`,
   * `Link`, `Content-Encoding`...): every one not yet set when the cache was asked, but `Content-Length` (Fastify
   * writes it from the bytes), `Cache-Control` (counted down on each hit) and `Vary` (the caching hook sets it on
   * every answer). The ones set before (request id, CORS, rate limits) are each request's own.
   */
  headers: Record<string, string | number | string[]>;
  /**
   * Whether `body` is what was written: then a hit writes it itself. Otherwise (an answer compression streamed) it
   * is the body before compression, and a hit goes through the send path to be compressed again.
   */
  written: boolean;
  /** Milliseconds since the epoch after which the entry is not used. */
  until: number;
}

/** Headers of a kept answer that are not kept: see {@link Entry.headers}. */
export const NOT_KEPT = new Set(['content-length', 'cache-control', 'vary']);

/** What a computed answer is noted with before it is written: its key, and the headers already set then. */
export interface Admitted {
  key: string;
  before: Set<string>;
}

/** An admitted answer worth keeping, noted before serialization: its freshness, until when, its bytes before compression. */
export type Pending = Admitted & Pick<Entry, 'freshness' | 'until'> & { plain?: string };

/**
 * A kept answer written as the send path wrote it, past that path: the request's own headers (its id, CORS, the
 * limits), the kept ones, and those the send path's hooks set on every answer, with `control` as its
 * Cache-Control. onResponse hooks still run.
 */
export function writeDirectly(entry: Entry, control: string, reply: FastifyReply): void {
  const headers: OutgoingHttpHeaders = reply.getHeaders() as OutgoingHttpHeaders;
  Object.assign(headers, entry.headers);
  headers['cache-control'] = control;
  headers.vary = varyOf(headers.vary);
  headers['content-length'] = entry.body.length;
  reply.hijack();
  reply.raw.writeHead(200, headers).end(entry.body);
}

/** The kept answer of `key` if still usable, sent on `reply` (true); false when there is none. */
export function answerFromCache(
  entries: LRUCache<string, Entry>,
  now: number,
  key: string,
  request: FastifyRequest,
  reply: FastifyReply,
): boolean {
  const entry = entries.get(key);
  if (!entry || entry.until <= now) return false;
  const control = cacheControl(entry.freshness.freshnessThreshold, entry.freshness.confirmedMs, now);
  const conditional = request.headers['if-none-match'] !== undefined;
  if (entry.written && !conditional) {
    writeDirectly(entry, control, reply);
    return true;
  }
  reply.header('cache-control', control);
  // The client's copy is current: @fastify/etag answers 304 to the empty body, whose encoding is none.
  if (conditional && unchanged(request.headers['if-none-match'], entry.headers.etag)) {
    const { 'content-encoding': _encoding, ...headers } = entry.headers;
    reply.headers(headers).send('');
    return true;
  }
  // A Buffer is sent as it is: no serializer and no preSerialization hook. With its ETag and Content-Encoding
  // set, @fastify/etag does not hash it again and compression leaves it be.
  reply.headers(entry.headers).send(entry.body);
  return true;
}

/**
 * The last onSend hook of a cached route: keeps an admitted answer as written, then tells `after`. Last: after
 * @fastify/etag's and the route-level one of compression, so the bytes are those written and every header is set
 * (routes get it as they are added; compression adds its own first). An answer compression streams (one larger than
 * its `syncThreshold`) is kept before compression, without its Content-Encoding: a hit is then compressed again, as a
 * computed answer is.
 */
export function keeper(
  entries: LRUCache<string, Entry>,
  pending: WeakMap<FastifyRequest, Pending>,
  after: (request: FastifyRequest) => void,
) {
  return (request: FastifyRequest, reply: FastifyReply, body: unknown, done: (error: null, body?: unknown) => void) => {
    const kept = pending.get(request);
    const written = typeof body === 'string' || Buffer.isBuffer(body) ? body : undefined;
    const bytesOf = written ?? kept?.plain;
    if (kept && reply.statusCode === 200 && bytesOf !== undefined) {
      const headers: Entry['headers'] = {};
      for (const [name, value] of Object.entries(reply.getHeaders()))
        if (value !== undefined && !kept.before.has(name) && !NOT_KEPT.has(name)) headers[name] = value;
      if (written === undefined) delete headers['content-encoding'];
      // A Buffer of its own: a small Buffer.from() is a slice of a shared 8 KB pool, which it would keep alive.
      const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(bytesOf));
      if (typeof bytesOf === 'string') bytes.write(bytesOf);
      else bytesOf.copy(bytes);
      entries.set(kept.key, { freshness: kept.freshness, body: bytes, headers, written: written !== undefined, until: kept.until });
    }
    after(request);
    done(null, body);
  };
}

/** Whether `If-None-Match` names this ETag, by @fastify/etag's rule (the same, or either one weak). */
export function unchanged(ifNoneMatch: string | undefined, etag: unknown): boolean {
  return (
    ifNoneMatch !== undefined &&
    typeof etag === 'string' &&
    (ifNoneMatch === etag || ifNoneMatch === `W/${etag}` || `W/${ifNoneMatch}` === etag)
  );
}
