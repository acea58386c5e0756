import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { QuotaMeter } from '../../src/access/quota-meter.js';
import { openStore, type Store } from '../../src/store/database.js';
import { QuotaRepository } from '../../src/store/quota-repository.js';
import { waitFor } from '../helpers/wait.js';

// Monthly counts in memory, written in batches (src/access/quota-meter.ts), over the real repository on a
// throw-away SQLite database.
const MONTH = '2026-11';
const DAY = '2026-11-24';
let store: Store;
let repository: QuotaRepository;
let logged: { level: number; msg: string; subjects?: number }[];
const logger = () =>
  pino(
    { level: 'info' },
    new Writable({
      write: (chunk, _e, done) => {
        logged.push(JSON.parse(chunk.toString()));
        done();
      },
    }),
  );
const stored = (subject: string) => repository.used(subject, MONTH);

beforeEach(async () => {
  store = await openStore(':memory:');
  repository = new QuotaRepository(store.db);
  logged = [];
});
afterEach(async () => {
  vi.useRealTimers();
  await store.close();
});

describe('monthly counts', () => {
  it("a count starts from the stored month and adds this instance's requests; a flush writes only the difference", async () => {
    await repository.addAll([{ subject: 'key:a', day: DAY, delta: 40 }]);
    const meter = new QuotaMeter(repository, 3600, logger());
    expect(await meter.count('key:a', DAY)).toBe(41);
    expect(await meter.count('key:a', DAY)).toBe(42);
    expect(await meter.count('key:b', DAY)).toBe(1);
    expect(await meter.count('key:a', '2026-12-01')).toBe(1);
    expect(await stored('key:a')).toBe(40);
    await meter.flush();
    expect([await stored('key:a'), await stored('key:b'), await repository.used('key:a', '2026-12')]).toEqual([42, 1, 1]);
    // Nothing left to write: the database is not touched.
    const writes = vi.spyOn(repository, 'addAll');
    await meter.flush();
    expect(writes).not.toHaveBeenCalled();
    expect(await stored('key:a')).toBe(42);
    expect(await meter.used('key:a', MONTH)).toBe(42);
    await meter.close();
  });

  it('a request given back (304) is taken off before the write; one never counted changes nothing', async () => {
    const meter = new QuotaMeter(repository, 3600, logger());
    await meter.count('ip:1', DAY);
    await meter.count('ip:1', DAY);
    meter.uncount('ip:1', DAY);
    meter.uncount('ip:2', DAY);
    expect(await meter.used('ip:1', MONTH)).toBe(1);
    expect(await meter.used('ip:2', MONTH)).toBe(0);
    await meter.close();
    expect([await stored('ip:1'), await stored('ip:2')]).toEqual([1, 0]);
  });

  it('used is never below zero', async () => {
    const meter = new QuotaMeter(repository, 3600, logger());
    await meter.used('ip:1', MONTH);
    meter.uncount('ip:1', DAY);
    expect(await meter.used('ip:1', MONTH)).toBe(0);
    await meter.close();
  });

  it('the first requests of a subject read the stored month once, together', async () => {
    await repository.addAll([{ subject: 'key:a', day: DAY, delta: 10 }]);
    const reads = vi.spyOn(repository, 'used');
    const meter = new QuotaMeter(repository, 3600, logger());
    const counts = await Promise.all([meter.count('key:a', DAY), meter.count('key:a', DAY), meter.count('key:a', DAY)]);
    expect(counts.sort()).toEqual([11, 12, 13]);
    expect(reads).toHaveBeenCalledTimes(1);
    await meter.close();
  });

  it('a failed read of the stored month is read again by the next request', async () => {
    await repository.addAll([{ subject: 'key:a', day: DAY, delta: 10 }]);
    vi.spyOn(repository, 'used').mockRejectedValueOnce(new Error('database away'));
    const meter = new QuotaMeter(repository, 3600, logger());
    await expect(meter.count('key:a', DAY)).rejects.toThrow('database away');
    expect(await meter.count('key:a', DAY)).toBe(11);
    await meter.close();
  });
});

