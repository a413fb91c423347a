// The worker's decisions (pipeline/worker.ts workQueue) on a queue in memory and a fake clock: a
// job taken, its lease waited for, held and let go, lost mid-job, the worker stopped mid-job, a
// job that fails, a run silent or ended. The work itself is a fake that commits through the
// worker's leases as the store does; the real queue, processes and PostgreSQL are in
// test/cluster/queue.test.ts.
import { describe, expect, it } from 'vitest';
import { LeaseLost, QueueUnavailable } from '../../src/cluster/queue.js';
import { RunError } from '../../src/errors.js';
import { newStreamReport } from '../../src/pipeline/report.js';
import type { WorkOrder, WorkResult } from '../../src/pipeline/queued.js';
import { SILENT_BOUNDS } from '../../src/pipeline/settle.js';
import { JobLeases, workQueue, type WorkOrderFn } from '../../src/pipeline/worker.js';
import { FakeQueue, recordingLogger } from '../fakes.js';
import { FakeClock } from '../sources/fake-clock.js';

const BOUND = 30_000;
const TABLE = 'transfers';

/** A work order as queued.ts sends one; the fake work reads only its table and partitions. */
const order = (partitions: string[], table = TABLE) => ({ table, partitions, spec: {} as WorkOrder['spec'] });

const result = (partitions: string[], rows = 5): WorkResult => {
  const report = newStreamReport(TABLE);
  report.rows = rows;
  report.partitionsDone = partitions.length;
  return { report };
};

/**
 * A worker over `q` until every job was handed out and the queue is idle (the loop's next take
 * stops it), or until the test aborts `stop`. Returns what it logged and when it ended.
 */
function worker(q: FakeQueue, work: WorkOrderFn, o: { clock?: FakeClock; stop?: AbortController; concurrency?: number } = {}) {
  const clock = o.clock ?? new FakeClock(Date.UTC(2025, 0, 1), { inMemory: true });
  const stop = o.stop ?? new AbortController();
  const logger = recordingLogger();
  const leases = new JobLeases();
  q.onTake ??= () => {
    if (q.jobs.every((j) => j.state !== 'created')) stop.abort();
  };
  const done = clock.run(workQueue({ queue: q, name: 'chainlake-test', leases, work, bound: BOUND, clock }, { logger, signal: stop.signal, concurrency: o.concurrency }));
  return { done, logger, leases, clock, stop };
}

/** Work that commits each partition of its order through the worker's leases, as the store's guard does. */
const committing =
  (leases: () => JobLeases, after?: () => void): WorkOrderFn =>
  async (o, _run, _signal, started) => {
    const r = result(o.partitions);
    started(r.report);
    for (const p of o.partitions) await leases().guard(o.table, p, async () => undefined);
    after?.();
    return r;
  };

