import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReadMemo } from '../../src/lib/read-memo.js';

// The one memo of values read from the store (src/lib/read-memo.ts): kept while this process's write
// count is unchanged and for at most READ_CACHE_SECONDS.
afterEach(() => vi.useRealTimers());

function counter() {
  let reads = 0;
  let writeCount = 0;
  let fail = false;
  const memo = new ReadMemo(
    2,
    () => writeCount,
    async () => {
      reads++;
      if (fail) throw new Error('store away');
      return reads;
    },
  );
  return { memo, reads: () => reads, write: () => writeCount++, failNext: (v: boolean) => (fail = v) };
}

describe('a value kept by write count and time', () => {
  it('concurrent and later callers within the time to live share one reading', async () => {
    const c = counter();
    expect(await Promise.all([c.memo.get(), c.memo.get()])).toEqual([1, 1]);
    expect(await c.memo.get()).toBe(1);
    expect(c.reads()).toBe(1);
  });

  it('a write by this process is seen at once', async () => {
    const c = counter();
    await c.memo.get();
    c.write();
    expect(await c.memo.get()).toBe(2);
  });

  it("past the time to live the store is read again (another instance's write)", async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 0 });
    const c = counter();
    await c.memo.get();
    vi.setSystemTime(1999);
    expect(await c.memo.get()).toBe(1);
    vi.setSystemTime(2000);
    expect(await c.memo.get()).toBe(2);
  });

  it('a failed reading is not kept', async () => {
    const c = counter();
    c.failNext(true);
    await expect(c.memo.get()).rejects.toThrow('store away');
    c.failNext(false);
    expect(await c.memo.get()).toBe(2);
  });

  it('a value the caller read itself is kept at the version it read it at, for the time to live', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 0 });
    const c = counter();
    c.memo.keep(41, 0);
    vi.setSystemTime(1999);
    expect(await c.memo.get()).toBe(41);
    vi.setSystemTime(2000);
    expect(await c.memo.get()).toBe(1);
    c.memo.keep(42, -1);
    expect(await c.memo.get()).toBe(2);
  });

  it('a reading that fails after a newer one was kept leaves the newer one kept', async () => {
    let writeCount = 0;
    const answers: { resolve: (n: number) => void; reject: (e: Error) => void }[] = [];
    const memo = new ReadMemo(
      60,
      () => writeCount,
      () => new Promise<number>((resolve, reject) => answers.push({ resolve, reject })),
    );
    const first = memo.get();
    writeCount++;
    const second = memo.get();
    answers[1].resolve(2);
    expect(await second).toBe(2);
    answers[0].reject(new Error('store away'));
    await expect(first).rejects.toThrow('store away');
    expect(await memo.get()).toBe(2);
    expect(answers).toHaveLength(2);
  });
});
