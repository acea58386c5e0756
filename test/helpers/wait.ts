/**
 * Waits until `condition` holds, checking every few milliseconds: tests wait on a state, never on a
 * fixed sleep. Fails with `what` if it does not hold within `timeoutMs` (generous: a busy machine is slow).
 */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
