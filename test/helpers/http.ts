import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';

/** GET through the real app; returns status, headers and parsed JSON body. */
export async function get(app: FastifyInstance, url: string, key?: string) {
  const response = await app.inject({ method: 'GET', url, headers: key ? { authorization: `Bearer ${key}` } : {} });
  const body = response.body ? (JSON.parse(response.body) as any) : undefined;
  return { status: response.statusCode, headers: response.headers, body };
}

/** Asserts a problem+json answer with `status` and `code`; returns its body. */
export async function expectProblem(app: FastifyInstance, url: string, status: number, code: string, key?: string) {
  const res = await get(app, url, key);
  expect(res.status, `${url} -> ${JSON.stringify(res.body)}`).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code, instance: url.split('?')[0] });
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
  return res.body;
}

/** Every item of a search, following meta.links.next from `url`. */
export async function walk(app: FastifyInstance, url: string, key?: string): Promise<{ items: any[]; total: number; pages: number }> {
  const items: any[] = [];
  let next: string | null = url;
  let total = -1;
  let pages = 0;
  while (next) {
    const res = await get(app, next, key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    total = res.body.meta.total;
    items.push(...res.body.data);
    next = res.body.meta.links.next;
    pages++;
  }
  return { items, total, pages };
}

/** An answer read off a raw socket: status, lower-case headers, and the body text. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `head` (a whole HTTP request head, CRLF line ends, plus any body) to a raw TCP connection on
 * loopback and reads the answer until the server closes it (send `Connection: close`). For requests a
 * client library would refuse to write: absolute-form targets, control characters, oversized heads.
 */
export function rawRequest(port: number, head: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [headText, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = headText.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
  });
}

/** Every change event after cursor `since` (GET /v1/changes, `filter` appended to the query), following `meta.next` to the end. */
export async function feedSince(app: FastifyInstance, key: string, since: number, filter = ''): Promise<any[]> {
  const events: any[] = [];
  let cursor = String(since);
  for (;;) {
    const page = await get(app, `/v1/changes?since=${cursor}&perPage=500${filter}`, key);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    if (!page.body.data.length) return events;
    events.push(...page.body.data);
    cursor = page.body.meta.next;
  }
}
