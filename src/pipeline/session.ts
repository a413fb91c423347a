// How every writer holds a lake: a run (run.ts, queued.ts), a worker (worker.ts), `compact`,
// `rebuild` and the export operations. A session opens the lake's state store with the writer's
// hooks, takes the lake's lock (a worker takes a work folder of its own instead: its job leases
// guard its commits), finishes what an interrupted writer left half done before anything else
// touches the lake, and at its end closes its Parquet writer and lets the lake go, whatever
// happened. Written once so that no writer can skip the roll-forward or keep the lock.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ParquetWriter } from '../load/parquet.js';
import { icebergPublisher } from '../iceberg/table.js';
import { LakeLock } from '../state/lock.js';
import { LeaseLost } from '../state/lease.js';
import type { Clock } from '../sources/clock.js';
import { S3LeaseBackend, S3Objects } from '../state/s3.js';
import { STAGING, StateStore, type StoreHooks } from '../state/store.js';
import { saveReport, type RunReport } from './report.js';

export interface HoldOptions {
  /** Wait for another writer of the lake instead of refusing. */
  wait?: boolean;
  signal?: AbortSignal;
  onWait?: (holder: string) => void;
  /** Told once, when the lock can only be taken by lesser means (a store that ignores conditions). */
  onNote?: (note: string) => void;
  /** What the lock's lease reads and waits on (the machine's unless given): a fake one in tests. */
  clock?: Clock;
}

/** A Parquet writer for a store's tables: their files carry the field ids of the tables' Iceberg schemas. */
export function openWriter(store: StateStore, spillDir: string): Promise<ParquetWriter> {
  const publisher = store.publisher;
  return ParquetWriter.open(spillDir, publisher && ((decl) => publisher.fieldIds(decl)));
}

export class LakeSession {
  private writerOpened?: Promise<ParquetWriter>;

  private constructor(
    readonly store: StateStore,
    /** The lake's locks, in the store's fence (kept there once released: nothing commits after the session). */
    private readonly locks: LakeLock[],
    /** What close() releases, the last taken first: the lake's locks, or a worker's folder. */
    private readonly held: LakeLock[] = [],
  ) {}

  /**
   * The lake's store, with the writer's hooks and the session's fence: once lock() took the lake,
   * a commit or a recovery is refused when the lock was lost. Nothing is taken until lock().
   */
  static async open(lake: string, hooks: StoreHooks = {}): Promise<LakeSession> {
    const locks: LakeLock[] = [];
    const fence = () => {
      for (const l of locks) l.assertHeld();
      hooks.fence?.();
    };
    return new LakeSession(await StateStore.open(lake, { publisher: (s: StateStore) => icebergPublisher(s), ...hooks, fence }), locks);
  }

  /**
   * A worker's session: the lake is not locked (its hooks' guard holds each commit to a job's
   * lease), but an s3:// lake's local work folder is this process's own: the first free one beside
   * the usual, taken by the lock a run takes on its work folder, so that workers on one machine
   * never share copies. close() lets the folder go.
   */
  static async forWorker(lake: string, given: StoreHooks): Promise<LakeSession> {
    const hooks: StoreHooks = { publisher: (s) => icebergPublisher(s), ...given };
    const probe = await StateStore.open(lake, hooks);
    if (!probe.remote) return new LakeSession(probe, []);
    for (let n = 0; ; n++) {
      const folder = `${probe.root}-worker${n}`;
      try {
        const slot = await LakeLock.acquire(folder);
        return new LakeSession(await StateStore.open(lake, { ...hooks, work: () => folder }), [], [slot]);
      } catch (err) {
        if (n >= 63) throw err;
      }
    }
  }

  /**
   * Takes the lake's lock (one writer per lake), or waits for it with `wait`. On object storage:
   * first the lock of the local work folder (exact among the writers of this machine), then the
   * lake's lock object in the store, taken conditionally where the store honours If-None-Match
   * (the lease says so at start where it does not).
   */
  async lock(o: HoldOptions): Promise<void> {
    const { store } = this;
    const take = (lock: LakeLock) => {
      this.locks.push(lock);
      this.held.push(lock);
    };
    take(await LakeLock.acquire(store.root, o));
    if (!(store.objects instanceof S3Objects)) return;
    try {
      take(await LakeLock.acquire(store.lake, { ...o, backend: await S3LeaseBackend.open(store.objects) }));
    } catch (err) {
      await this.release();
      throw err;
    }
  }

