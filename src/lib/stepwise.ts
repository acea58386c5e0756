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

/** The result of `steps`, the event loop having a turn (`setImmediate`) before each step after the first. */
export async function runGivingTurns<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    await nextTurn();
  }
}
