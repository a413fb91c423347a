// One writer at a time, as a lease. The holder's record (who, since when, renewed when, for how
// long, a random token, a fencing counter) lives in a backend that creates, replaces and removes
// it conditionally (a version tag that changes on every write), so that of two processes taking
// over the same record exactly one wins. The holder renews the record every third of its bound
// while it works. Anyone takes over a record whose holder is provably dead (on the same host: its
// process is gone, a zombie, or its pid now names another process) at once, and any record not
// renewed within its bound, whoever wrote it. A holder trusts its lease for two thirds of the bound
// after its last renewal: the last third covers a difference between hosts' clocks, so a holder
// that stopped renewing (paused, cut off) stops committing before anyone may take over. It reads
// and waits on the clock it is given, so that renewals and expiries run on a fake one in tests.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { RunError } from '../errors.js';
import { realClock, type Clock } from '../sources/clock.js';
import { processFacts, thisProcess, type ThisProcess } from './process.js';

export interface LeaseBackend {
  /** Creates the record if none exists; false when one does. */
  create(body: string): Promise<boolean>;
  /** The record and a version tag (changes on every write), or undefined when there is none. */
  read(): Promise<{ body: string; version: string } | undefined>;
  /** Replaces the record if its version is still `version`; false otherwise. */
  replace(body: string, version: string): Promise<boolean>;
  /** Deletes the record if its version is still `version`; false otherwise. */
  remove(version: string): Promise<boolean>;
  /** Whether create/replace/remove are really conditional here (an object store that ignores conditions is not); the lock says so and falls back. */
  readonly conditional: boolean;
  /** For messages: where the lock lives (never a secret). */
  readonly where: string;
}

export interface LeaseRecord {
  pid: number;
  host: string;
  /** Boot and pid namespace of the holder: its pid means something only there. */
  space?: string;
  /** The holder process's start time (/proc): the same pid with another start is another process. */
  start?: string;
  /** ISO 8601 times: when the lease was taken and last renewed. */
  since: string;
  renewed: string;
  /** Milliseconds: a lease not renewed for longer may be taken over (Infinity: a lock of an older chainlake, held while its process lives). */
  bound: number;
  token: string;
  /** Increases on every takeover. */
  fence: number;
}

export interface LeaseOptions {
  /** Milliseconds without a renewal after which the lease may be taken over. */
  bound: number;
  /**
   * Only for a backend that ignores conditions: how long a writer waits before reading its record
   * back to see whether another writer's record replaced it (default 2000 ms).
   */
  settle?: number;
  /** What it reads and waits on: the machine's clock, whose waits do not keep the process up. */
  clock?: Clock;
}

/** The machine's clock: a lease left unreleased (a command that failed) does not hold its process open. */
const machineClock: Clock = { ...realClock, sleep: (ms, signal) => sleep(ms, undefined, { ref: false, signal }) };

/** How long from a fixed start: monotonic where the clock has it, so a wall clock set back stretches no lease. */
const elapsed = (c: Clock) => c.monotonic?.() ?? c.now();