describe('a worker and its jobs', () => {
  it('takes a job, holds its lease while it commits, completes it with its report and lets the lease go', async () => {
    const q = new FakeQueue();
    const id = q.add('run-1', 'k/transfers/a', order(['a', 'b']));
    let w!: ReturnType<typeof worker>;
    const seen: Array<{ run: string; partitions: string[] }> = [];
    const work: WorkOrderFn = async (o, run, signal, started) => {
      seen.push({ run, partitions: o.partitions });
      return committing(() => w.leases)(o, run, signal, started);
    };
    w = worker(q, work);
    await w.done;
    expect(seen).toEqual([{ run: 'run-1', partitions: ['a', 'b'] }]);
    expect(q.leases.map((l) => [l.key, l.run, l.commits, l.released])).toEqual([['k/transfers/a', 'run-1', 2, true]]);
    expect(q.events).toEqual([{ kind: 'complete', id, output: result(['a', 'b']) }]);
    // The job is over: its partitions commit no more in this worker.
    await expect(async () => w.leases.guard(TABLE, 'a', async () => 'late')).rejects.toThrow(new LeaseLost(`no lease of ${TABLE}/a in this worker: not committing`));
    expect(w.logger.lines.map((l) => l.msg)).toContain('job done');
  });

  it("a commit of a partition that is not the job's is refused", async () => {
    const q = new FakeQueue();
    q.add('run-1', 'k/transfers/a', order(['a']));
    let w!: ReturnType<typeof worker>;
    w = worker(q, async (o) => {
      await w.leases.guard(TABLE, 'b', async () => undefined);
      return result(o.partitions);
    });
    await w.done;
    // The refusal fails the job: its partition says why, and the lease committed nothing.
    expect(q.leases[0]!.commits).toBe(0);
    const out = q.events[0]!.output as WorkResult;
    expect(q.events[0]!.kind).toBe('complete');
    expect(out.report.errors).toEqual([`a: no lease of ${TABLE}/b in this worker: not committing`]);
  });

  it("waits for a key another worker holds (a job handed out twice), a third of the bound at a time, and works it once it is free", async () => {
    const q = new FakeQueue();
    q.add('run-1', 'k/transfers/a', order(['a']));
    q.heldElsewhere.add('k/transfers/a');
    const clock = new FakeClock(Date.UTC(2025, 0, 1), { inMemory: true });
    const t0 = clock.now();
    let workedAt: number | undefined;
    let tries = 0;
    const lease = q.lease.bind(q);
    q.lease = async (...a) => {
      // The other holder lets go after the worker's second try.
      if (++tries === 2) q.heldElsewhere.clear();
      return lease(...a);
    };
    const w = worker(
      q,
      async (o) => {
        workedAt = clock.now();
        return result(o.partitions);
      },
      { clock },
    );
    await w.done;
    expect(tries).toBe(2);
    expect(workedAt! - t0).toBe(BOUND / 3);
    expect(q.events.map((e) => e.kind)).toEqual(['complete']);
  });

  it('a lease lost mid-job stops the work, commits nothing more and tells the queue nothing: the run puts the job back', async () => {
    const q = new FakeQueue();
    q.add('run-1', 'k/transfers/a', order(['a', 'b']));
    let w!: ReturnType<typeof worker>;
    let late: unknown;
    w = worker(q, async (o, _run, signal) => {
      await w.leases.guard(TABLE, 'a', async () => undefined);
      q.leases[0]!.lose();
      expect(signal.aborted).toBe(true);
      expect(signal.reason).toBeInstanceOf(LeaseLost);
      late = await w.leases.guard(TABLE, 'b', async () => 'committed').catch((e: unknown) => e);
      // Work stopped at its safe point answers what it has; the worker does not hand it in.
      return result(o.partitions);
    });
    await w.done;
    expect(late).toBeInstanceOf(LeaseLost);
    expect(q.leases[0]!.commits).toBe(1);
    expect(q.events).toEqual([]);
    expect(q.jobs[0]!.state).toBe('active');
    expect(w.logger.lines.find((l) => l.msg === 'job lost')?.level).toBe('warn');
  });

  it('a lease lost while the work throws is still a lost job, not a failed one', async () => {
    const q = new FakeQueue();
    q.add('run-1', 'k/transfers/a', order(['a']));
    const w = worker(q, async () => {
      q.leases[0]!.lose();
      throw new RunError('the commit was refused');
    });
    await w.done;
    expect(q.events).toEqual([]);
  });

  it('a worker stopped mid-job gives the job back to the queue, saying why, and takes no other', async () => {
    const q = new FakeQueue();
    const id = q.add('run-1', 'k/transfers/a', order(['a']));
    q.add('run-1', 'k/transfers/b', order(['b']));
    const stop = new AbortController();
    q.onTake = () => undefined;
    const worked: string[][] = [];
    const w = worker(
      q,
      async (o, _run, signal) => {
        worked.push(o.partitions);
        stop.abort();
        expect(signal.reason).toEqual(new RunError('the worker was stopped'));
        return result(o.partitions);
      },
      { stop },
    );
    await w.done;
    expect(worked).toEqual([['a']]);
    expect(q.events).toEqual([{ kind: 'fail', id, message: 'given back: the worker was stopped' }]);
    expect(q.leases[0]!.released).toBe(true);
  });

  it('a worker stopped while it waits for a held key gives the job back without working it', async () => {
    const q = new FakeQueue();
    const id = q.add('run-1', 'k/transfers/a', order(['a']));
    q.heldElsewhere.add('k/transfers/a');
    const stop = new AbortController();
    q.onTake = () => undefined;
    const lease = q.lease.bind(q);
    q.lease = async (...a) => {
      stop.abort();
      return lease(...a);
    };
    let worked = false;
    const w = worker(
      q,
      async (o) => {
        worked = true;
        return result(o.partitions);
      },
      { stop },
    );
    await w.done;
    expect(worked).toBe(false);
    expect(q.events).toEqual([{ kind: 'fail', id, message: 'given back: the worker was stopped' }]);
  });

  it('a job whose work fails completes with each of its partitions failed, and the worker takes the next', async () => {
    const q = new FakeQueue();
    const bad = q.add('run-1', 'k/transfers/a', order(['a', 'b']));
    const good = q.add('run-1', 'k/transfers/c', order(['c']));
    const w = worker(q, async (o) => {
      if (o.partitions[0] === 'a') throw new RunError('the pipeline on this worker does not have partitions a, b');
      return result(o.partitions);
    });
    await w.done;
    expect(q.events.map((e) => [e.kind, e.id])).toEqual([
      ['complete', bad],
      ['complete', good],
    ]);
    const failed = q.events[0]!.output as WorkResult;
    expect(failed.report.table).toBe(TABLE);
    expect(failed.report.errors).toEqual(['a: the pipeline on this worker does not have partitions a, b', 'b: the pipeline on this worker does not have partitions a, b']);
    expect(q.leases.every((l) => l.released)).toBe(true);
  });

  it('a database away mid-job leaves the job to the run (lost, then handed out again), not failed, and the worker waits for the database', async () => {
    const q = new FakeQueue();
    q.add('run-1', 'k/transfers/a', order(['a']));
    const clock = new FakeClock(Date.UTC(2025, 0, 1), { inMemory: true });
    let takes = 0;
    const stop = new AbortController();
    q.onTake = () => {
      if (++takes === 2) stop.abort();
    };
    const w = worker(
      q,
      async () => {
        throw new QueueUnavailable("the queue's database fake did not answer during a commit");
      },
      { clock, stop },
    );
    const t0 = clock.now();
    await w.done;
    expect(q.events).toEqual([]);
    expect(q.jobs[0]!.state).toBe('active');
    expect(clock.now() - t0).toBe(1000);
    expect(w.logger.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(["the queue's database is away: waiting for it", "the queue's database is back"]));
  });

  it('the worker says once that the database is away, however many takes find it so', async () => {
    const q = new FakeQueue();
    q.away = true;
    const clock = new FakeClock(Date.UTC(2025, 0, 1), { inMemory: true });
    let takes = 0;
    const stop = new AbortController();
    q.onTake = () => {
      if (++takes === 4) stop.abort();
    };
    const w = worker(q, async (o) => result(o.partitions), { clock, stop });
    const t0 = clock.now();
    await w.done;
    expect(clock.now() - t0).toBe(3000);
    expect(w.logger.lines.filter((l) => l.msg === "the queue's database is away: waiting for it")).toHaveLength(1);
  });

  it('a job of an ended run is abandoned unworked', async () => {
    const q = new FakeQueue();
    const id = q.add('run-1', 'k/transfers/a', order(['a']));
    q.runs.set('run-1', 'ended');
    let worked = false;
    const w = worker(q, async (o) => {
      worked = true;
      return result(o.partitions);
    });
    await w.done;
    expect(worked).toBe(false);
    expect(q.leases).toEqual([]);
    expect(q.events).toEqual([{ kind: 'complete', id, output: { abandoned: true } }]);
  });

  it('a job of a silent run waits for it a few bounds, then goes back to the queue', async () => {
    const q = new FakeQueue();
    const id = q.add('run-1', 'k/transfers/a', order(['a']));
    q.runs.set('run-1', 'silent');
    const clock = new FakeClock(Date.UTC(2025, 0, 1), { inMemory: true });
    const stop = new AbortController();
    q.onTake = () => {
      if (q.events.length > 0) {
        q.paused = true;
        stop.abort();
      }
    };
    let worked = false;
    const w = worker(
      q,
      async (o) => {
        worked = true;
        return result(o.partitions);
      },
      { clock, stop },
    );
    const t0 = clock.now();
    await w.done;
    expect(worked).toBe(false);
    expect(q.events).toEqual([{ kind: 'fail', id, message: 'its run was silent' }]);
    expect(clock.now() - t0).toBe(SILENT_BOUNDS * BOUND);
  });

  it('a job of a run silent for a moment is worked once the run is heard again', async () => {
    const q = new FakeQueue();
    q.add('run-1', 'k/transfers/a', order(['a']));
    q.runs.set('run-1', 'silent');
    const clock = new FakeClock(Date.UTC(2025, 0, 1), { inMemory: true });
    const runState = q.runState.bind(q);
    let asked = 0;
    q.runState = async (run) => {
      if (++asked === 3) q.runs.set('run-1', 'live');
      return runState(run);
    };
    let workedAt: number | undefined;
    const w = worker(
      q,
      async (o) => {
        workedAt = clock.now();
        return result(o.partitions);
      },
      { clock },
    );
    const t0 = clock.now();
    await w.done;
    expect(workedAt! - t0).toBe((2 * BOUND) / 3);
    expect(q.events.map((e) => e.kind)).toEqual(['complete']);
  });
});
