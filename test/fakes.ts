// Fakes of what the pipeline's drivers talk to: the queue of a worker (pipeline/worker.ts) in
// memory, its leases lost when a test says so, and a logger that keeps what it was told. Time is
// a FakeClock's: nothing here waits on the machine's.
import type { Logger } from 'pino';
import { LeaseLost, QueueUnavailable, type QueuedJob } from '../src/cluster/queue.js';
import type { WorkerLease, WorkerQueue } from '../src/pipeline/worker.js';

/** A lease of a FakeQueue: its guard runs a commit unless the lease was lost or let go. */
export class FakeLease implements WorkerLease {
  released = false;
  lostReason?: string;
  /** Commits run under this lease. */
  commits = 0;

  constructor(
    readonly key: string,
    readonly run: string,
    private readonly onLost: (reason: string) => void,
  ) {}

  /** Another worker took the key over, or the run ended: found at a renewal. */
  lose(reason = `the lease of ${this.key} was taken over or its run ended`): void {
    if (this.lostReason || this.released) return;
    this.lostReason = reason;
    this.onLost(reason);
  }

  async guard<T>(commit: () => Promise<T>): Promise<T> {
    if (this.lostReason || this.released) throw new LeaseLost(`${this.lostReason ?? 'released'}: not committing`);
    const out = await commit();
    this.commits++;
    return out;
  }

  async release(): Promise<void> {
    this.released = true;
  }
}

interface FakeJob {
  id: string;
  data: { run: string; key: string } & Record<string, unknown>;
  state: 'created' | 'active' | 'completed' | 'failed';
}

/** A queue in memory: jobs handed out in order, each once until failed back; what was said to it is kept in `events`. */
export class FakeQueue implements WorkerQueue {
  readonly jobs: FakeJob[] = [];
  /** What the worker told the queue, in order. */
  readonly events: Array<{ kind: 'complete' | 'fail'; id: string; output?: unknown; message?: string }> = [];
  readonly leases: FakeLease[] = [];
  readonly runs = new Map<string, 'live' | 'silent' | 'ended'>();
  /** Keys a live worker elsewhere holds: lease() refuses them. */
  readonly heldElsewhere = new Set<string>();
  /** Calls that find the database away until set back to false. */
  away = false;
  /** take() hands out nothing: the jobs left are for other workers. */
  paused = false;
  /** Heard at every take(): a test's hook into the worker's loop. */
  onTake?: () => void;
  /** A commit to the queue that fails with this (once), as a database away during complete(). */
  failNextComplete?: Error;
  private ids = 0;

  add(run: string, key: string, data: Record<string, unknown>): string {
    const id = `job-${++this.ids}`;
    this.jobs.push({ id, data: { ...data, run, key }, state: 'created' });
    if (!this.runs.has(run)) this.runs.set(run, 'live');
    return id;
  }

  private check(): void {
    if (this.away) throw new QueueUnavailable("the queue's database fake did not answer");
  }

  async runState(runId: string): Promise<'live' | 'silent' | 'ended'> {
    this.check();
    return this.runs.get(runId) ?? 'ended';
  }

  async take<T>(_queue: string): Promise<QueuedJob<T> | undefined> {
    this.onTake?.();
    this.check();
    const job = this.paused ? undefined : this.jobs.find((j) => j.state === 'created');
    if (!job) return undefined;
    job.state = 'active';
    return { id: job.id, data: job.data as T & { run: string; key: string } };
  }

  async complete(_queue: string, id: string, output: object): Promise<void> {
    this.check();
    const err = this.failNextComplete;
    this.failNextComplete = undefined;
    if (err) throw err;
    this.job(id).state = 'completed';
    this.events.push({ kind: 'complete', id, output });
  }

  async fail(_queue: string, id: string, message: string): Promise<void> {
    this.check();
    // Handed out again, as pg-boss retries a failed job.
    this.job(id).state = 'created';
    this.events.push({ kind: 'fail', id, message });
  }

  async progress(): Promise<void> {
    this.check();
  }

  async lease(key: string, runId: string, _boundMs: number, onLost: (reason: string) => void): Promise<FakeLease | undefined> {
    this.check();
    if (this.heldElsewhere.has(key)) return undefined;
    const l = new FakeLease(key, runId, onLost);
    this.leases.push(l);
    return l;
  }

  private job(id: string): FakeJob {
    const j = this.jobs.find((x) => x.id === id);
    if (!j) throw new Error(`no job ${id}`);
    return j;
  }
}

/** A pino-shaped logger that keeps each message with its level. */
export function recordingLogger(): Logger & { lines: Array<{ level: string; msg: string; obj?: unknown }> } {
  const lines: Array<{ level: string; msg: string; obj?: unknown }> = [];
  const at =
    (level: string) =>
    (obj: unknown, msg?: string): void => {
      if (typeof obj === 'string') lines.push({ level, msg: obj });
      else lines.push({ level, msg: msg ?? '', obj });
    };
  const logger = { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), trace: at('trace'), fatal: at('fatal') };
  return logger as unknown as Logger & { lines: typeof lines };
}
