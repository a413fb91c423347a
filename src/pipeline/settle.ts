// The decisions of a queued run (queued.ts) and of its workers (worker.ts), apart from their I/O:
// what a job's state in the queue means for the run (settled, failed, lost to a vanished worker),
// when the run says that no worker has come or gives up on a database that stays away, and what a
// worker does with a job of a run that is silent or ended, or with a job it was stopped in. Pure:
// the time is an argument, so that a test runs a run's minutes on numbers.

/** A job as the queue reports it (cluster/queue.ts JobState). */
export interface JobView {
  state: 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';
  output: unknown;
  retryCount: number;
  lost: boolean;
  /** Lost because its worker's session with the database ended, not by the bound. */
  gone?: boolean;
}

/** What the run does with a job it polled. */
export type Verdict =
  /** Completed with its worker's report: added to the run's. */
  | { kind: 'done' }
  /** Over without a report: each of its partitions fails with `why`. */
  | { kind: 'failed'; why: string }
  /** Its worker vanished: the job is failed in the queue, which hands it to another worker. */
  | { kind: 'lost'; attempt: number; why: string }
  /** Waiting for a worker, or under way. */
  | { kind: 'open' };

export function verdict(s: JobView, boundMs: number): Verdict {
  if (s.state === 'completed' || s.state === 'failed' || s.state === 'cancelled') {
    const out = s.output as { report?: unknown; message?: string } | null;
    if (s.state === 'completed' && out?.report) return { kind: 'done' };
    return { kind: 'failed', why: out?.message ?? (s.state === 'completed' ? 'abandoned by its worker: the run had ended' : s.state) };
  }
  if (s.lost) {
    const how = s.gone ? "its session with the queue's database ended" : `no lease renewed for ${Math.round(boundMs / 1000)} s`;
    return { kind: 'lost', attempt: s.retryCount + 1, why: `its worker was lost ${s.retryCount + 1} times (${how})` };
  }
  return { kind: 'open' };
}

/** A run none of whose jobs was taken this long says that no worker seems to be there. */
export const NO_WORKER_MS = 15_000;

/** Lease bounds the queue's database may stay away before the run gives up (the workers wait on). */
export const PATIENCE_BOUNDS = 10;

/** The run's watch over its jobs: when it last heard the queue, and whether a worker came. */
export class RunWatch {
  private lastHeard: number;
  private queuedAt: number;
  /** A job was taken, or the run said that none was. */
  private told = false;

  constructor(
    private readonly boundMs: number,
    now: number,
  ) {
    this.lastHeard = now;
    this.queuedAt = now;
  }

  /** The jobs went into the queue at `now`. */
  queued(now: number): void {
    this.queuedAt = now;
  }

  /** The queue's database answered at `now`. */
  heard(now: number): void {
    this.lastHeard = Math.max(this.lastHeard, now);
  }

  /** The jobs' states read at `now`: what to do with each, and whether to say (once) that no worker has come. */
  polled(states: JobView[], now: number): { verdicts: Verdict[]; noWorker: boolean } {
    this.heard(now);
    let noWorker = false;
    if (!this.told && states.some((s) => s.state !== 'created')) this.told = true;
    else if (!this.told && now - this.queuedAt > NO_WORKER_MS) noWorker = this.told = true;
    return { verdicts: states.map((s) => verdict(s, this.boundMs)), noWorker };
  }

  /** The database did not answer at `now`: for how long it has been away, and whether the run gives up. */
  away(now: number): { awayMs: number; giveUp: boolean } {
    const awayMs = now - this.lastHeard;
    return { awayMs, giveUp: awayMs > PATIENCE_BOUNDS * this.boundMs };
  }
}

/** How long a worker waits for a silent run to be heard again before it gives its job back: a run cut off from the database for a moment. */
export const SILENT_BOUNDS = 3;

/** What a worker does with a job of a run in `standing`, having waited `waitedMs` for it while it was silent. */
export function jobStart(standing: 'live' | 'silent' | 'ended', waitedMs: number, boundMs: number, stopping: boolean): { kind: 'work' | 'abandon' | 'give back' } | { kind: 'wait'; ms: number } {
  if (standing === 'ended') return { kind: 'abandon' };
  if (standing === 'live') return { kind: 'work' };
  return waitedMs < SILENT_BOUNDS * boundMs && !stopping ? { kind: 'wait', ms: boundMs / 3 } : { kind: 'give back' };
}

/**
 * A job whose worker was stopped part way: one whose lease was lost (another worker has it, or its
 * run ended) tells the queue nothing; any other goes back to the queue, saying why.
 */
export function jobStopped(leaseLost: boolean, why: string): { kind: 'lost' } | { kind: 'give back'; message: string } {
  return leaseLost ? { kind: 'lost' } : { kind: 'give back', message: `given back: ${why}` };
}
