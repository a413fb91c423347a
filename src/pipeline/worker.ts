// `chainlake worker --queue postgres://…`: takes jobs of a lake's runs (queued.ts) from the queue
// and works them as a run works its partitions (run.ts runJobs), on any machine that reaches the
// database, the services and the lake. The lake is not locked: each job's lease (cluster/queue.ts)
// guards every commit of its partitions, so a worker that lost its lease commits nothing, and a
// worker taking a job over resumes from the last commit, rolling forward one left half-done.
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { LeaseLost, QueueUnavailable, WorkQueue, queueName, type JobLease, type QueuedJob } from '../cluster/queue.js';
import { errorMessage } from '../cluster/pg.js';
import { sharedBudgets } from '../cluster/port.js';
import { jobLeaseBound } from '../state/lock.js';
import type { StateStore } from '../state/store.js';
import { icebergPublisher } from '../iceberg/table.js';
import { RunError } from '../errors.js';
import { STREAM_BY_TABLE } from '../streams/index.js';
import { newStreamReport, type StreamReport } from './report.js';
import { budgetsOf, newClients, runJobs, type Clients } from './run.js';
import { planJobs } from './plan.js';
import { sleep, type WorkOrder, type WorkResult } from './queued.js';
import { realClock, type Clock } from '../sources/clock.js';
import { LakeSession } from './session.js';
import { jobStart, jobStopped } from './settle.js';
import { specPipeline } from './spec.js';
import { strategyOf } from './strategies.js';

export interface WorkerOptions {
  /** postgres://… */
  queue: string;
  lake: string;
  /** Jobs worked at once. */
  concurrency?: number;
  /** Partitions of one job (a table merged across partitions) worked at once. */
  partitionConcurrency?: number;
  logger: Logger;
  /** Stops taking jobs; the jobs under way stop at their next safe point and go back to the queue. */
  signal: AbortSignal;
}

/** How often a worker tells the run how its job goes (the run's progress display). */
const PROGRESS_MS = 2000;

/** What a worker holds of a job key (cluster/queue.ts JobLease). */
export type WorkerLease = Pick<JobLease, 'guard' | 'release'>;

/** What a worker uses of the queue (cluster/queue.ts WorkQueue): a fake one in tests. */
export interface WorkerQueue extends Pick<WorkQueue, 'runState' | 'take' | 'complete' | 'fail' | 'progress'> {
  lease(key: string, runId: string, boundMs: number, onLost: (reason: string) => void): Promise<WorkerLease | undefined>;
}

/** The leases of the jobs under way, by table and partition: the store's guard of every commit. */
export class JobLeases {
  private readonly held = new Map<string, WorkerLease>();

  /** A commit of a partition no job of this worker holds is refused. */
  readonly guard = <T>(table: string, partition: string, change: () => Promise<T>): Promise<T> => {
    const lease = this.held.get(`${table}\0${partition}`);
    if (!lease) throw new LeaseLost(`no lease of ${table}/${partition} in this worker: not committing`);
    return lease.guard(change);
  };

  hold(table: string, partitions: string[], lease: WorkerLease): void {
    for (const p of partitions) this.held.set(`${table}\0${p}`, lease);
  }

  /** Lets the partitions go, unless another job holds them by now. */
  drop(table: string, partitions: string[], lease: WorkerLease | undefined): void {
    for (const p of partitions) if (this.held.get(`${table}\0${p}`) === lease) this.held.delete(`${table}\0${p}`);
  }
}

/**
 * Works a job's partitions under its lease and answers its report; `started` hears the report that
 * the work fills in, once it begins. Aborting `signal` stops it at its next safe point.
 */
export type WorkOrderFn = (order: WorkOrder, run: string, signal: AbortSignal, started: (report: StreamReport) => void) => Promise<WorkResult>;

/** What the worker's loops run on: the queue, the leases its store's commits go through, the work and the time. */
export interface WorkerParts {
  queue: WorkerQueue;
  /** The lake's queue (cluster/queue.ts queueName). */
  name: string;
  leases: JobLeases;
  work: WorkOrderFn;
  /** A job's lease bound. */
  bound: number;
  clock: Clock;
}

