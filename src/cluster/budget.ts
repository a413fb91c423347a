// One compute-unit budget per API key (or per service without a key) for every process that uses
// it, kept in PostgreSQL (docs/cluster.md). A process claims a slice of the current window's
// budget with one atomic statement, spends it locally request by request, and claims again when
// it is spent, so the database is asked once per slice, not once per request. What one process
// learns (a 429's pause, a lower budget) is written beside the windows and read at every claim,
// so a 429 seen by one slows all of them from their next claim on.
//
// The windows are fixed and counted by the database's clock, so processes on machines whose
// clocks disagree still share one window. The day's budget is the sum of the day's windows: the
// claim caps a window at what the day has left, read from the day's earlier windows (which no
// longer change) while it holds the current window's row lock, which every claim of the key
// takes, so two claims never both see the same room.
//
// A pause read from the database (another process's 429) goes into the service's one Pause
// (sources/pause.ts), the one the local budget waits on too, when the caller passes it in.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { realClock, type Clock } from '../sources/clock.js';
import { Pause } from '../sources/pause.js';
import { abortable } from '../sources/shared.js';
import { redactUrl } from './url.js';
import { bestOffset, record, sampleOf, type OffsetSample } from './offset.js';
import { MIGRATION_START, openPool, unavailable } from './pg.js';

/** One statement, idempotent, safe to run from many processes at once (an advisory lock orders them). */
const MIGRATE = `
${MIGRATION_START}
CREATE TABLE IF NOT EXISTS chainlake.budget_windows (
  key_hash   text   NOT NULL,
  service    text   NOT NULL,
  window_ms  bigint NOT NULL,
  start_ms   bigint NOT NULL,
  cap        bigint NOT NULL,
  used       bigint NOT NULL,
  last_grant bigint NOT NULL,
  PRIMARY KEY (key_hash, service, window_ms, start_ms)
);
CREATE TABLE IF NOT EXISTS chainlake.budget_state (
  key_hash        text   NOT NULL,
  service         text   NOT NULL,
  paused_until_ms bigint NOT NULL DEFAULT 0,
  learnt_cu       bigint,
  learnt_window_ms bigint,
  PRIMARY KEY (key_hash, service)
);
ALTER TABLE chainlake.budget_state ADD COLUMN IF NOT EXISTS learnt_at_ms bigint;
`;

const NOW_MS = `floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`;
const DAY_MS = 86_400_000;
/** Windows older than this are of no use to anyone and are removed when a budget opens. */
const KEEP_MS = 2 * DAY_MS;
/**
 * A learnt budget caps the claims for this many of its windows after it was written, and no
 * longer: the processes that learn rewrite it at every change (a decrease, each step back up), so
 * one that is not rewritten was left by runs that have ended, and says little of the service now.
 */
const LEARNT_WINDOWS = 10;
const FRESH = `learnt_at_ms >= ${NOW_MS} - ${LEARNT_WINDOWS} * learnt_window_ms`;

/**
 * Claims up to a slice of the current window: the grant is the slice or what is left of the
 * window's cap if less, and nothing unless at least this request's weight fits, or while a pause
 * is in force. Unspent CU of the process's slice of an earlier window are given back first. The
 * window is the one the request will reach the service in: the one `lead` ms from now.
 * $1 key hash, $2 service, $3 window ms, $4 CU per window, $5 CU per day (null: none), $6 slice,
 * $7 weight, $8 start of the earlier window, $9 CU to give back to it, $10 lead ms.
 */
