// A run's work as jobs in PostgreSQL (docs/cluster.md, "Workers"). pg-boss keeps the queue: a job
// goes to one worker at a time and is put back (retried) when failed. Who may commit is decided
// here, not by the queue: a lease per job key with a fencing token, renewed by its worker. A commit
// runs inside a transaction that holds the lease's row and checks the token and the run, so a
// worker that lost its lease (taken over, the run ended, the database away past the bound) commits
// nothing, and a takeover waits for a commit under way to end.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomInt, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import PgBoss from 'pg-boss';
import { RunError } from '../errors.js';
import { bounded, boundedAll } from '../text.js';
import { errorMessage, MIGRATION_START, openClient, openPool, unavailable } from './pg.js';
import { redactUrl } from './url.js';

/** pg-boss's tables live in their own schema; chainlake's beside them in `chainlake`. */
const BOSS_SCHEMA = 'chainlake_queue';

const MIGRATE = `
${MIGRATION_START}
CREATE TABLE IF NOT EXISTS chainlake.runs (
  run_id     text PRIMARY KEY,
  queue      text NOT NULL,
  holder     text NOT NULL,
  expires_at timestamptz NOT NULL,
  ended      boolean NOT NULL DEFAULT false
);
CREATE TABLE IF NOT EXISTS chainlake.job_progress (
  job_id     uuid PRIMARY KEY,
  run_id     text NOT NULL,
  report     jsonb NOT NULL
);
CREATE TABLE IF NOT EXISTS chainlake.leases (
  key        text PRIMARY KEY,
  token      bigint NOT NULL,
  holder     text NOT NULL,
  run_id     text NOT NULL,
  expires_at timestamptz NOT NULL
);
ALTER TABLE chainlake.leases ADD COLUMN IF NOT EXISTS taken_at timestamptz;
ALTER TABLE chainlake.leases ADD COLUMN IF NOT EXISTS presence_a integer;
ALTER TABLE chainlake.leases ADD COLUMN IF NOT EXISTS presence_b integer;
`;

/**
 * The holder of lease \`l\` is gone: it named the session advisory lock its worker holds for its
 * life (Presence), and no session of the database holds it now (its process was killed, or its
 * connection dropped: the server ends the session and lets its locks go). pg_locks shows every
 * role's locks; a key of two integers shows as classid and objid with objsubid 2. A lease that
 * names no lock (its worker's session was down when it took it) is never judged gone: its bound
 * finds it.
 */
const HOLDER_GONE = (l: string) => `(${l}.presence_a IS NOT NULL AND NOT EXISTS (
  SELECT 1 FROM pg_locks p WHERE p.locktype = 'advisory' AND p.granted AND p.objsubid = 2
    AND p.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND p.classid = ${l}.presence_a::oid AND p.objid = ${l}.presence_b::oid))`;

const IN_MS = `* interval '1 millisecond'`;

/**
 * Times a job is handed out again after its worker was lost (killed, cut off): a job lost this
 * often fails its partitions, as a failed partition does in one process.
 */
export const JOB_RETRIES = 25;
/** pg-boss's own expiry is a backstop only (a lost worker is found by its lease): below its 24-hour limit. */
const EXPIRE_SECONDS = 23 * 3600;

/** The queue's database did not answer (as opposed to refusing a query). */
export class QueueUnavailable extends RunError {}

/** A worker's lease on a job key was taken over, or its run ended: it must not commit. */
export class LeaseLost extends RunError {}

export interface QueuedJob<T> {
  id: string;
  data: T & { run: string; key: string };
}

export interface JobState {
  id: string;
  state: 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';
  output: unknown;
  retryCount: number;
  /** Active, and no live lease on its key for longer than the bound, or its worker's session ended: its worker is gone. */
  lost: boolean;
  /** Lost because its worker's session with the database ended (rather than by the bound). */
  gone: boolean;
}

/** The queue of a lake: every run and worker of that lake meets there. */
export function queueName(lake: string): string {
  return `chainlake-${createHash('sha256').update(lake).digest('hex').slice(0, 16)}`;
}

/** Who holds a lease, as shown: host and pid. */
export function holderName(): string {
  return `${hostname()}:${process.pid}`;
}

/**
 * `f` while `c` holds the advisory lock of `key`: `take` runs the query that takes it (wrapped as
 * the caller reports a database away), `unlocked` hears an unlock that failed.
 */
