// `run --queue`: the run's partitions as jobs for workers (worker.ts) on a PostgreSQL queue
// (cluster/queue.ts). This process holds the lake as a run does (its lock, the roll-forward before,
// the clean-up and the report after) and lends its partitions to the workers: one job per
// partition, or one per table for a stream whose rows merge across partitions (its merge needs
// them all in one place). It puts back the jobs of workers that vanished, adds up what the workers
// report as jobs complete, and exits as a run does.
import { setTimeout as wait } from 'node:timers/promises';
import type { Pipeline } from '../config/pipeline.js';
import { jobLeaseBound } from '../state/lock.js';
import { queueName, QueueUnavailable, WorkQueue, type JobState } from '../cluster/queue.js';
import { errorMessage } from '../cluster/pg.js';
import type { RunReport, StreamReport } from './report.js';
import { addNames } from '../text.js';
import { holdRun, type HeldRun, type HoldRunOptions, type RunOptions } from './run.js';
import type { RunSpec, SpecOptions } from './spec.js';
import type { Job } from './partition.js';
import { strategyOf } from './strategies.js';
import { RunWatch, type Verdict } from './settle.js';

/** What a job asks of a worker: which partitions of which table, of which run (its spec as the command line gave it). */
export interface WorkOrder {
  spec: RunSpec;
  table: string;
  partitions: string[];
}

/** What a worker answers when its job is done. */
export interface WorkResult {
  report: StreamReport;
  budgets?: RunReport['budgets'];
}

/** What a queued run uses of a run's options: its partitions are worked elsewhere, by the spec's options. */
export interface QueuedRunOptions extends Omit<HoldRunOptions, keyof SpecOptions>, Pick<RunOptions, 'onStart'> {
  /** postgres://… */
  queue: string;
  /** The run as the command line gave it, its options included: each job carries it to its worker. */
  spec: RunSpec;
}

/** The lease key of a job: one per partition, or one per table when its rows merge across partitions. */
export function jobKey(queue: string, table: string, partition: string): string {
  return `${queue}/${table}/${partition}`;
}

/** The run's jobs as work orders: one a partition, or one a table whose strategy merges its partitions' rows in one state. */
export function workOrders(jobs: Job[], spec: RunSpec): Array<{ partition: string; order: WorkOrder }> {
  const out: Array<{ partition: string; order: WorkOrder }> = [];
  const orders = new Map<string, WorkOrder>();
  for (const job of jobs) {
    const table = job.decl.table;
    const partition = strategyOf(job.decl).shared ?? job.partition.id;
    const order = orders.get(`${table}\0${partition}`);
    if (order) order.partitions.push(job.partition.id);
    else {
      const o2 = { spec, table, partitions: [job.partition.id] };
      orders.set(`${table}\0${partition}`, o2);
      out.push({ partition, order: o2 });
    }
  }
  return out;
}

/** Adds a worker's report of some of a table's partitions to the run's report of the table. */
export function addReport(into: StreamReport, from: StreamReport): void {
  for (const [k, v] of Object.entries(from) as Array<[keyof StreamReport, unknown]>) {
    if (k === 'partitions' || k === 'table') continue;
    const cur = into[k] as unknown;
    if (k === 'seconds') into.seconds = Math.max(into.seconds, from.seconds);
    // A count the run's report has not begun (refused: absent until a partition is refused) starts at the worker's.
    else if (typeof v === 'number' && (typeof cur === 'number' || cur === undefined)) (into as unknown as Record<string, number>)[k] = ((cur as number | undefined) ?? 0) + v;
    else if (Array.isArray(v) && Array.isArray(cur)) cur.push(...(v as unknown[]));
    // The first of a kind said (outsideFirst): the first worker's to report one.
    else if (typeof v === 'string' && cur === undefined) (into as unknown as Record<string, string>)[k] = v;
    else if (v && typeof v === 'object' && cur && typeof cur === 'object') {
      addNames(cur as Record<string, number>, v as Record<string, number>);
    }
  }
}