const CLAIM = `
WITH clock AS (SELECT ${NOW_MS} AS now_ms),
fresh AS (
  SELECT paused_until_ms, CASE WHEN ${FRESH} THEN learnt_cu END AS learnt_cu, learnt_window_ms
  FROM chainlake.budget_state WHERE key_hash = $1 AND service = $2),
state AS (
  SELECT coalesce(max(paused_until_ms), 0) AS paused_until_ms,
         min(floor(learnt_cu * $3::bigint::float8 / learnt_window_ms))::bigint AS learnt,
         min(learnt_cu) AS learnt_cu, min(learnt_window_ms) FILTER (WHERE learnt_cu IS NOT NULL) AS learnt_window_ms
  FROM fresh),
w AS (
  SELECT c.now_ms, (c.now_ms + $10::bigint) - (c.now_ms + $10::bigint) % $3::bigint AS start_ms, s.paused_until_ms,
         LEAST($4::bigint, s.learnt) AS budget, s.learnt_cu, s.learnt_window_ms
  FROM clock c, state s),
room AS (
  SELECT w.*, GREATEST(0, LEAST(w.budget, coalesce($5::bigint - (
    SELECT coalesce(sum(d.used), 0) FROM chainlake.budget_windows d
    WHERE d.key_hash = $1 AND d.service = $2 AND d.window_ms = $3
      AND d.start_ms >= w.start_ms - w.start_ms % ${DAY_MS} AND d.start_ms < w.start_ms), w.budget))) AS cap
  FROM w),
back AS (
  UPDATE chainlake.budget_windows SET used = GREATEST(0, used - $9)
  WHERE $9::bigint > 0 AND key_hash = $1 AND service = $2 AND window_ms = $3 AND start_ms = $8
    AND $8 <> (SELECT start_ms FROM w)),
claim AS (
  INSERT INTO chainlake.budget_windows AS b (key_hash, service, window_ms, start_ms, cap, used, last_grant)
  SELECT $1, $2, $3, r.start_ms, r.cap, LEAST($6::bigint, r.cap), LEAST($6::bigint, r.cap)
  FROM room r WHERE r.paused_until_ms <= r.now_ms AND $7::bigint <= r.cap
  ON CONFLICT (key_hash, service, window_ms, start_ms) DO UPDATE
    SET used = b.used + LEAST($6::bigint, EXCLUDED.cap - b.used),
        last_grant = LEAST($6::bigint, EXCLUDED.cap - b.used),
        cap = EXCLUDED.cap
    WHERE b.used + $7::bigint <= EXCLUDED.cap
  RETURNING b.last_grant AS granted)
SELECT r.now_ms, r.start_ms, r.paused_until_ms, r.cap, r.learnt_cu, r.learnt_window_ms, (SELECT granted FROM claim) AS granted FROM room r`;

/**
 * Counts CU already sent in the current window (of another length, before this one was known) as
 * spent in it, up to its cap. $1 key hash, $2 service, $3 window ms, $4 CU per window, $5 CU.
 */
const CARRY = `
INSERT INTO chainlake.budget_windows AS b (key_hash, service, window_ms, start_ms, cap, used, last_grant)
SELECT $1, $2, $3, c.now_ms - c.now_ms % $3::bigint, $4, LEAST($4::bigint, $5::bigint), 0 FROM (SELECT ${NOW_MS} AS now_ms) c
ON CONFLICT (key_hash, service, window_ms, start_ms) DO UPDATE SET used = LEAST(b.cap, b.used + $5::bigint)`;

/** $1 key hash, $2 service, $3 ms from the database's now. */
const PAUSE = `
INSERT INTO chainlake.budget_state AS s (key_hash, service, paused_until_ms)
VALUES ($1, $2, ${NOW_MS} + $3::bigint)
ON CONFLICT (key_hash, service) DO UPDATE SET paused_until_ms = GREATEST(s.paused_until_ms, EXCLUDED.paused_until_ms)
RETURNING paused_until_ms, ${NOW_MS} AS now_ms`;

/** Unspent CU of a slice go back to its window. $1 key hash, $2 service, $3 window ms, $4 its start, $5 CU. */
const GIVE_BACK = `UPDATE chainlake.budget_windows SET used = GREATEST(0, used - $5)
WHERE key_hash = $1 AND service = $2 AND window_ms = $3 AND start_ms = $4`;

/** The key's learnt budget while it holds. $1 key hash, $2 service. */
const STORED = `SELECT learnt_cu, learnt_window_ms FROM chainlake.budget_state WHERE key_hash = $1 AND service = $2 AND ${FRESH}`;

/** $1 key hash, $2 service, $3 CU per window, $4 window ms. */
const LEARN = `
INSERT INTO chainlake.budget_state (key_hash, service, learnt_cu, learnt_window_ms, learnt_at_ms) VALUES ($1, $2, $3, $4, ${NOW_MS})
ON CONFLICT (key_hash, service) DO UPDATE
  SET learnt_cu = EXCLUDED.learnt_cu, learnt_window_ms = EXCLUDED.learnt_window_ms, learnt_at_ms = EXCLUDED.learnt_at_ms`;

/** The database of the shared budget did not answer: the caller stops cleanly and may try again. */
export class BudgetUnavailable extends Error {}

export interface SharedBudgetOptions {
  /** The service's name, as the pipeline names its source. */
  service: string;
  /** The API key; only its SHA-256 is stored. Without one, the service's budget is shared by all. */
  key?: string;
  /** The known budget per window: the tier's, or the pipeline's. */
  cuPerWindow: number;
  cuPerDay?: number;
  /** A minute by default; shorter in tests. */
  windowMs?: number;
  /** The share of the window's budget a claim asks for (0.1 by default). */
  sliceShare?: number;
  /** The service's pause, shared with the local budget; else one of its own. */
  paused?: Pause;
  /** What it reads and waits on (the machine's clock by default). */
  clock?: Clock;
}

