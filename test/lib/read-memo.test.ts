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

describe('a value kept by a stored counter past its time to live', () => {
  /** A memo of `value`, whose stored counter is `counter`: what a repository of one table and its row of `data_versions` give. */
  function counted() {
    const store = { value: 'a', counter: 0, reads: 0, counterReads: 0, writeDuringRead: false };
    const memo = new ReadMemo(
      2,
      () => 0,
      async () => {
        store.reads++;
        const value = store.value;
        // Another instance's write between the counter's read and this one.
        if (store.writeDuringRead) {
          store.writeDuringRead = false;
          store.value = 'c';
          store.counter++;
        }
        return value;
      },
      async () => {
        store.counterReads++;
        return store.counter;
      },
    );
    return { memo, store };
  }

  it('an unmoved counter keeps the value for another period, read once whole', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 0 });
    const { memo, store } = counted();
    expect(await memo.get()).toBe('a');
    for (const now of [2000, 4000, 6000]) {
      vi.setSystemTime(now);
      expect(await memo.get()).toBe('a');
    }
    expect(store).toMatchObject({ reads: 1, counterReads: 4 });
  });

  it("a moved counter (another instance's write) reads the value again", async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 0 });
    const { memo, store } = counted();
    await memo.get();
    store.value = 'b';
    store.counter++;
    vi.setSystemTime(1999);
    expect(await memo.get()).toBe('a');
    vi.setSystemTime(2000);
    expect(await memo.get()).toBe('b');
    expect(store.reads).toBe(2);
  });

  it('a write between the counter and the value is read at the next period, since the counter is read first', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 0 });
    const { memo, store } = counted();
    store.writeDuringRead = true;
    expect(await memo.get()).toBe('a');
    vi.setSystemTime(2000);
    expect(await memo.get()).toBe('c');
    expect(store.reads).toBe(2);
  });
});
