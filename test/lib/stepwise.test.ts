import { describe, expect, it } from 'vitest';
import { runGivingTurns, runNow, turnTaker, type Steps } from '../../src/lib/stepwise.js';

/** Busy-waits `ms` milliseconds: work that holds the event loop. */
function work(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Whether a callback queued with setImmediate now has run by the time `during` resolves: the event loop had a turn. */
async function hadTurn(during: () => Promise<void>): Promise<boolean> {
  let ran = false;
  setImmediate(() => {
    ran = true;
  });
  await during();
  return ran;
}

describe('turnTaker', () => {
  it('goes on at once while less than its time of work ran, and gives a turn once it ran', async () => {
    // Times far apart, so that a pause of a busy machine between two lines cannot change what is seen.
    expect(await hadTurn(turnTaker(60_000))).toBe(false);
    const turn = turnTaker(200);
    work(205);
    expect(await hadTurn(turn)).toBe(true);
    // The turn resets the clock: right after it, no turn.
    expect(await hadTurn(turn)).toBe(false);
  });

  it('runGivingTurns gives the event loop a turn within a long job, runNow none, and both give its result', async () => {
    function* steps(): Steps<number> {
      let sum = 0;
      for (let i = 1; i <= 20; i++) {
        work(1);
        sum += i;
        yield;
      }
      return sum;
    }
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    expect(runNow(steps())).toBe(210);
    expect(ran).toBe(false);
    expect(await runGivingTurns(steps())).toBe(210);
    expect(ran).toBe(true);
  });
});