  /**
   * Why this process may no longer write the lake (another took its lock over, or it could not
   * renew it in time), or undefined while it holds it: what its work's failures are then told as.
   */
  lostLock(): string | undefined {
    for (const l of this.locks) {
      try {
        l.assertHeld();
      } catch (err) {
        if (err instanceof LeaseLost) return err.message;
        throw err;
      }
    }
    return undefined;
  }

  /**
   * Finishes the commits an interrupted writer left half done and clears staging (what a writer
   * staged and did not commit is litter once it ends). Returns how many commits were rolled forward.
   */
  async recover(): Promise<number> {
    return (await this.store.recover()).rolledForward;
  }

  /**
   * A worker's start on some partitions of a table: theirs only, as other workers write the rest
   * of the lake and its staging.
   */
  async recoverPartitions(table: string, partitions: string[]): Promise<void> {
    for (const p of partitions) await this.store.recoverPartition(table, p);
  }

  /** The session's Parquet writer: opened at first use, closed with the session. */
  writer(): Promise<ParquetWriter> {
    return (this.writerOpened ??= openWriter(this.store, this.store.path(join(STAGING, 'duckdb'))));
  }

  /** Closes the writer and lets the lake (or the worker's folder) go, a writer that failed to open included. */
  async close(): Promise<void> {
    const writer = this.writerOpened;
    this.writerOpened = undefined;
    try {
      (await writer?.catch(() => undefined))?.close();
    } finally {
      await this.release();
    }
  }

  private async release(): Promise<void> {
    const last = this.held.pop();
    if (!last) return;
    try {
      await last.release();
    } finally {
      await this.release();
    }
  }
}

/**
 * Runs `work` holding the lake: its lock taken, what an earlier writer left half done finished or
 * dropped first. Nothing is committed once the lock was lost (the store's fence). With
 * `clearAfter`, what `work` staged goes once it succeeds (a failure leaves it to the next start).
 */
export async function withLake<T>(lake: string, o: HoldOptions & { clearAfter?: boolean }, work: (store: StateStore, session: LakeSession) => Promise<T>): Promise<T> {
  const { clearAfter, ...lock } = o;
  const session = await LakeSession.open(lake);
  await session.lock(lock);
  try {
    await session.recover();
    const out = await work(session.store, session);
    if (clearAfter) await session.recover();
    return out;
  } finally {
    await session.close();
  }
}

/** `rebuild` and `compact`: they rewrite a lake's files outside a run, with the session's Parquet writer. */
export function withLockedWriter<T>(lake: string, o: HoldOptions, work: (store: StateStore, writer: ParquetWriter) => Promise<T>): Promise<T> {
  return withLake(lake, { ...o, clearAfter: true }, async (store, session) => work(store, await session.writer()));
}

/** What a run (in this process or queued) needs to hold its lake. */
export type RunHoldOptions = Pick<HoldOptions, 'wait' | 'signal' | 'clock'> & { logger: Logger };

export const describeError = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Runs a run's `work` holding the lake, as withLake does, and ends it the run's way: what it staged
 * and did not commit (a merge's inputs, a batch cut short) goes now, not at the next start
 * (_staging does not keep a run's leftovers between runs); the report is written to the lake; the
 * lock is released. `failed` sees what `work` (or the roll-forward) threw before the report is written.
 */
export async function holdForRun(lake: string, report: RunReport, o: RunHoldOptions, work: (session: LakeSession) => Promise<void>, failed?: (err: unknown) => void): Promise<void> {
  const session = await LakeSession.open(lake);
  // The report names the lake as its store does (a folder resolved, an s3:// URL normalised).
  report.lake = session.store.lake;
  await session.lock({
    wait: o.wait,
    signal: o.signal,
    clock: o.clock,
    onWait: (holder) => o.logger.info({ holder }, 'waiting for the other run on this lake'),
    onNote: (note) => o.logger.warn(note),
  });
  const t0 = performance.now();
  try {
    const rolledForward = await session.recover();
    if (rolledForward) o.logger.info({ rolledForward }, 'finished commits of an interrupted run');
    await work(session);
  } catch (err) {
    failed?.(err);
    throw err;
  } finally {
    try {
      await session.recover();
    } catch (err) {
      o.logger.warn({ err: describeError(err) }, 'could not clear _staging; the next run will');
    }
    const lost = session.lostLock();
    if (lost) report.lockLost = lost;
    report.finishedAt = new Date().toISOString();
    report.seconds = (performance.now() - t0) / 1000;
    if (report.status === 'running') report.status = 'failed';
    try {
      await session.store.publish(saveReport(session.store.root, report));
    } finally {
      await session.close();
    }
    o.logger.info({ run: report.runId, status: report.status, seconds: report.seconds }, 'run finished');
  }
}