export interface TakeOptions {
  /**
   * How long the request takes from now to reach the service: it is counted in the window it will
   * arrive in, so one taken at a window's end does not land uncounted in the next.
   */
  leadMs?: number;
  /** Stops the wait (it rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** A budget per window of a length. */
export interface WindowBudget {
  cuPerWindow: number;
  windowMs: number;
}

/** Where a granted weight is counted: the window (database clock) it was claimed in. */
export interface Spend {
  windowStart: number;
}

/** The stored name of a key: its SHA-256, never the key. */
export function keyHash(key: string | undefined): string {
  return createHash('sha256').update(key ?? '').digest('hex');
}

export async function migrate(pool: pg.Pool): Promise<void> {
  await pool.query(MIGRATE);
}

interface Spending {
  start: number;
  cu: number;
  /** When it began spending in this window (database clock). */
  from: number;
  /** A claim in this window found it full. */
  refused: boolean;
}

interface Slice {
  start: number;
  /** When the window begins and ends, by this process's clock. */
  startsAt: number;
  endsAt: number;
  left: number;
}

/** What the budget asks of its database: a pg.Pool, or a stand-in for one in tests. */
export type BudgetDatabase = Pick<pg.Pool, 'query' | 'end'>;

export class SharedBudget {
  private readonly hash: string;
  private windowMs: number;
  private readonly share: number;
  private slice: Slice | undefined;
  /** The database's clock less ours: from the shortest of the recent round trips (offset.ts). */
  private offset = 0;
  private trips: OffsetSample[] = [];
  /** This process's spending in the window it spent in last, and its pace in the one before. */
  private spent: Spending | undefined;
  private pace: number | undefined;
  /** By this process's clock: no claim before then (a full window or day). */
  private fullUntil = 0;
  /** A 429's pause, this process's or another's: no request before its end (by this process's clock). */
  readonly paused: Pause;
  private readonly clock: Clock;
  private claiming: Promise<void> | undefined;
  /** A change of window length under way (setBudget): claims wait for it. */
  private switching: Promise<void> | undefined;
  /** The known budget per window; the service may announce another (setBudget). */
  private cuPerWindow: number;
  /** The key's learnt budget as the last claim read it (written by any process), while it holds. */
  stored: WindowBudget | undefined;

  private constructor(
    private readonly pool: BudgetDatabase,
    private readonly where: string,
    private readonly o: SharedBudgetOptions,
  ) {
    this.hash = keyHash(o.key);
    this.windowMs = o.windowMs ?? 60_000;
    this.share = o.sliceShare ?? 0.1;
    this.cuPerWindow = o.cuPerWindow;
    this.paused = o.paused ?? new Pause();
    this.clock = o.clock ?? realClock;
  }

  /** No claim before then: a pause, or a full window or day. */
  private get waitUntil(): number {
    return Math.max(this.paused.until, this.fullUntil);
  }

  get budget(): WindowBudget {
    return { cuPerWindow: this.cuPerWindow, windowMs: this.windowMs };
  }

  /**
   * Claims from now on cap the window at this budget (the service announced or taught another).
   * In windows of another length, this process gives back what is left of its slice and counts
   * what it spent in the old window in the new one too (it was sent, and may have reached the
   * service in it), up to its budget.
   */
  async setBudget(cuPerWindow: number, windowMs = this.windowMs): Promise<void> {
    this.cuPerWindow = cuPerWindow;
    if (windowMs !== this.windowMs) {
      const [old, s] = [this.windowMs, this.slice];
      const spent = s && this.clock.now() < s.endsAt && this.spent?.start === s.start ? this.spent.cu : 0;
      this.windowMs = windowMs;
      this.slice = undefined;
      this.spent = undefined;
      this.pace = undefined;
      this.fullUntil = 0;
      const before = this.switching;
      this.switching = (async () => {
        await before;
        if (s && s.left > 0) await this.query(GIVE_BACK, [this.hash, this.o.service, old, s.start, s.left]);
        if (spent > 0) await this.query(CARRY, [this.hash, this.o.service, windowMs, cuPerWindow, Math.min(spent, cuPerWindow)]);
      })();
      // A failure shows at the next claim, which waits for the switch.
      this.switching.catch(() => {});
    }
    await this.switching;
  }

