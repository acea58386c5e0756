import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { errorOfPosted, postedError } from '../../src/runtime/background-protocol.js';
import type { BackgroundThread } from '../../src/runtime/background-thread.js';
import { startBackgroundThread } from '../../src/runtime/background-thread.js';
import { isDatabaseUnavailable } from '../../src/store/database.js';
import { UpstreamError } from '../../src/upstream/errors.js';
import { waitFor } from '../helpers/wait.js';

// The API thread's handle on the background thread (src/runtime/background-thread.ts), over a thread of this test's
// that speaks the same messages (runtime/background-protocol.ts): it answers, reports a state with a generation
// number, and ends on purpose when asked to refresh a listing; the real thread is tested through `serve`
// (test/runtime/serve-background-thread.test.ts).
const WORKER = `
const { parentPort } = require('node:worker_threads');
const generation = Date.now();
const state = {
  crawlReports: [{ scope: 'rental:100', parts: 1, splits: 0, complete: true, at: String(generation) }],
  running: ['rental:100'],
  upstream: { circuit: 'closed', queued: 0, blockedUntil: null, droppedFields: [] },
  openDataCanRefresh: true,
  hydration: { hydrated: 0, running: true, lastError: null, lastErrorAt: null, failedBatches: 0, lastCompletedAt: null, nextAttemptAt: null, consecutiveFailures: 0 },
  valuation: { enabled: true, running: true, runs: 0, failedRuns: 0, lastRunAt: null, lastRunSeconds: null, lastValued: 0, lastChanged: 0, lastError: null, lastErrorAt: null },
  walCheckpoints: null,
  webhooks: { running: true, inFlight: 2, lastError: null, lastErrorAt: null },
  firstSync: null,
};
parentPort.postMessage({ type: 'state', state });
parentPort.postMessage({ type: 'ready', upstreamUrl: 'http://127.0.0.1:1/', openDataUrl: 'http://127.0.0.1:2', upstreamAdminUrl: null });
parentPort.on('message', (request) => {
  if (request.method === 'refreshListing') setTimeout(() => { throw new Error('ended on purpose'); });
  else if (request.method === 'hydrate') parentPort.postMessage({ type: 'answer', id: request.id, result: request.args[1] });
  else if (request.method === 'refreshBuilding') parentPort.postMessage({ type: 'answer', id: request.id, error: { message: 'no such building' } });
  else if (request.method === 'syncAreas')
    parentPort.postMessage({ type: 'answer', id: request.id, error: { message: 'upstream answered HTTP 503', upstream: { failure: 'http', status: 503 } } });
  else if (request.method === 'syncOpenData')
    parentPort.postMessage({ type: 'answer', id: request.id, error: { message: 'connect ECONNREFUSED', code: 'ECONNREFUSED' } });
  else if (request.method === 'close') { parentPort.postMessage({ type: 'answer', id: request.id }); parentPort.close(); }
});
`;

const started: BackgroundThread[] = [];
afterEach(async () => {
  while (started.length) await started.pop()!.close();
});

/** A thread handle over the test's thread, and the lines its logger wrote. */
async function handle(): Promise<{ thread: BackgroundThread; logged: { level: number; msg: string; err?: string }[] }> {
  const file = join(mkdtempSync(join(tmpdir(), 'background-thread-')), 'worker.cjs');
  writeFileSync(file, WORKER);
  const logged: { level: number; msg: string; err?: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  const thread = await startBackgroundThread({ nice: 0, tty: false, logger, entry: pathToFileURL(file) });
  started.push(thread);
  return { thread, logged };
}

describe("the API thread's handle on the background thread", () => {
  it("answers each request with the thread's answer or its error, and keeps the state it reported", async () => {
    const { thread } = await handle();
    expect(thread.upstreamUrl).toBe('http://127.0.0.1:1/');
    expect(thread.openDataUrl).toBe('http://127.0.0.1:2');
    expect(await thread.request('hydrate', 'rental', ['a', 'b'], 'background')).toEqual(['a', 'b']);
    await expect(thread.request('refreshBuilding', 'x', 'interactive')).rejects.toThrow('no such building');
    // What the API's answer depends on crosses with the error: an upstream's failure (502 or 504), a database's code (503).
    const upstream = await thread.request('syncAreas').catch((error: unknown) => error);
    expect(upstream).toBeInstanceOf(UpstreamError);
    expect(upstream).toMatchObject({ failure: 'http', status: 503, message: 'upstream answered HTTP 503', transient: true });
    const database = await thread.request('syncOpenData').catch((error: unknown) => error);
    expect(isDatabaseUnavailable(database)).toBe(true);
    expect(thread.state().running).toEqual(['rental:100']);
    expect(thread.state().webhooks).toMatchObject({ running: true, inFlight: 2 });
  });

  it('when the thread ends: its calls fail, the state says why and when it is tried again, and it is started again', async () => {
    const { thread, logged } = await handle();
    const before = thread.state().crawlReports[0].at;
    const ended = Date.now();
    // The call that ends it fails with the thread's own error.
    await expect(thread.request('refreshListing', '1', 'rental', 'interactive')).rejects.toThrow('ended on purpose');
    const down = thread.state();
    expect(down.running).toEqual([]);
    expect(down.hydration).toMatchObject({ running: false, lastError: 'ended on purpose' });
    expect(Date.parse(down.hydration.nextAttemptAt!)).toBeGreaterThanOrEqual(ended + 900);
    expect(down.webhooks).toMatchObject({ running: false, inFlight: 0, lastError: 'ended on purpose' });
    expect(down.valuation.running).toBe(false);
    // Meanwhile a request fails at once, with the same cause.
    await expect(thread.request('hydrate', 'rental', ['a'], 'background')).rejects.toThrow('ended on purpose');
    expect(logged.find((l) => l.level === 50)).toMatchObject({ err: 'ended on purpose' });
    // A second later it is back: a new thread, its own state, answering.
    await waitFor(() => thread.state().crawlReports[0].at !== before, 'the thread started again', 10_000);
    expect(thread.state().hydration).toMatchObject({ running: true, lastError: null, nextAttemptAt: null });
    expect(await thread.request('hydrate', 'sale', ['c'], 'background')).toEqual(['c']);
    expect(logged.some((l) => l.level === 40 && l.msg === 'the background thread started again')).toBe(true);
  });

  it("posts an error as the API thread must see it again: an upstream's failure, its kind and status; any error's code", () => {
    const cross = (error: unknown) => errorOfPosted(structuredClone(postedError(error)));
    const timeout = cross(new UpstreamError('timeout', 'no answer in 15 s'));
    expect(timeout).toBeInstanceOf(UpstreamError);
    expect(timeout).toMatchObject({ failure: 'timeout', status: undefined, message: 'no answer in 15 s' });
    const locked = cross(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }));
    expect(locked).not.toBeInstanceOf(UpstreamError);
    expect(locked).toMatchObject({ message: 'database is locked', code: 'SQLITE_BUSY' });
    expect(cross('a thrown text')).toMatchObject({ message: 'a thrown text' });
  });

  it('fails to start with the cause the thread gave', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'background-thread-')), 'worker.cjs');
    writeFileSync(file, `require('node:worker_threads').parentPort.postMessage({ type: 'failed', error: 'SHARED_DATA_DIR is empty' });`);
    await expect(
      startBackgroundThread({ nice: 0, tty: false, logger: pino({ level: 'silent' }), entry: pathToFileURL(file) }),
    ).rejects.toThrow('SHARED_DATA_DIR is empty');
  });
});
