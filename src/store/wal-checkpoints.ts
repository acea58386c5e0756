import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { type Static, Type } from 'typebox';
import { Nullable } from '../wire/common.js';

/** The checkpoints' state, as `/v1/health` shows it (`walCheckpoints`; null on PostgreSQL) and the metrics read it. */
export const WalCheckpointsStateSchema = Type.Object(
  {
    running: Type.Boolean({
      description:
        "Whether the checkpoints run in their thread; false once it stopped, the writer's connection then checkpointing as it commits.",
    }),
    checkpoints: Type.Integer({ description: 'Checkpoints run since the service started (one every SQLITE_CHECKPOINT_SECONDS).' }),
    restarts: Type.Integer({
      description: 'Times the log was started over since the service started (once it held 20,000 pages, every one copied).',
    }),
    failures: Type.Integer({ description: 'Checkpoints that failed since the service started.' }),
    walFrames: Nullable(Type.Integer({ description: 'Pages in the write-ahead log at the last checkpoint (4 KiB each).' })),
    checkpointedFrames: Nullable(Type.Integer({ description: 'Of those, the pages the last checkpoint had copied into the database.' })),
    lastSeconds: Nullable(Type.Number({ description: 'How long the last checkpoint took (seconds), off the event loop.' })),
    lastAt: Nullable(Type.String({ description: 'When the last checkpoint ran (UTC).' })),
    lastError: Nullable(Type.String({ description: "The last failed checkpoint's cause, or why the thread stopped." })),
    lastErrorAt: Nullable(Type.String({ description: 'When it failed (UTC).' })),
  },
  { description: "SQLite's write-ahead log checkpoints in their thread (SQLITE_CHECKPOINT_SECONDS); null on PostgreSQL or when off." },
);
export type WalCheckpointsState = Static<typeof WalCheckpointsStateSchema>;

/** What the checkpoints' thread reports after each checkpoint: SQLite's `wal_checkpoint` row, or its error. */
type Report = { busy: number; log: number; checkpointed: number; seconds: number } | { error: string };

/** What starting the log over on the writer's connection gave: SQLite's `wal_checkpoint(TRUNCATE)` row (busy 1: not now). */
export type LogRestart = { busy: number; log: number; checkpointed: number };

/**
 * The thread's code (plain JavaScript, run with `eval`: the same under `tsx` and compiled): its own connection to the
 * file, a PASSIVE checkpoint every `everyMs` (it copies what it can without waiting on a reader or the writer, and
 * never takes the write lock), each reported to the main thread.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file);
const timer = setInterval(() => {
  const started = performance.now();
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ...row, seconds: (performance.now() - started) / 1000 });
  } catch (error) {
    parentPort.postMessage({ error: String((error && error.message) || error) });
  }
}, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * SQLite's write-ahead log checkpoints, in a worker thread of their own. By default the connection that commits
 * checkpoints once the log passes its threshold, inside the commit: the pages copied into the database and its sync to
 * disk held the event loop for seconds after a crawl of Manhattan's rentals (figures in docs/benchmark-history.md, the soak).
 * With this on, the writer's connection never checkpoints (`wal_autocheckpoint = 0`) and this thread copies the log
 * into the database every `everySeconds`.
 *
 * SQLite starts the log over only when a writer begins and finds every page of it copied, which a writer that commits
 * every few milliseconds may never find: the log of a first sync grew to 2.7 GB. So once a checkpoint finds the log
 * holding `restartPages`, all of it copied, `restartLog` starts it over on the writer's connection, between two of its
 * transactions (a TRUNCATE checkpoint with nothing left to copy). The thread did it at first: its TRUNCATE held the write
 * lock, and the writer's `begin` then failed at once with "database is locked" instead of waiting its busy timeout.
 *
 * Should the thread stop, the writer's own checkpoints come back (`restoreAutocheckpoint`), and the cause is logged
 * (`warn`) and shown in the state.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly current: WalCheckpointsState = {
    running: true,
    checkpoints: 0,
    restarts: 0,
    failures: 0,
    walFrames: null,
    checkpointedFrames: null,
    lastSeconds: null,
    lastAt: null,
    lastError: null,
    lastErrorAt: null,
  };
  private stopping = false;
  /** A start of the log over under way (one at a time). */
  private restarting = false;

  /**
   * Starts the thread on the SQLite `file`, whose writer's connection no longer checkpoints by itself: `restartLog`
   * starts the log over on it once the log holds `restartPages`, all copied. `restoreAutocheckpoint` gives the writer
   * its own checkpoints back if the thread stops.
   */
  constructor(
    file: string,
    everySeconds: number,
    private readonly restartPages: number,
    private readonly restartLog: () => Promise<LogRestart>,
    private readonly restoreAutocheckpoint: () => void,
    private readonly warn: (message: string, error: string) => void,
  ) {
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(THREAD, { eval: true, workerData: { file, module, everyMs: everySeconds * 1000 } });
    this.worker.unref();
    this.worker.on('message', (report: Report) => this.record(report));
    this.worker.on('error', (error) => this.stopped(error.message));
    this.worker.on('exit', (code) => this.stopped(`the checkpoints' thread exited (${code})`));
  }

  /** The checkpoints' state ({@link WalCheckpointsStateSchema}). */
  state(): WalCheckpointsState {
    return { ...this.current };
  }

  /** Stops the thread (its connection closed) and resolves once it has. */
  async close(): Promise<void> {
    if (!this.current.running) return;
    this.stopping = true;
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    // Held until it exits: unreferenced, the thread would let a process with nothing else to do end before it closed.
    this.worker.ref();
    this.worker.postMessage('stop');
    await exited;
  }

  private record(report: Report): void {
    const at = new Date().toISOString();
    if ('error' in report) {
      this.current.failures++;
      Object.assign(this.current, { lastError: report.error, lastErrorAt: at });
      this.warn('SQLite checkpoint failed; the next one tries again', report.error);
      return;
    }
    this.current.checkpoints++;
    Object.assign(this.current, {
      walFrames: report.log,
      checkpointedFrames: report.checkpointed,
      lastSeconds: Math.round(report.seconds * 1000) / 1000,
      lastAt: at,
    });
    if (report.busy === 0 && report.log >= this.restartPages && report.checkpointed === report.log) void this.restart();
  }

  /** Starts the log over on the writer's connection; busy (a reader or another process in it) waits for the next report. */
  private async restart(): Promise<void> {
    if (this.restarting || this.stopping) return;
    this.restarting = true;
    try {
      const done = await this.restartLog();
      if (done.busy === 0) {
        this.current.restarts++;
        Object.assign(this.current, { walFrames: done.log, checkpointedFrames: done.checkpointed });
      }
    } catch (error) {
      // The store closed while the restart waited for the writer's connection: nothing failed.
      if (this.stopping) return;
      this.current.failures++;
      const cause = error instanceof Error ? error.message : String(error);
      Object.assign(this.current, { lastError: cause, lastErrorAt: new Date().toISOString() });
      this.warn('SQLite log could not be started over; the next checkpoint tries again', cause);
    } finally {
      this.restarting = false;
    }
  }

  private stopped(cause: string): void {
    if (!this.current.running) return;
    this.current.running = false;
    if (this.stopping) return;
    Object.assign(this.current, { lastError: cause, lastErrorAt: new Date().toISOString() });
    this.restoreAutocheckpoint();
    this.warn("SQLite checkpoints' thread stopped; the writer's connection checkpoints as it commits again", cause);
  }
}