export async function runWorker(o: WorkerOptions): Promise<void> {
  // A job's partitions commit under its lease; a commit of anything else is refused.
  const leases = new JobLeases();
  // Workers publish one table's Iceberg snapshots in turn (each moves its metadata one version
  // on, which a store that ignores conditional writes could not arbitrate alone), through the
  // queue's database, opened below.
  let queueOf: WorkQueue | undefined;
  const publisher = (s: StateStore) =>
    icebergPublisher(s, {
      serialize: (table, f) => (queueOf ? queueOf.exclusive(JSON.stringify(['chainlake.iceberg', s.lake, table]), f) : f()),
    });
  const session = await LakeSession.forWorker(o.lake, { guard: leases.guard, publisher });
  const store = session.store;
  const q = await openQueue(o);
  queueOf = q;
  if (!q) {
    await session.close();
    o.logger.info('worker stopped');
    return;
  }
  const shared = sharedBudgets(o.queue);
  // The clients of the latest run: what they learnt (the budget, the latency) serves its next job.
  let clients: { run: string; clients: Clients } | undefined;
  const work: WorkOrderFn = async (order, run, signal, started) => {
    const p = specPipeline(order.spec);
    const reports = new Map<string, StreamReport>();
    const wanted = new Set(order.partitions);
    const jobs = planJobs(p, reports, order.spec.options.fullRefresh).filter((j) => j.decl.table === order.table && wanted.has(j.partition.id));
    if (jobs.length !== wanted.size) throw new RunError(`the pipeline ${order.spec.pipeline.file} on this worker does not have partitions ${[...wanted].join(', ')} of ${order.table}`);
    if (clients?.run !== run) clients = { run, clients: newClients(p, { sharedBudget: shared.factory, logger: o.logger }) };
    await session.recoverPartitions(order.table, jobParts(order));
    o.logger.info({ table: order.table, partitions: order.partitions.length, run }, 'job started');
    const report = jobs[0]!.report;
    started(report);
    const { flushRows, keepRaw, strict } = order.spec.options;
    await runJobs(jobs, store, clients.clients, { flushRows, keepRaw, strict, logger: o.logger, signal, runId: run, partitionConcurrency: o.partitionConcurrency });
    return { report, budgets: budgetsOf(jobs, clients.clients) };
  };
  o.logger.info({ lake: store.lake, queue: q.where, concurrency: o.concurrency ?? 1 }, 'worker started: waiting for jobs');
  try {
    await workQueue({ queue: q, name: queueName(store.lake), leases, work, bound: jobLeaseBound(), clock: realClock }, o);
  } finally {
    await shared.close().catch(() => undefined);
    await q.close();
    await session.close();
    o.logger.info('worker stopped');
  }
}

/** A job's partitions, and the table's state when its table merges across partitions (queued.ts: then one job has them all). */
function jobParts(order: WorkOrder): string[] {
  const decl = STREAM_BY_TABLE.get(order.table);
  const tableState = decl ? strategyOf(decl).shared : undefined;
  return [...order.partitions, ...(tableState ? [tableState] : [])];
}

