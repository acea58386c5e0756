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