/** Waits `ms`, or less when `signal` aborts (Node's timer removes its listener either way). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return wait(ms, undefined, signal ? { signal } : {}).catch(() => undefined);
}

export async function runQueued(p: Pipeline, o: QueuedRunOptions): Promise<RunReport> {
  const { spec, logger, signal } = o;
  // The queue first: a database that does not answer (or refuses the password) leaves the lake untouched.
  const q = await WorkQueue.open(o.queue, { onError: (message) => logger.warn({ err: message }, "the queue's upkeep failed") });
  const bound = jobLeaseBound();
  let renewer: NodeJS.Timeout | undefined;
  // Lends the partitions to the workers and waits for them; the lake is held meanwhile.
  const lend = async ({ session, jobs, reports, report }: HeldRun): Promise<void> => {
    const id = report.runId;
    const queue = queueName(session.store.lake);
    // The run outlives a lost job lease: a worker cut off as long as a lease bound keeps its run.
    await q.beginRun(queue, id, 3 * bound);
    const watch = new RunWatch(bound, Date.now());
    renewer = setInterval(() => {
      q.renewRun(id, 3 * bound).then(
        (ok) => {
          watch.heard(Date.now());
          if (!ok) logger.error({ run: id }, 'the run was ended by a later run on the same lake');
        },
        () => undefined,
      );
    }, Math.max(100, Math.floor(bound / 3)));
    const orders = workOrders(jobs, spec);
    const ids = await q.send(
      queue,
      id,
      orders.map(({ partition, order }) => ({ key: jobKey(queue, order.table, partition), data: order })),
    );
    const orderOf = new Map(ids.map((x, i) => [x, orders[i]!.order]));
    logger.info({ run: id, pipeline: p.name, partitions: jobs.length, jobs: ids.length, lake: session.store.lake, queue: q.where }, 'run queued: waiting for workers');
    o.onStart?.(report);
    const open = new Set(ids);
    let lost = 0;
    const budgets: NonNullable<RunReport['budgets']> = {};
    // What completed jobs reported, per table; the report shown (the progress display reads it)
    // is that plus what the workers say of the jobs under way.
    const done = new Map([...reports].map(([t, r]) => [t, structuredClone(r)]));
    const show = (inflight: Map<string, unknown> = new Map()) => {
      for (const [t, shown] of reports) Object.assign(shown, structuredClone(done.get(t)!));
      for (const [jobId, r] of inflight) {
        const order = orderOf.get(jobId);
        if (!order || !open.has(jobId)) continue;
        addReport(reports.get(order.table)!, { ...(r as StreamReport), errors: [], skips: [] });
      }
    };
    const settle = (s: JobState, v: Verdict) => {
      const order = orderOf.get(s.id)!;
      const into = done.get(order.table)!;
      open.delete(s.id);
      if (v.kind === 'done') {
        const r = s.output as WorkResult;
        addReport(into, r.report);
        Object.assign(budgets, r.budgets ?? {});
        logger.info({ table: order.table, partitions: order.partitions.length, errors: r.report.errors.length }, 'job done');
      } else if (v.kind === 'failed') {
        for (const part of order.partitions) into.errors.push(`${part}: ${v.why}`);
        logger.error({ table: order.table, partitions: order.partitions, err: v.why }, 'job failed');
      }
    };
    watch.queued(Date.now());
    while (open.size > 0 && !signal?.aborted) {
      let states: JobState[];
      try {
        states = await q.states(queue, [...open], bound);
      } catch (err) {
        if (!(err instanceof QueueUnavailable)) throw err;
        const away = watch.away(Date.now());
        if (away.giveUp) throw new QueueUnavailable(`${err.message} (for ${Math.round(away.awayMs / 1000)} s; ${ids.length - open.size} of ${ids.length} jobs done, their commits kept: rerun to finish)`);
        logger.warn({ err: err.message }, "the queue's database is away: waiting for it");
        await sleep(1000, signal);
        continue;
      }
      const { verdicts, noWorker } = watch.polled(states, Date.now());
      if (noWorker) logger.warn({ lake: session.store.lake }, `no worker has taken a job yet: start \`chainlake worker --queue postgres://… --lake ${session.store.lake}\` on a machine that reaches the database, the services and the lake`);
      for (const [i, s] of states.entries()) {
        const v = verdicts[i]!;
        if (v.kind === 'done' || v.kind === 'failed') settle(s, v);
        else if (v.kind === 'lost') {
          lost++;
          logger.warn({ table: orderOf.get(s.id)!.table, partitions: orderOf.get(s.id)!.partitions, attempt: v.attempt }, 'a worker was lost: its job goes to another');
          await q.fail(queue, s.id, v.why);
        }
      }
      show(open.size > 0 ? await q.progressOf(id).catch(() => new Map()) : new Map());
      if (open.size > 0) await sleep(500, signal);
    }
    show();
    report.budgets = budgets;
    if (lost) logger.info({ lost }, 'jobs handed to another worker after theirs was lost');
    if (signal?.aborted) {
      for (const idLeft of open) for (const part of orderOf.get(idLeft)!.partitions) reports.get(orderOf.get(idLeft)!.table)!.errors.push(`${part}: ${errorMessage(signal.reason)}`);
    }
    // The jobs not done are cancelled and their workers commit nothing more before the lake is let
    // go (the run's compaction, holdRun). The run stops renewing itself first: renewed once ended,
    // it would read as ended by another.
    clearInterval(renewer);
    await q.endRun(queue, id).catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'could not end the run in the queue; its workers stop at their lease bound'));
  };
  // A run that fails with partitions left says why against each of their streams.
  const failed = (report: RunReport, err: unknown) => {
    for (const s of report.streams) if (s.partitionsDone < s.partitions && s.errors.length === 0) s.errors.push(errorMessage(err));
  };
  try {
    return await holdRun(p, { lake: o.lake, fullRefresh: spec.options.fullRefresh, wait: o.wait, compactAfter: o.compactAfter, signal, logger }, (run) => lend(run).finally(() => clearInterval(renewer)), failed);
  } finally {
    await q.close();
  }
}