/** Takes jobs from the queue and works them, `concurrency` at once, until `signal` stops the worker. */
export async function workQueue(w: WorkerParts, o: Pick<WorkerOptions, 'concurrency' | 'logger' | 'signal'>): Promise<void> {
  const { queue: q, name: queue, leases, bound } = w;
  const sleep = (ms: number, signal: AbortSignal) => w.clock.sleep(ms, signal).catch(() => undefined);

  const work = async (job: QueuedJob<WorkOrder>): Promise<void> => {
    const order = job.data;
    const run = job.data.run;
    let start = jobStart(await q.runState(run), 0, bound, o.signal.aborted);
    for (let waited = 0; start.kind === 'wait'; ) {
      await sleep(start.ms, o.signal);
      waited += start.ms;
      start = jobStart(await q.runState(run), waited, bound, o.signal.aborted);
    }
    if (start.kind === 'abandon') {
      await q.complete(queue, job.id, { abandoned: true });
      o.logger.info({ table: order.table, run }, 'job of an ended run: abandoned');
      return;
    }
    if (start.kind === 'give back') {
      // Its run did not renew itself (cut off from the database a while, or gone): back to the
      // queue, for when it is heard again or ends.
      await q.fail(queue, job.id, 'its run was silent');
      o.logger.warn({ table: order.table, run }, 'job given back: its run has not renewed itself');
      return;
    }
    const stop = new AbortController();
    setMaxListeners(0, stop.signal);
    const onStop = () => stop.abort(new RunError('the worker was stopped'));
    o.signal.addEventListener('abort', onStop, { once: true });
    let lease: WorkerLease | undefined;
    let ticker: NodeJS.Timeout | undefined;
    const stopped = async () => {
      const reason = stop.signal.reason;
      const end = jobStopped(reason instanceof LeaseLost, errorMessage(reason));
      if (end.kind === 'lost') o.logger.warn({ table: order.table, err: errorMessage(reason) }, 'job lost');
      else {
        await q.fail(queue, job.id, end.message);
        o.logger.info({ table: order.table }, 'job given back (the worker stops)');
      }
    };
    const parts = jobParts(order);
    try {
      // A live holder of the key is a job handed out twice (its worker was thought lost): wait for it.
      while (!(lease = await q.lease(job.data.key, run, bound, (reason) => stop.abort(new LeaseLost(reason))))) {
        if (stop.signal.aborted) return await stopped();
        await sleep(Math.max(100, bound / 3), stop.signal);
      }
      leases.hold(order.table, parts, lease);
      const result = await w.work(order, run, stop.signal, (report) => {
        ticker = setInterval(() => void q.progress(job.id, run, report).catch(() => undefined), PROGRESS_MS);
      });
      if (stop.signal.aborted) return await stopped();
      await q.complete(queue, job.id, result);
      o.logger.info({ table: order.table, partitions: order.partitions.length, rows: result.report.rows, errors: result.report.errors.length }, 'job done');
    } catch (err) {
      if (stop.signal.aborted) return await stopped();
      if (err instanceof QueueUnavailable) throw err;
      // A job this worker cannot work (its pipeline does not read here, a state it cannot recover)
      // fails its partitions, as a failed partition does in one process.
      const report = newStreamReport(order.table);
      report.errors.push(...order.partitions.map((part) => `${part}: ${errorMessage(err)}`));
      await q.complete(queue, job.id, { report } satisfies WorkResult);
      o.logger.error({ table: order.table, err: errorMessage(err) }, 'job failed');
    } finally {
      clearInterval(ticker);
      o.signal.removeEventListener('abort', onStop);
      leases.drop(order.table, parts, lease);
      await lease?.release();
    }
  };

  const loop = async (): Promise<void> => {
    let away = false;
    while (!o.signal.aborted) {
      try {
        const job = await q.take<WorkOrder>(queue);
        if (away) o.logger.info("the queue's database is back");
        away = false;
        if (job) await work(job);
        else await sleep(500, o.signal);
      } catch (err) {
        if (err instanceof QueueUnavailable) {
          if (!away) o.logger.warn({ err: err.message }, "the queue's database is away: waiting for it");
          away = true;
        } else o.logger.error({ err: errorMessage(err) }, 'job failed');
        await sleep(1000, o.signal);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 1) }, loop));
}

/**
 * The queue, once its database answers: a worker started while it is away (restarting, or not up
 * yet) waits for it as one does mid-run. A database that refuses the worker (its password) ends
 * it. Undefined when the worker is stopped first.
 */
async function openQueue(o: WorkerOptions): Promise<WorkQueue | undefined> {
  for (let away = false; !o.signal.aborted; away = true) {
    try {
      const q = await WorkQueue.open(o.queue, { onError: (message) => o.logger.debug({ err: message }, "the queue's upkeep failed") });
      if (away) o.logger.info("the queue's database is back");
      return q;
    } catch (err) {
      if (!(err instanceof QueueUnavailable)) throw err;
      if (!away) o.logger.warn({ err: err.message }, "the queue's database is away: waiting for it");
      await sleep(1000, o.signal);
    }
  }
  return undefined;
}
