/**
 * How `work` settled within `seconds`: `done`, `failed` (it rejected), or `timeout` (it goes on; its outcome is
 * ignored). The timer is cleared when it settles first.
 */
export async function settledWithin(work: Promise<unknown>, seconds: number): Promise<'done' | 'failed' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), seconds * 1000)));
  try {
    return await Promise.race([
      work.then(
        () => 'done' as const,
        () => 'failed' as const,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
