import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Long work written as a generator that yields between its steps (a column built, an order sorted), run either at once
 * ({@link runNow}) or with the event loop given a turn at each step ({@link runGivingTurns}): a build of a million
 * listings' columns held the event loop for seconds in one piece, and every request waited behind it.
 */
export type Steps<T> = Generator<void, T, void>;

/** The result of `steps`, run to the end without a pause. */
export function runNow<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** Milliseconds of work after which a long job gives the event loop a turn ({@link turnTaker}). */
export const TURN_AFTER_MS = 5;

/**
 * The turns of a long job that runs in batches or steps: `await turn()` between two of them gives the event loop a
 * turn (`setImmediate`) once `afterMs` of work ran since the last one, and goes on at once otherwise. A turn at every
 * step cost a whole pass of the event loop each time: under the soak's load, a delta of 200 listings built in some
 * forty steps took over a second (docs/benchmark-history.md).
 */
export function turnTaker(afterMs = TURN_AFTER_MS): () => Promise<void> {
  let last = performance.now();
  return async () => {
    if (performance.now() - last < afterMs) return;
    await nextTurn();
    last = performance.now();
  };
}

/** The result of `steps`, the event loop having a turn between steps once {@link TURN_AFTER_MS} of work ran ({@link turnTaker}). */
export async function runGivingTurns<T>(steps: Steps<T>): Promise<T> {
  const turn = turnTaker();
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    await turn();
  }
}
