import { hash } from 'node:crypto';
import etag from '@fastify/etag';
import type { FastifyInstance } from 'fastify';

interface EnvelopeMeta {
  dataAge?: string;
  freshnessThreshold?: number;
  links?: Record<string, string | null>;
}

/**
 * `Cache-Control` at `nowMs` of an answer whose data was confirmed at `confirmedMs` (ms since the epoch, its
 * `meta.dataAge`) and stays fresh `freshnessThreshold` seconds: private, for the whole seconds left.
 */
export function cacheControl(freshnessThreshold: number, confirmedMs: number, nowMs: number): string {
  return `private, max-age=${Math.max(0, Math.floor(freshnessThreshold - (nowMs - confirmedMs) / 1000))}`;
}

/** The RFC 8288 `Link` header value for `meta.links`: `<path>; rel="first"`, ... (null links left out). */
export function linkHeader(links: Record<string, string | null>): string {
  return ['first', 'prev', 'next', 'last']
    .filter((rel) => links[rel])
    .map((rel) => `<${links[rel]}>; rel="${rel}"`)
    .join(', ');
}

/**
 * An answer's `Vary`: what a key sees depends on its plan, and its bytes on the encoding asked, added to a Vary already
 * set (CORS sets `Origin` when it allows a list of origins). In lower case, as compression looks for `accept-encoding`
 * so: it does not add it a second time.
 */
export function varyOf(already: unknown): string {
  return already ? `${already}, authorization, accept-encoding` : 'authorization, accept-encoding';
}

/**
 * HTTP caching of API answers: a strong `ETag` on every 200 GET and `If-None-Match` answered 304
 * (@fastify/etag); for answers in the `{data, meta}` envelope, `Last-Modified` from `meta.dataAge`,
 * `Cache-Control: private, max-age=` the seconds left in the freshness window, and `Link` (RFC 8288)
 * with the pagination links of `meta.links`. `Vary: authorization, accept-encoding` everywhere: what a
 * key sees depends on its plan.
 */
export async function registerCaching(app: FastifyInstance, deps: { clock: () => Date }): Promise<void> {
  // The plugin's own SHA-1, one-shot: no Hash object per answer (the same ETags as its default).
  await app.register(etag, { weak: false, hashFn: (payload) => hash('sha1', payload, 'base64') });
  // Answers of one scope share their dataAge until it syncs again: its HTTP date is written once.
  let lastModified = { dataAge: '', confirmed: 0, header: '' };
  app.addHook('preSerialization', (_request, reply, payload: unknown, done) => {
    const meta = (payload as { meta?: EnvelopeMeta } | null)?.meta;
    if (reply.statusCode === 200 && meta?.dataAge) {
      if (meta.dataAge !== lastModified.dataAge) {
        const confirmed = Date.parse(meta.dataAge);
        lastModified = { dataAge: meta.dataAge, confirmed, header: new Date(confirmed).toUTCString() };
      }
      reply.header('last-modified', lastModified.header);
      reply.header('cache-control', cacheControl(meta.freshnessThreshold ?? 0, lastModified.confirmed, deps.clock().getTime()));
      if (meta.links) {
        const link = linkHeader(meta.links);
        if (link) reply.header('link', link);
      }
    }
    done(null, payload);
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('vary', varyOf(reply.getHeader('vary')));
    done(null, payload);
  });
}