/** Why a record may be taken over now, or undefined while its holder keeps it. */
export function takeoverReason(h: LeaseRecord, now: number, me: ThisProcess = thisProcess()): string | undefined {
  const sameSpace = h.host === me.host && (h.space === undefined || me.space === undefined || h.space === me.space);
  if (sameSpace) {
    const p = processFacts(h.pid);
    if (p.state === 'gone') return `its process ${h.pid} is gone`;
    if (p.state === 'zombie') return `its process ${h.pid} has exited (a zombie not reaped yet)`;
    if (h.start !== undefined && p.start !== undefined && p.start !== h.start) return `its process ${h.pid} is gone (the pid now names another process)`;
  }
  const quiet = now - Date.parse(h.renewed);
  if (quiet > h.bound) return `not renewed for ${seconds(quiet)} (its bound is ${seconds(h.bound)})`;
  return undefined;
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** The record in a body, or undefined when it is not one (it may then be taken over). */
export function parseRecord(body: string): LeaseRecord | undefined {
  let r: Partial<LeaseRecord>;
  try {
    r = JSON.parse(body) as Partial<LeaseRecord>;
  } catch {
    return undefined;
  }
  if (typeof r !== 'object' || r === null || !Number.isSafeInteger(r.pid) || typeof r.host !== 'string' || typeof r.since !== 'string') return undefined;
  // An older chainlake's lock: {pid, host, since}, held while its process lives.
  if (r.token === undefined) return { pid: r.pid!, host: r.host, since: r.since, renewed: r.since, bound: Infinity, token: '', fence: 0 };
  if (typeof r.renewed !== 'string' || !Number.isFinite(Date.parse(r.renewed)) || typeof r.bound !== 'number' || !(r.bound > 0) || typeof r.token !== 'string' || !Number.isSafeInteger(r.fence)) return undefined;
  return r as LeaseRecord;
}

/** A lease that this process held and holds no more (taken over, released, or not renewed in time). */
export class LeaseLost extends RunError {}

export type Taken = { lease: Lease; tookOver?: { from: LeaseRecord | undefined; why: string } } | { holder: LeaseRecord };

export class Lease {
  private version: string;
  private record: LeaseRecord;
  /** On the clock's monotonic count: until then the lease is surely ours. */
  private validUntil: number;
  /** Stops the renewals. */
  private readonly stop = new AbortController();
  private readonly clock: Clock;
  private renewing: Promise<void> | undefined;
  private lostWhy: string | undefined;
  private lastError: unknown;
  private released = false;

  private constructor(
    private readonly backend: LeaseBackend,
    private readonly o: LeaseOptions,
    record: LeaseRecord,
    version: string,
    validUntil: number,
  ) {
    this.record = record;
    this.version = version;
    this.validUntil = validUntil;
    this.clock = o.clock ?? machineClock;
    void this.renewEvery(Math.max(1, o.bound / 3));
  }

  /** Starts a renewal every `ms`, whether the last one is done or not (renew() joins one under way). */
  private async renewEvery(ms: number): Promise<void> {
    for (;;) {
      try {
        await this.clock.sleep(ms, this.stop.signal);
      } catch {
        return; // stopped
      }
      void this.renew();
    }
  }

  /** Takes the lease, or says who holds it. */
  static async take(backend: LeaseBackend, o: LeaseOptions): Promise<Taken> {
    const clock = o.clock ?? machineClock;
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = await backend.read();
      const from = cur && parseRecord(cur.body);
      const why = !cur ? undefined : from ? takeoverReason(from, clock.now()) : 'its record is unreadable';
      if (cur && why === undefined) return { holder: from! };
      const me = thisProcess();
      const at = new Date(clock.now()).toISOString();
      const record: LeaseRecord = {
        pid: me.pid, host: me.host, ...(me.space ? { space: me.space } : {}), ...(me.start ? { start: me.start } : {}),
        since: at, renewed: at, bound: o.bound, token: randomBytes(16).toString('hex'), fence: (from?.fence ?? 0) + 1,
      };
      const started = elapsed(clock);
      const version = await Lease.write(backend, o, record, () => (cur ? backend.replace(JSON.stringify(record), cur.version) : backend.create(JSON.stringify(record))));
      // Someone else wrote first: read again, it may be a live holder now.
      if (version === undefined) continue;
      const lease = new Lease(backend, o, record, version, started + (o.bound * 2) / 3);
      return cur ? { lease, tookOver: { from, why: why! } } : { lease };
    }
    throw new RunError(`could not take the lock at ${backend.where}: other processes kept changing it`);
  }

  /**
   * Writes `record` with `op` and reads it back: its version, or undefined when the write was
   * refused or another record is there. A backend that ignores conditions lets the last writer
   * win, so the read waits for a concurrent writer's record to land first.
   */
  private static async write(backend: LeaseBackend, o: LeaseOptions, record: LeaseRecord, op: () => Promise<boolean>): Promise<string | undefined> {
    if (!(await op())) return undefined;
    // This wait holds the process up: a take or renewal under way is not dropped at its exit.
    if (!backend.conditional) await (o.clock ?? realClock).sleep(o.settle ?? 2000);
    const back = await backend.read();
    return back && parseRecord(back.body)?.token === record.token ? back.version : undefined;
  }

  /** Whether another process took the lease over (found at a renewal). */
  get lost(): boolean {
    return this.lostWhy !== undefined;
  }

  get holder(): LeaseRecord {
    return this.record;
  }

  /** Throws unless the lease is surely still ours: call it before anything that only the holder may do. */
  assertHeld(): void {
    const where = this.backend.where;
    if (this.released) throw new LeaseLost(`the lock at ${where} was released; nothing more is committed`);
    if (this.lostWhy) throw new LeaseLost(`this process lost the lock at ${where}: ${this.lostWhy}; it commits nothing more (rerun to resume)`);
    const late = elapsed(this.clock) - this.validUntil;
    if (late > 0) {
      const last = this.lastError instanceof Error ? ` (last renewal: ${this.lastError.message})` : '';
      throw new LeaseLost(
        `this process could not renew its lock at ${where} for ${seconds(late + (this.o.bound * 2) / 3)}${last}; another writer may take the lake over after ${seconds(this.o.bound)}, so it commits nothing more (rerun to resume)`,
      );
    }
  }

  private renew(): Promise<void> {
    if (this.renewing || this.released || this.lostWhy) return this.renewing ?? Promise.resolve();
    this.renewing = (async () => {
      const started = elapsed(this.clock);
      const record = { ...this.record, renewed: new Date(this.clock.now()).toISOString() };
      try {
        if (!this.backend.conditional) {
          const cur = await this.backend.read();
          if (!cur || parseRecord(cur.body)?.token !== record.token) return this.lose(cur?.body);
        }
        const version = await Lease.write(this.backend, this.o, record, () => this.backend.replace(JSON.stringify(record), this.version));
        if (version === undefined) return this.lose((await this.backend.read())?.body);
        this.version = version;
        this.record = record;
        this.validUntil = started + (this.o.bound * 2) / 3;
        this.lastError = undefined;
      } catch (err) {
        // A store or disk that fails for a while: the next renewal tries again, and the lease runs
        // out (assertHeld) if none succeeds in time.
        this.lastError = err;
      }
    })().finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private lose(body: string | undefined): void {
    const now = body ? parseRecord(body) : undefined;
    this.lostWhy = now
      ? `pid ${now.pid} on ${now.host} took it over at ${now.since} (fence ${now.fence})`
      : body === undefined
        ? 'its record was removed by another process'
        : 'its record was replaced by another process';
    this.stop.abort();
  }

  /** Stops renewing and removes the record if it is still ours; false when it was not. */
  async release(): Promise<boolean> {
    if (this.released) return false;
    this.released = true;
    this.stop.abort();
    // A renewal stuck on a store that stopped answering does not hold the command's end for long.
    if (this.renewing) {
      const gaveUp = new AbortController();
      await Promise.race([this.renewing, this.clock.sleep(this.o.bound, gaveUp.signal).catch(() => undefined)]);
      gaveUp.abort();
    }
    if (this.lostWhy) return false;
    try {
      if (!this.backend.conditional) {
        const cur = await this.backend.read();
        if (!cur || parseRecord(cur.body)?.token !== this.record.token) return false;
        return await this.backend.remove(cur.version);
      }
      return await this.backend.remove(this.version);
    } catch {
      // Left for the next writer, which finds this process gone.
      return false;
    }
  }
}