  /** Connects to `url` (postgres://…), creates the tables if missing and removes stale windows. */
  static async open(url: string, o: SharedBudgetOptions): Promise<SharedBudget> {
    return SharedBudget.on(openPool(url, 2), redactUrl(url), o);
  }

  /** The budget in `pool` (`where` names it in messages, never with a password); `open` connects one. */
  static async on(pool: BudgetDatabase, where: string, o: SharedBudgetOptions): Promise<SharedBudget> {
    const budget = new SharedBudget(pool, where, o);
    try {
      await budget.query(MIGRATE, []);
      await budget.query(`DELETE FROM chainlake.budget_windows WHERE start_ms < ${NOW_MS} - ${KEEP_MS}`, []);
      const { rows } = await budget.query<{ learnt_cu: string; learnt_window_ms: string }>(STORED, [budget.hash, o.service]);
      budget.keep(rows[0]);
    } catch (e) {
      await pool.end();
      throw e;
    }
    return budget;
  }

  /** Resolves when a request of `weight` CU may be sent, and says which window it is counted in. */
  async take(weight: number, o: TakeOptions = {}): Promise<Spend> {
    if (weight > this.cuPerWindow) throw new Error(`a request of ${weight} CU never fits a budget of ${this.cuPerWindow} CU per window`);
    // A lead of half a window or more says nothing of which window a request reaches.
    const lead = Math.min(Math.max(0, o.leadMs ?? 0), this.windowMs / 2);
    for (;;) {
      o.signal?.throwIfAborted();
      const now = this.clock.now();
      const arrives = now + lead;
      const s = this.slice;
      // Sent once its window has begun, a request reaches the service in it; sent `lead` before it
      // ends, it still does.
      if (s && now >= s.startsAt && arrives < s.endsAt && s.left >= weight && now >= this.waitUntil) {
        s.left -= weight;
        this.count(s.start, weight);
        return { windowStart: s.start };
      }
      if (now < this.waitUntil) await this.clock.sleep(this.waitUntil - now, o.signal);
      // A slice of the next window, claimed near the end of this one: it is spent from its start.
      else if (s && now < s.startsAt && s.left >= weight) await this.clock.sleep(s.startsAt - now, o.signal);
      else await abortable((this.claiming ??= this.claim(weight, lead).finally(() => (this.claiming = undefined))), o.signal);
    }
  }

  /**
   * A 429 (or retry-after) seen here: every process of this budget waits `ms` from now (or until
   * a later pause already written ends). Returns when the pause ends, by this process's clock.
   */
  async pause(ms: number): Promise<number> {
    const sentAt = this.clock.now();
    this.paused.extend(sentAt + ms);
    const { rows } = await this.query<{ paused_until_ms: string; now_ms: string }>(PAUSE, [this.hash, this.o.service, Math.ceil(ms)]);
    const offset = this.timed(sentAt, Number(rows[0]!.now_ms));
    this.paused.extend(Number(rows[0]!.paused_until_ms) - offset);
    return this.paused.until;
  }

  /**
   * A request sent without taking from this budget (a process's first, before the budget was
   * known) that reached the service in the current window: counted in it (up to its cap), or its
   * CU would be granted again to the others and the window's last request would get a 429.
   */
  async counted(weight: number): Promise<void> {
    await this.switching;
    if (weight > 0) await this.query(CARRY, [this.hash, this.o.service, this.windowMs, this.cuPerWindow, Math.min(Math.ceil(weight), this.cuPerWindow)]);
  }

  /** A budget learnt from the service (its headers, or what got through before a 429), per window (this one's by default). */
  async learn(cuPerWindow: number, windowMs = this.windowMs): Promise<void> {
    await this.query(LEARN, [this.hash, this.o.service, Math.floor(cuPerWindow), windowMs]);
    this.stored = { cuPerWindow: Math.floor(cuPerWindow), windowMs };
  }

  /** Gives the unspent CU of this process's slice back to its window, and disconnects. */
  async close(): Promise<void> {
    try {
      const s = this.slice;
      if (s && s.left > 0) await this.query(GIVE_BACK, [this.hash, this.o.service, this.windowMs, s.start, s.left]);
    } finally {
      this.slice = undefined;
      await this.pool.end();
    }
  }