describe('writing in batches', () => {
  it('counts are written within flushSeconds of the first unwritten request, without a call to flush', async () => {
    const meter = new QuotaMeter(repository, 0.05, logger());
    await meter.count('key:a', DAY);
    await waitFor(async () => (await stored('key:a')) === 1, 'the timed flush');
    await meter.count('key:a', DAY);
    await waitFor(async () => (await stored('key:a')) === 2, 'a second timed flush');
    await meter.close();
  });

  it('a request counted while a write is held goes into the next write (issue 29: pending -= written)', async () => {
    const meter = new QuotaMeter(repository, 3600, logger());
    await meter.count('key:a', DAY);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const write = repository.addAll.bind(repository);
    vi.spyOn(repository, 'addAll').mockImplementationOnce(async (items) => {
      await held;
      return write(items);
    });
    const flushing = meter.flush();
    await waitFor(async () => vi.mocked(repository.addAll).mock.calls.length === 1, 'the write to start');
    expect(await meter.count('key:a', DAY)).toBe(2);
    release();
    await flushing;
    expect(await stored('key:a')).toBe(1);
    expect(await meter.used('key:a', MONTH)).toBe(2);
    await meter.close();
    expect(await stored('key:a')).toBe(2);
  });

  it('a failed write is logged, kept, and written by the next flush', async () => {
    const meter = new QuotaMeter(repository, 3600, logger());
    await meter.count('key:a', DAY);
    await meter.count('key:b', DAY);
    vi.spyOn(repository, 'addAll').mockRejectedValueOnce(new Error('disk full'));
    await meter.flush();
    expect(logged).toMatchObject([{ level: 40, msg: 'quota counts not written; kept for the next flush', subjects: 2, err: 'disk full' }]);
    expect(await stored('key:a')).toBe(0);
    expect(await meter.used('key:a', MONTH)).toBe(1);
    await meter.flush();
    expect([await stored('key:a'), await stored('key:b')]).toEqual([1, 1]);
    await meter.close();
  });

  it('a failed write is tried again after flushSeconds without a call to flush', async () => {
    const meter = new QuotaMeter(repository, 0.05, logger());
    vi.spyOn(repository, 'addAll').mockRejectedValueOnce(new Error('disk full'));
    await meter.count('key:a', DAY);
    await waitFor(async () => logged.length === 1, 'the failed write');
    await waitFor(async () => (await stored('key:a')) === 1, 'the retried write');
    await meter.close();
  });

  it("a subject idle for a minute is read again from the store: other instances' requests are seen", async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-11-24T12:00:00Z') });
    const a = new QuotaMeter(repository, 3600, logger());
    const b = new QuotaMeter(repository, 3600, logger());
    await a.count('key:a', DAY);
    await a.flush();
    await b.count('key:a', DAY);
    await b.count('key:a', DAY);
    await b.flush();
    vi.setSystemTime(Date.now() + 60_000);
    await a.flush();
    expect(await a.used('key:a', MONTH)).toBe(1);
    vi.setSystemTime(Date.now() + 1);
    await a.flush();
    expect(await a.used('key:a', MONTH)).toBe(3);
    await Promise.all([a.close(), b.close()]);
  });

  it('a subject with unwritten requests is never forgotten, however long idle', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const meter = new QuotaMeter(repository, 3600, logger());
    await meter.count('key:a', DAY);
    vi.spyOn(repository, 'addAll').mockRejectedValueOnce(new Error('disk full'));
    vi.setSystemTime(Date.now() + 120_000);
    await meter.flush();
    expect(await meter.used('key:a', MONTH)).toBe(1);
    await meter.close();
    expect(await stored('key:a')).toBe(1);
  });
});

describe('counts by day', () => {
  it("each day's requests are written beside the month's, a 304 given back to its day; days() adds the unwritten ones", async () => {
    const meter = new QuotaMeter(repository, 3600, logger());
    await meter.count('key:a', '2026-11-02');
    await meter.count('key:a', '2026-11-02');
    await meter.count('key:a', '2026-11-24');
    meter.uncount('key:a', '2026-11-02');
    expect(await meter.days('key:a', MONTH)).toEqual([
      { day: '2026-11-02', used: 1 },
      { day: '2026-11-24', used: 1 },
    ]);
    await meter.flush();
    expect(await repository.days('key:a', MONTH)).toEqual([
      { day: '2026-11-02', used: 1 },
      { day: '2026-11-24', used: 1 },
    ]);
    await meter.count('key:a', '2026-11-24');
    expect(await meter.days('key:a', MONTH)).toEqual([
      { day: '2026-11-02', used: 1 },
      { day: '2026-11-24', used: 2 },
    ]);
    expect(await meter.used('key:a', MONTH)).toBe(3);
    // Another month's days are its own.
    await meter.count('key:a', '2026-12-01');
    expect(await meter.days('key:a', '2026-12')).toEqual([{ day: '2026-12-01', used: 1 }]);
    await meter.close();
    expect(await repository.used('key:a', MONTH)).toBe(3);
  });
});