async function holding<T>(c: pg.PoolClient, key: string, f: () => Promise<T>, take: (q: () => Promise<unknown>) => Promise<unknown>, unlocked: (e: Error) => void): Promise<T> {
  await take(() => c.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]));
  try {
    return await f();
  } finally {
    await c.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]).catch(unlocked);
  }
}

/** The connection of the commit guard under way (JobLease.guard), for what runs inside it. */
const inGuard = new AsyncLocalStorage<pg.PoolClient>();

export class WorkQueue {
  readonly where: string;

  /** This process's mark of life, for the leases it takes: opened with its first lease. */
  private readonly presence: Presence;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly boss: PgBoss,
    url: string,
  ) {
    this.where = redactUrl(url);
    this.presence = new Presence(url);
  }

  /**
   * Connects to `url` (postgres://…) and creates the tables if missing. `onError` hears what the
   * queue's own upkeep could not do (the database away): the next call fails with a clear error.
   */
  static async open(url: string, o: { onError?: (message: string) => void } = {}): Promise<WorkQueue> {
    const pool = openPool(url, 8);
    const boss = new PgBoss({ connectionString: url, schema: BOSS_SCHEMA, schedule: false, max: 4, application_name: 'chainlake' });
    boss.on('error', (e: unknown) => o.onError?.(errorMessage(e)));
    const q = new WorkQueue(pool, boss, url);
    try {
      await q.call(() => boss.start());
      await q.query(MIGRATE);
    } catch (e) {
      await q.close();
      throw e;
    }
    return q;
  }

  async close(): Promise<void> {
    await this.presence.close();
    await this.boss.stop({ graceful: false, wait: true, close: true }).catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }

  /** Calls the database, naming it (without its password) when it fails. */
  private async call<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      if (unavailable(e)) throw new QueueUnavailable(`the queue's database ${this.where} did not answer: ${errorMessage(e)}`);
      throw new RunError(`the queue's database ${this.where} refused a query: ${errorMessage(e)}`);
    }
  }

  private query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.call(() => this.pool.query<R>(sql, params));
  }

  /**
   * Opens a run on `queue`: the runs before it on the same queue end (their jobs are cancelled and
   * their workers' leases no longer commit; the caller holds the lake, so they are dead), and this
   * one lives while renewRun() keeps it.
   */
  async beginRun(queue: string, runId: string, boundMs: number): Promise<void> {
    await this.call(() => this.boss.createQueue(queue, { name: queue, retryLimit: JOB_RETRIES, retryDelay: 1, expireInSeconds: EXPIRE_SECONDS }));
    await this.query(`UPDATE chainlake.runs SET ended = true WHERE queue = $1 AND NOT ended`, [queue]);
    const old = await this.query<{ id: string }>(`SELECT id FROM ${BOSS_SCHEMA}.job WHERE name = $1 AND state < 'completed'`, [queue]);
    if (old.rows.length) await this.call(() => this.boss.cancel(queue, old.rows.map((r) => r.id)));
    await this.query(`INSERT INTO chainlake.runs (run_id, queue, holder, expires_at) VALUES ($1, $2, $3, clock_timestamp() + $4 ${IN_MS})`, [runId, queue, holderName(), boundMs]);
  }

  /** Keeps the run alive for `boundMs` more; false when it was ended (a later run took the queue). */
  async renewRun(runId: string, boundMs: number): Promise<boolean> {
    const r = await this.query(`UPDATE chainlake.runs SET expires_at = clock_timestamp() + $2 ${IN_MS} WHERE run_id = $1 AND NOT ended RETURNING 1`, [runId, boundMs]);
    return r.rowCount === 1;
  }

  /** Ends the run: its jobs not done are cancelled, its workers commit nothing more. */
  async endRun(queue: string, runId: string): Promise<void> {
    await this.query(`UPDATE chainlake.runs SET ended = true WHERE run_id = $1`, [runId]);
    await this.query(`DELETE FROM chainlake.job_progress WHERE run_id = $1`, [runId]);
    const open = await this.query<{ id: string }>(`SELECT id FROM ${BOSS_SCHEMA}.job WHERE name = $1 AND state < 'completed' AND data->>'run' = $2`, [queue, runId]);
    if (open.rows.length) await this.call(() => this.boss.cancel(queue, open.rows.map((r) => r.id)));
  }

  /** A run's standing: alive (renewed within its bound), silent past its bound (its process away or gone), or ended. */
  async runState(runId: string): Promise<'live' | 'silent' | 'ended'> {
    const r = await this.query<{ live: boolean; ended: boolean }>(`SELECT ended, expires_at > clock_timestamp() AS live FROM chainlake.runs WHERE run_id = $1`, [runId]);
    const row = r.rows[0];
    return !row || row.ended ? 'ended' : row.live ? 'live' : 'silent';
  }

  /** Queues the run's jobs; each `key` names what its lease guards. Returns the jobs' ids, in order. */
  async send<T extends object>(queue: string, runId: string, jobs: Array<{ key: string; data: T }>): Promise<string[]> {
    const ids = jobs.map(() => randomUUID());
    await this.call(() =>
      this.boss.insert(jobs.map((j, i) => ({ id: ids[i], name: queue, data: { ...j.data, run: runId, key: j.key }, retryLimit: JOB_RETRIES, retryDelay: 1, expireInSeconds: EXPIRE_SECONDS }))),
    );
    return ids;
  }

  /**
   * The states of `ids`. An active job is `lost` when its key has had no live lease for `boundMs`,
   * or at once (`gone`) when the lease taken since this attempt began is held by a worker whose
   * session ended: a lease of an earlier attempt says nothing of the worker that has the job now.
   */
  async states(queue: string, ids: string[], boundMs: number): Promise<JobState[]> {
    const r = await this.query<{ id: string; state: JobState['state']; output: unknown; retry_count: number; silent: boolean; gone: boolean }>(
      `SELECT j.id, j.state, j.output, j.retry_count,
              j.state = 'active' AND j.started_on < clock_timestamp() - $3 ${IN_MS}
                AND NOT EXISTS (SELECT 1 FROM chainlake.leases l WHERE l.key = j.data->>'key' AND l.run_id = j.data->>'run'
                                AND l.expires_at > clock_timestamp() - $3 ${IN_MS}) AS silent,
              j.state = 'active'
                AND EXISTS (SELECT 1 FROM chainlake.leases l WHERE l.key = j.data->>'key' AND l.run_id = j.data->>'run'
                            AND l.taken_at >= j.started_on AND ${HOLDER_GONE('l')}) AS gone
       FROM ${BOSS_SCHEMA}.job j WHERE j.name = $1 AND j.id = ANY($2::uuid[])`,
      [queue, ids, boundMs],
    );
    return r.rows.map((x) => ({ id: x.id, state: x.state, output: x.output, retryCount: x.retry_count, lost: x.silent || x.gone, gone: x.gone && !x.silent }));
  }

  /**
   * A worker's report of a job under way, for the run's progress display. What a worker sends the
   * database (a report, a result, a failure) holds service text (errors quoting an answer), so
   * each string in it is bounded as the run's own report is.
   */
  async progress(jobId: string, runId: string, report: object): Promise<void> {
    await this.query(
      `INSERT INTO chainlake.job_progress (job_id, run_id, report) VALUES ($1, $2, $3)
       ON CONFLICT (job_id) DO UPDATE SET report = EXCLUDED.report`,
      [jobId, runId, JSON.stringify(boundedAll(report))],
    );
  }

  /** The reports of a run's jobs under way, by job id. */
  async progressOf(runId: string): Promise<Map<string, unknown>> {
    const r = await this.query<{ job_id: string; report: unknown }>(`SELECT job_id, report FROM chainlake.job_progress WHERE run_id = $1`, [runId]);
    return new Map(r.rows.map((x) => [x.job_id, x.report]));
  }

  /** Puts a job back for another worker (or fails it when it was handed out too often). */
  async fail(queue: string, id: string, message: string): Promise<void> {
    await this.call(() => this.boss.fail(queue, id, { message: bounded(message) }));
  }

  /** The next job of `queue` for this worker, if any. */
  async take<T>(queue: string): Promise<QueuedJob<T> | undefined> {
    // pg-boss's fetch swallows errors (it returns no job): a ping first tells a database away from an empty queue.
    await this.query('SELECT 1');
    const [job] = await this.call(() => this.boss.fetch<T & { run: string; key: string }>(queue, { batchSize: 1 }));
    return job ? { id: job.id, data: job.data } : undefined;
  }

  async complete(queue: string, id: string, output: object): Promise<void> {
    await this.call(() => this.boss.complete(queue, id, boundedAll(output)));
  }

  /**
   * The lease of `key` for the run, when no other live worker holds it: its holder's bound passed,
   * or its holder's session ended (a takeover waits for a commit under way). The lease names this
   * worker's presence, so that its own death hands the key on at once.
   */
  async lease(key: string, runId: string, boundMs: number, onLost: (reason: string) => void): Promise<JobLease | undefined> {
    const me = await this.presence.key();
    const r = await this.query<{ token: string }>(
      `INSERT INTO chainlake.leases AS l (key, token, holder, run_id, expires_at, taken_at, presence_a, presence_b)
       VALUES ($1, 1, $2, $3, clock_timestamp() + $4 ${IN_MS}, clock_timestamp(), $5, $6)
       ON CONFLICT (key) DO UPDATE SET token = l.token + 1, holder = EXCLUDED.holder, run_id = EXCLUDED.run_id, expires_at = EXCLUDED.expires_at,
         taken_at = EXCLUDED.taken_at, presence_a = EXCLUDED.presence_a, presence_b = EXCLUDED.presence_b
       WHERE l.expires_at < clock_timestamp() OR l.run_id <> EXCLUDED.run_id OR ${HOLDER_GONE('l')}
       RETURNING token`,
      [key, holderName(), runId, boundMs, me?.[0] ?? null, me?.[1] ?? null],
    );
    const token = r.rows[0]?.token;
    return token === undefined ? undefined : new JobLease(this, key, token, runId, boundMs, onLost);
  }

  /** @internal JobLease's statements. */
  async leaseQuery(sql: string, params: unknown[]): Promise<pg.QueryResult> {
    return this.query(sql, params);
  }

  /**
   * Runs `f` while holding the advisory lock of `key`, taken in turn by every process on this
   * database: a session lock on a connection of its own, so that a process that dies lets it go.
   */
  async exclusive<T>(key: string, f: () => Promise<T>): Promise<T> {
    // Inside a commit's guard, its connection takes the lock: a second connection from the pool
    // could wait on the pool that the guards hold.
    const held = inGuard.getStore();
    if (held) return holding(held, key, f, (take) => take(), () => undefined);
    const c = await this.connect();
    c.on('error', () => undefined);
    let broken: Error | undefined;
    try {
      return await holding(c, key, f, (take) => this.call(take), (e) => (broken = e));
    } finally {
      // A connection that could not unlock is closed: the server drops its locks with it.
      c.release(broken ?? false);
    }
  }

  /** @internal A connection of its own, for a guarded commit's transaction. */
  async connect(): Promise<pg.PoolClient> {
    return this.call(() => this.pool.connect());
  }
}

