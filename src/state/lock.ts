// One lake, one writer. The lake's lock is a lease (lease.ts) kept in the lake's _lock folder
// (lease_file.ts) or in the backend a caller gives: its holder renews it while it works, a holder
// that is provably dead or silent past the bound is taken over, and a holder that lost it commits
// nothing more (the StateStore's fence calls assertHeld).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT, RunError, UsageError } from '../errors.js';
import { Lease, type LeaseBackend, type LeaseRecord } from './lease.js';
import { realClock, type Clock } from '../sources/clock.js';
import { FileLeaseBackend } from './lease_file.js';

export const LOCK = '_lock';
export const LEASE_SECONDS_ENV = 'CHAINLAKE_LEASE_SECONDS';
export const DEFAULT_LEASE_SECONDS = 30;

/** The lease's bound in milliseconds: CHAINLAKE_LEASE_SECONDS, else 30 s. */
export function leaseBound(env: NodeJS.ProcessEnv = process.env): number {
  return seconds(env, LEASE_SECONDS_ENV, DEFAULT_LEASE_SECONDS * 1000, "the lock's lease bound");
}

/** A queued job's lease bound (docs/cluster.md) in milliseconds: CHAINLAKE_JOB_LEASE_SECONDS, else the lake's. */
export function jobLeaseBound(env: NodeJS.ProcessEnv = process.env): number {
  return seconds(env, 'CHAINLAKE_JOB_LEASE_SECONDS', leaseBound(env), "a job's lease bound");
}

function seconds(env: NodeJS.ProcessEnv, name: string, fallback: number, what: string): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const s = Number(v);
  if (!Number.isFinite(s) || s <= 0) throw new UsageError(`${name}=${v}: ${what} is a number of seconds above 0 (default ${fallback / 1000})`);
  return s * 1000;
}

export interface LockOptions {
  /** Milliseconds a holder may go without renewing before others take the lock over (default: leaseBound()). */
  bound?: number;
  /** Where the lock lives; the lake's _lock folder unless given. */
  backend?: LeaseBackend;
  /** What a user should be told: a lock taken over, a store that ignores conditional writes. */
  onNote?: (note: string) => void;
  /** What the lease reads and waits on (the machine's unless given): a fake one in tests. */
  clock?: Clock;
}

export class LockHeld extends RunError {
  constructor(
    lake: string,
    readonly holder: string,
  ) {
    super(`the lake ${lake} is in use by another chainlake run (${holder}); one writer per lake: rerun when it is done, or pass --wait`, EXIT.lakeInUse);
  }
}

function describe(h: LeaseRecord): string {
  if (h.bound === Infinity) return `pid ${h.pid} on ${h.host} since ${h.since}, by an older chainlake whose lock holds while that process lives`;
  return `pid ${h.pid} on ${h.host} since ${h.since}; its lease was renewed at ${h.renewed} and expires at ${new Date(Date.parse(h.renewed) + h.bound).toISOString()} unless renewed`;
}

export class LakeLock {
  private constructor(private readonly lease: Lease) {}

  /** Takes the lock; with `wait`, polls until the other writer is done instead of refusing. */
  static async acquire(lake: string, o: LockOptions & { wait?: boolean; signal?: AbortSignal; onWait?: (holder: string) => void } = {}): Promise<LakeLock> {
    let told = false;
    for (;;) {
      try {
        return await LakeLock.tryAcquire(lake, o);
      } catch (err) {
        if (!o.wait || !(err instanceof LockHeld)) throw err;
        if (!told) o.onWait?.(err.holder);
        told = true;
        if (o.signal?.aborted) throw err;
        await (o.clock ?? realClock).sleep(250);
      }
    }
  }

  /** Whether anyone holds the lake's lock (a record is there, live or not). */
  static async held(lake: string, backend: LeaseBackend = new FileLeaseBackend(join(lake, LOCK))): Promise<boolean> {
    return (await backend.read()) !== undefined;
  }

  static async tryAcquire(lake: string, o: LockOptions = {}): Promise<LakeLock> {
    const bound = o.bound ?? leaseBound();
    let backend = o.backend;
    if (!backend) {
      mkdirSync(lake, { recursive: true });
      backend = new FileLeaseBackend(join(lake, LOCK));
    }
    const taken = await Lease.take(backend, { bound, clock: o.clock });
    if ('holder' in taken) throw new LockHeld(lake, describe(taken.holder));
    if (!backend.conditional)
      o.onNote?.(`the store at ${backend.where} ignores conditional writes: the lock is read back after a pause and at every renewal, and the last writer keeps it; two writers that start within that pause can both get past it, so start one at a time`);
    const t = taken.tookOver;
    if (t) o.onNote?.(`took over the lake's lock from ${t.from ? `pid ${t.from.pid} on ${t.from.host} (since ${t.from.since})` : 'an unreadable record'}: ${t.why}`);
    return new LakeLock(taken.lease);
  }

  /** Whether another process took the lock over (found at a renewal). */
  get lost(): boolean {
    return this.lease.lost;
  }

  /** Throws (exit 1) unless this process surely still holds the lock: the fence before a commit. */
  assertHeld(): void {
    this.lease.assertHeld();
  }

  /** Stops renewing and removes the lock if it is still this process's. */
  async release(): Promise<void> {
    await this.lease.release();
  }
}
