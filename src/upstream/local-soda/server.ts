import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SodaRow } from '../../domain/city-records.js';
import { parseSoql, runSoql, SoqlError } from './soql.js';
import { holdable, NO_FAULTS, rollFault, type Faults } from '../faults.js';

/** The local emulator for NYC Open Data's SODA API, on loopback. */
export interface LocalSoda {
  /** Base URL: datasets answer at `{url}/resource/<id>.json`. */
  url: string;
  /**
   * The rows a dataset serves, loaded on first use (tests change them: push rows to publish them, with a
   * later `:updated_at`, or splice them out).
   */
  rows: (dataset: string) => Promise<SodaRow[]>;
  /** Answers every request with this status (and SODA's error body) until set back to null (tests). */
  failWith: (status: number | null) => void;
  /**
   * Faults injected into a share of requests (`LOCAL_SODA_FAULTS`; tests change them live). SODA's forms: `block`
   * is a 429 (throttled), `error` a 503, `graphqlError` a 500 with SODA's error body; `on` is not used here.
   */
  faults: Faults;
  /** The path and query of every request answered, in order. */
  requests: string[];
  close: () => Promise<void>;
}

/**
 * Starts the local SODA emulator: `GET /resource/<dataset>.json` with the SoQL subset of `soql.ts`, JSON
 * arrays of string-valued rows, `X-SODA2-Fields` and `Last-Modified` (the latest `:updated_at`); 404 for an
 * unknown dataset, 400 with `{message}` for a query it does not answer. An `X-App-Token` is accepted and
 * not checked. `loaders` read each dataset's rows when it is first asked for (the files take seconds).
 */
export async function startLocalSoda(
  loaders: Record<string, () => Promise<SodaRow[]>>,
  options: { host?: string; port?: number; faults?: Partial<Faults> } = {},
): Promise<LocalSoda> {
  const faults: Faults = { ...NO_FAULTS, ...options.faults };
  const held = new Set<() => void>();
  const loaded = new Map<string, Promise<SodaRow[]>>();
  const rows = (dataset: string) => {
    let p = loaded.get(dataset);
    if (!p) {
      p = loaders[dataset]();
      loaded.set(dataset, p);
    }
    return p;
  };
  let failing: number | null = null;
  const requests: string[] = [];
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json;charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    requests.push(`${url.pathname}${url.search}`);
    if (failing !== null) return send(res, failing, { message: 'Service unavailable', error: true });
    const fault = rollFault(faults);
    if (fault === 'hang') return holdable(2 ** 31 - 1, held);
    if (fault === 'block') return send(res, 429, { message: 'Too many requests', error: true });
    if (fault === 'error') return send(res, 503, { message: 'Service unavailable', error: true });
    if (fault === 'graphqlError') return send(res, 500, { message: 'Internal error', error: true });
    if (fault === 'malformed') {
      res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' });
      return res.end('[{"borough": "1", "neigh');
    }
    if (fault === 'reset') return req.socket.destroy();
    if (fault === 'stall') await holdable(faults.stallMs, held);
    const m = /^\/resource\/([a-z0-9]{4}-[a-z0-9]{4})\.json$/.exec(url.pathname);
    if (req.method !== 'GET' || !m || !loaders[m[1]]) return send(res, 404, { message: 'Not found', error: true });
    const all = await rows(m[1]);
    const columns = new Set<string>();
    for (const row of all.slice(0, 1000)) for (const k of Object.keys(row)) if (!k.startsWith(':')) columns.add(k);
    try {
      const query = parseSoql(url.searchParams, columns);
      const answer = runSoql(all, query);
      const lastModified = all.reduce((max, r) => (r[':updated_at'] > max ? r[':updated_at'] : max), '');
      send(res, 200, answer, {
        'x-soda2-fields': JSON.stringify(query.select.columns === '*' ? [...columns] : query.select.columns),
        ...(lastModified ? { 'last-modified': new Date(lastModified).toUTCString() } : {}),
      });
    } catch (error) {
      if (error instanceof SoqlError) return send(res, 400, { message: error.message, error: true });
      throw error;
    }
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => send(res, 500, { message: error.message, error: true }));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    rows,
    failWith: (status) => {
      failing = status;
    },
    faults,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const release of held) release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