/** How long a worker waits before it opens its presence session again after it dropped. */
const PRESENCE_RETRY_MS = 1000;

/**
 * A worker's mark of life in the database: one session of its own for its life, holding a session
 * advisory lock on a random pair of integers that its leases name. The server ends the session of
 * a killed process (its socket closes) and lets the lock go, so a lease naming it is free at once
 * (HOLDER_GONE). A paused or cut-off worker keeps its session open: the lease's bound finds it. A
 * session that dropped while the worker lives is opened again on the same pair; meanwhile the
 * worker's leases may be taken over, which fencing turns into repeated work, not a wrong table.
 */
class Presence {
  private readonly pair: [number, number] = [randomInt(2 ** 31), randomInt(2 ** 31)];
  private session: Promise<pg.Client | undefined> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly url: string) {}

  /** The pair this worker's leases name, or undefined while its session is down (its leases then rely on their bound). */
  async key(): Promise<[number, number] | undefined> {
    this.session ??= this.open();
    return (await this.session) ? this.pair : undefined;
  }

  private async open(): Promise<pg.Client | undefined> {
    const c = openClient(this.url, 'chainlake presence');
    const dropped = () => {
      if (this.closed || this.retry) return;
      // Opened again on the same pair at once (after a pause, not to hammer a database away): the
      // leases under way name it.
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.session = this.open();
      }, PRESENCE_RETRY_MS);
      this.retry.unref();
    };
    c.on('error', dropped);
    c.on('end', dropped);
    try {
      await c.connect();
      const r = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', this.pair);
      if (r.rows[0]?.ok) return c;
    } catch {
      // Down: the leases taken meanwhile name no presence.
    }
    await c.end().catch(() => undefined);
    dropped();
    return undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const c = await this.session;
    await c?.end().catch(() => undefined);
  }
}

