import { describe, expect, it } from 'vitest';
import { SingleFlight } from '../../src/lib/single-flight.js';

/** A promise and the functions that settle it. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

describe('SingleFlight', () => {
  it('overlapping calls of one key share a run; other keys run apart', async () => {
    const flights = new SingleFlight<string, number>();
    const gate = deferred<number>();
    let started = 0;
    const work = () => {
      started++;
      return gate.promise;
    };
    const [a, b] = [flights.run('k', work), flights.run('k', work)];
    const other = flights.run('other', async () => 7);
    expect(started).toBe(1);
    expect(flights.has('k')).toBe(true);
    gate.resolve(42);
    expect(await Promise.all([a, b, other])).toEqual([42, 42, 7]);
    expect(flights.size).toBe(0);
  });

  it('a call after a run settled starts a new one, after a failure too', async () => {
    const flights = new SingleFlight<string, number>();
    const failing = deferred<number>();
    const first = flights.run('k', () => failing.promise);
    failing.reject(new Error('down'));
    await expect(first).rejects.toThrow('down');
    expect(flights.has('k')).toBe(false);
    expect(await flights.run('k', async () => 2)).toBe(2);
  });
});