  private async claim(weight: number, lead: number): Promise<void> {
    await this.switching;
    const budget = this.cuPerWindow;
    const windowMs = this.windowMs;
    const slice = this.sliceFor(weight, Math.max(weight, Math.ceil(budget * this.share)), lead);
    const old = this.slice;
    // A slice whose window ends before a request sent now arrives is over for this process: what is
    // left of it goes back while the others, nearer the service, may still spend it.
    const expired = old && this.clock.now() + lead >= old.endsAt && old.left > 0 ? old : undefined;
    const sentAt = this.clock.now();
    const { rows } = await this.query<{
      now_ms: string;
      start_ms: string;
      paused_until_ms: string;
      cap: string;
      learnt_cu: string | null;
      learnt_window_ms: string | null;
      granted: string | null;
    }>(CLAIM, [
      this.hash,
      this.o.service,
      this.windowMs,
      budget,
      this.o.cuPerDay ?? null,
      slice,
      weight,
      expired?.start ?? 0,
      expired?.left ?? 0,
      Math.round(lead),
    ]);
    const r = rows[0]!;
    if (windowMs !== this.windowMs) {
      // The window changed while the claim was under way: what it got is of no use any more.
      if (r.granted !== null) await this.query(GIVE_BACK, [this.hash, this.o.service, windowMs, Number(r.start_ms), Number(r.granted)]);
      return;
    }
    this.keep(r);
    const offset = this.timed(sentAt, Number(r.now_ms));
    const start = Number(r.start_ms);
    const endsAt = start + this.windowMs - offset;
    const granted = r.granted === null ? 0 : Number(r.granted);
    if (granted > 0) {
      // What is left of an earlier slice of the same window stays spendable.
      const keep = old && old.start === start ? old.left : 0;
      this.slice = { start, startsAt: start - offset, endsAt, left: keep + granted };
      return;
    }
    if (expired) this.slice = undefined;
    const paused = Number(r.paused_until_ms);
    if (paused > Number(r.now_ms)) this.paused.extend(paused - offset);
    else {
      // Held back by a full window: what it spent there is not its pace.
      this.spending(start).refused = true;
      // The next claim is for the next window, as early as what it grants reaches the service in it.
      this.fullUntil = endsAt - lead;
    }
  }

  /** The offset after a query sent at `sentAt` (our clock) read the database's clock as `dbNow`. */
  private timed(sentAt: number, dbNow: number): number {
    this.trips = record(this.trips, sampleOf(sentAt, dbNow, this.clock.now()));
    return (this.offset = bestOffset(this.trips));
  }

  private keep(r: { learnt_cu: string | null; learnt_window_ms: string | null } | undefined): void {
    this.stored = !r || r.learnt_cu === null || r.learnt_window_ms === null ? undefined : { cuPerWindow: Number(r.learnt_cu), windowMs: Number(r.learnt_window_ms) };
  }

  private count(start: number, weight: number): void {
    this.spending(start).cu += weight;
  }

  private spending(start: number): Spending {
    if (this.spent?.start !== start) {
      this.pace = this.paceOf(this.spent, start);
      this.spent = { start, cu: 0, from: this.clock.now() + this.offset, refused: false };
    }
    return this.spent;
  }

  /**
   * CU per window this process spends when the budget does not hold it back: from the window just
   * before `start`, scaled up if it began part way through; unknown if that window refused it.
   */
  private paceOf(w: Spending | undefined, start: number): number | undefined {
    if (!w || w.refused || w.start !== start - this.windowMs) return undefined;
    return (w.cu * this.windowMs) / Math.max(this.windowMs / 10, w.start + this.windowMs - w.from);
  }

  /**
   * A slice is spent by its window's end or lost to it: a process spending slowly claims what its
   * pace spends in the time left, with a quarter to spare, and at most the usual share. Claimed at
   * the window's start with the others, all of it, so that the hungry processes do not leave it
   * less than its pace; what it loses to a window is about a quarter of its pace.
   */
  private sliceFor(weight: number, most: number, lead: number): number {
    const now = this.clock.now() + this.offset + lead;
    const start = now - (now % this.windowMs);
    const pace = this.spent?.start === start ? this.pace : this.paceOf(this.spent, start);
    if (pace === undefined) return most;
    const left = this.windowMs - (now % this.windowMs);
    // A tenth of the usual slice at least, so that a process starting again after a quiet window
    // does not ask the database once per request.
    return Math.min(most, Math.max(weight, Math.ceil(most / 10), Math.ceil((1.25 * pace * left) / this.windowMs)));
  }

  private async query<R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(sql, params);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (unavailable(e)) throw new BudgetUnavailable(`the shared budget's database ${this.where} did not answer: ${message}`);
      throw new Error(`the shared budget's database ${this.where} refused a query: ${message}`);
    }
  }
}