/**
 * A worker's hold on a job key. Renewed every third of its bound; lost when the renewal finds the
 * token changed or the run ended, or when the database did not answer for the whole bound.
 */
export class JobLease {
  private timer: NodeJS.Timeout | undefined;
  private renewed = Date.now();
  private lostReason: string | undefined;

  constructor(
    private readonly q: WorkQueue,
    readonly key: string,
    readonly token: string,
    readonly runId: string,
    private readonly boundMs: number,
    private readonly onLost: (reason: string) => void,
  ) {
    this.timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(boundMs / 3)));
    this.timer.unref();
  }

  get lost(): string | undefined {
    return this.lostReason;
  }

  private lose(reason: string): void {
    if (this.lostReason) return;
    this.lostReason = reason;
    clearInterval(this.timer);
    this.onLost(reason);
  }

  private async renew(): Promise<void> {
    if (this.lostReason) return;
    try {
      const r = await this.q.leaseQuery(
        `UPDATE chainlake.leases SET expires_at = clock_timestamp() + $3 ${IN_MS}
         WHERE key = $1 AND token = $2
           AND EXISTS (SELECT 1 FROM chainlake.runs WHERE run_id = $4 AND NOT ended AND expires_at > clock_timestamp())
         RETURNING 1`,
        [this.key, this.token, this.boundMs, this.runId],
      );
      if (r.rowCount === 1) this.renewed = Date.now();
      else this.lose(`the lease of ${this.key} was taken over or its run ended`);
    } catch (e) {
      // Within the bound nobody else can take the lease: the worker goes on.
      if (Date.now() - this.renewed >= this.boundMs) this.lose(`the lease of ${this.key} could not be renewed for ${Math.round(this.boundMs / 1000)} s: ${errorMessage(e)}`);
    }
  }

  /**
   * Runs a commit under the lease: in a transaction that holds the lease's row, after checking the
   * token and the run, so that nobody takes the lease over while it runs. A connection that stays
   * in the transaction longer than the bound (a frozen worker) is closed by the server.
   */
  async guard<T>(commit: () => Promise<T>): Promise<T> {
    if (this.lostReason) throw new LeaseLost(`${this.lostReason}: not committing`);
    // A connection the server drops while checked out reports it here (and to the query under way,
    // if one is): the next query only says the client "is not queryable", so the cause is kept.
    let dropped: Error | undefined;
    const onError = (e: Error) => (dropped ??= e);
    const begun = Date.now();
    const db = async <R>(f: () => Promise<R>): Promise<R> => {
      try {
        return await f();
      } catch (e) {
        if (unavailable(e)) throw new QueueUnavailable(`the queue's database ${this.q.where} did not answer during a commit: ${errorMessage(e)}`);
        if (dropped) {
          const held = Date.now() - begun;
          // The server closes a transaction idle past the bound (a frozen worker's): the lease was free to go meanwhile.
          const why = held > this.boundMs ? `; a commit must end within the job's lease bound of ${this.boundMs / 1000} s (CHAINLAKE_JOB_LEASE_SECONDS), and this one took ${(held / 1000).toFixed(1)} s` : '';
          throw new Error(`the queue's database ${this.q.where} closed the connection guarding a commit (${errorMessage(dropped)})${why}`);
        }
        throw e;
      }
    };
    const c = await this.q.connect();
    c.on('error', onError);
    let ok = false;
    try {
      await db(() => c.query('BEGIN'));
      await db(() => c.query(`SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1000, Math.floor(this.boundMs))}`));
      const held = await db(() =>
        c.query(
          `SELECT 1 FROM chainlake.leases l JOIN chainlake.runs r ON r.run_id = l.run_id
           WHERE l.key = $1 AND l.token = $2 AND l.expires_at > clock_timestamp() AND NOT r.ended AND r.expires_at > clock_timestamp()
           FOR UPDATE OF l FOR SHARE OF r`,
          [this.key, this.token],
        ),
      );
      if (held.rowCount !== 1) {
        this.lose(`the lease of ${this.key} was taken over or its run ended`);
        throw new LeaseLost(`${this.lostReason}: not committing`);
      }
      const out = await inGuard.run(c, commit);
      await db(() => c.query('COMMIT'));
      ok = true;
      return out;
    } finally {
      if (!ok) await c.query('ROLLBACK').catch(() => undefined);
      c.off('error', onError);
      c.release(!ok);
    }
  }

  /** Gives the lease back: the next worker on the key need not wait for its bound. */
  async release(): Promise<void> {
    clearInterval(this.timer);
    if (this.lostReason) return;
    this.lostReason = 'released';
    await this.q.leaseQuery(`DELETE FROM chainlake.leases WHERE key = $1 AND token = $2`, [this.key, this.token]).catch(() => undefined);
  }
}
