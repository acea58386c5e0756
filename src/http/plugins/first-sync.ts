import type { FastifyInstance } from 'fastify';
import { ReadMemo } from '../../lib/read-memo.js';
import { Problem } from '../problem.js';
import { accessOf } from './auth.js';

/** What the 503 of an API-only instance says, in the OpenAPI document and the answer. */
export const FIRST_SYNC_PENDING =
  "UNAVAILABLE: an API-only instance whose mirror holds no listing yet (the worker's first sync has not finished); retry after `Retry-After` seconds.";

/**
 * For an API-only instance (`serve --api-only`), which never syncs itself: every route but the public
 * ones (health, the documents, the explorer's page) answers 503 `UNAVAILABLE` with `Retry-After` while
 * the shared mirror holds no active listing. Once it holds one the gate opens for good (the mirror is
 * never emptied); until then the store is asked at most once a second, however many requests wait.
 */
export function registerFirstSyncGate(app: FastifyInstance, deps: { hasData: () => Promise<boolean>; retryAfterSeconds: number }): void {
  let open = false;
  // This process writes nothing to the mirror: only the time limit makes it ask again.
  const hasData = new ReadMemo(1, () => 0, deps.hasData);
  app.addHook('onRequest', async (request) => {
    if (open || accessOf(request) === 'public') return;
    open = await hasData.get().catch(() => false);
    if (open) return;
    throw new Problem(
      'UNAVAILABLE',
      "The mirror holds no listing yet: this instance serves what the worker syncs, and the worker's first sync has not finished.",
      {
        retryAfter: deps.retryAfterSeconds,
        headers: { 'Retry-After': String(deps.retryAfterSeconds) },
      },
    );
  });
}
