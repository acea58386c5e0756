import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RefreshCoordinator } from '../../src/freshness/coordinator.js';

/** A promise and the function that settles it. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((yes) => {
    resolve = yes;
  });
  return { promise, resolve };
}

describe('RefreshCoordinator', () => {
  it('at a shutdown drops the queued refreshes, refuses new ones, and waits for the running ones only', async () => {
    const coordinator = new RefreshCoordinator(pino({ level: 'silent' }), 1);
    const gate = deferred();
    const ran: string[] = [];
    const slow = async () => {
      ran.push('rental:100');
      await gate.promise;
    };
    expect(coordinator.trigger('rental:100', slow)).toBe('started');
    expect(coordinator.trigger('sale:100', async () => ran.push('sale:100'))).toBe('started');
    expect(ran).toEqual(['rental:100']);
    let closed = false;
    const closing = coordinator.close().then(() => (closed = true));
    // The queued refresh is gone at once: waiting for it ends without it having run.
    await coordinator.wait('sale:100');
    expect(coordinator.isRunning('sale:100')).toBe(false);
    expect(coordinator.trigger('rental:200', async () => ran.push('rental:200'))).toBe('dropped');
    // The running one is waited for.
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    gate.resolve();
    await closing;
    expect(ran).toEqual(['rental:100']);
    expect(coordinator.isRunning('rental:100')).toBe(false);
  });

  it('idle() still waits for the queue: every refresh runs', async () => {
    const coordinator = new RefreshCoordinator(pino({ level: 'silent' }), 1);
    const ran: string[] = [];
    for (const key of ['a', 'b', 'c']) coordinator.trigger(key, async () => ran.push(key));
    await coordinator.idle();
    expect(ran).toEqual(['a', 'b', 'c']);
  });
});
