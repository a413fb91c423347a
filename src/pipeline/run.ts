// Runs a pipeline: every partition of every stream, concurrently, each paged, transformed, written
// and committed batch by batch (partition.ts, batch.ts) as its refresh's strategy says (strategies.ts).
// A failed partition does not stop the others; the run then fails (exit 1) and a rerun resumes
// from the checkpoints. Here: the run's id, its jobs, the pool of Parquet writers, and the report;
// the lake is held by a session (session.ts).
import { join } from 'node:path';
import PQueue from 'p-queue';
import { Client, type ClientOptions } from '../sources/client.js';
import { Reachability } from '../sources/reach.js';
import type { SharedBudgetFactory } from '../sources/shared.js';
import type { Service } from '../decl/stream.js';
import type { Pipeline } from '../config/pipeline.js';
import type { ParquetWriter } from '../load/parquet.js';
import { STAGING, type StateStore } from '../state/store.js';
import { ServiceError, Skipped, UsageError } from '../errors.js';
import type { RunReport, StreamReport } from './report.js';
import { describeError, holdForRun, openWriter, type LakeSession, type RunHoldOptions } from './session.js';
import { PartitionRun, type Job, type PartitionOptions } from './partition.js';
import { planJobs } from './plan.js';
import type { TableMergeInput } from './merge.js';
import { strategyOf } from './strategies.js';
import { compactTables } from './compact.js';
import { landedColumns } from '../transform/columns.js';
import type { SpecOptions } from './spec.js';

/** What a run in this process is given: its spec's options and what only this process has. */
export interface RunOptions extends SpecOptions, PartitionOptions {
  lake: string;
  /** Partitions worked on at once (requests are capped by each service's queue). */
  partitionConcurrency?: number;
  client?: ClientOptions;
  /** Each service's budget shared with other processes on its key (--budget-db); the caller closes them. */
  sharedBudget?: SharedBudgetFactory;
  /** Wait for another writer of the lake instead of refusing. */
  wait?: boolean;
  /**
   * After the partitions: compact those where at least this many small files would merge
   * (the command line gives AUTO_MIN_FILES unless `--no-compact`); none when not given.
   */
  compactAfter?: number | false;
  /** Called once the run has its (live) report: its counters move as the run goes (progress display). */
  onStart?: (report: RunReport) => void;
}

let last = { base: '', n: 1 };

/** UTC time of the start and the process id; a second run of one process in one second gets `-2`, and so on. */
export function runId(): string {
  const base = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z') + '-' + process.pid;
  if (base !== last.base) last = { base, n: 1 };
  else last.n++;
  return last.n === 1 ? base : `${base}-${last.n}`;
}

/** A partition's fetch and commits, as its refresh's strategy says; done when its last commit is. */
async function refresh(p: PartitionRun): Promise<TableMergeInput | undefined> {
  try {
    return await strategyOf(p.job.decl).refresh(p);
  } finally {
    // A failed fetch still waits for the commits before it: nothing may write once the run ends.
    await p.settled();
  }
}

/** The clients of a run, one per service; only the data service is sent the key. */
export type Clients = Record<Service, Client>;

export function newClients(p: Pipeline, o: Pick<RunOptions, 'client' | 'sharedBudget'> & Partial<Pick<RunOptions, 'logger'>>): Clients {
  const onWait = o.logger && ((w: { service: Service; cause: string; until: string; seconds: number }) => o.logger!.warn(w, `requests to the ${w.service} service wait ${w.seconds} s (${w.cause}), until ${w.until}`));
  // Services at one address learn together that it is down (sources/reach.ts).
  const reach = new Reachability();
  // Only the data service is sent the key: the others' budgets are the service's, whoever asks.
  const client = (s: Service) => new Client(s, p.sources[s], { ...(onWait ? { onWait } : {}), reach, ...o.client, shared: o.sharedBudget?.(s, s === 'data' ? p.sources.data.apiKey : undefined) });
  return { data: client('data'), metrics: client('metrics'), node: client('node') };
}

/** Per service the run used: the budget in force at its end and where it came from. */
export function budgetsOf(jobs: Job[], clients: Clients): RunReport['budgets'] {
  const used = new Set(jobs.map((j) => j.decl.service));
  return Object.fromEntries([...used].map((svc) => [svc, clients[svc].budgetState()]));
}

/** What working jobs takes from a run's options. */
export type JobOptions = PartitionOptions & Pick<RunOptions, 'partitionConcurrency' | 'strict'> & {
  runId: string;
  /** Why the lake is no longer this process's to write, if it is not: a partition failing then fails for that (its own error is what the new writer's clean-up left). */
  lockLost?: () => string | undefined;
};

/**
 * Works `jobs` into `store`: every partition, at most `partitionConcurrency` at once, then each
 * table's commit at the end of its stream, where its strategy has one. Outcomes land in the jobs'
 * reports: a failed partition is an error there, never a throw. The caller holds the right to
 * write (the lake's lock, or a worker's leases through the guard its store was made with).
 */
export async function runJobs(jobs: Job[], store: StateStore, clients: Clients, o: JobOptions): Promise<void> {
  const writers: ParquetWriter[] = [];
  try {
    const queue = new PQueue({ concurrency: o.partitionConcurrency ?? 8 });
    const free: ParquetWriter[] = [];
    const withWriter = async <T>(f: (w: ParquetWriter) => Promise<T>): Promise<T> => {
      const w = free.pop() ?? (await openWriter(store, store.path(join(STAGING, `duckdb-${process.pid}`))));
      if (!writers.includes(w)) writers.push(w);
      try {
        return await f(w);
      } finally {
        free.push(w);
      }
    };
    // Seconds per stream are wall time from its first partition's start to its last one's end.
    const streamStart: Record<string, number> = {};
    const runJob = (job: Job) =>
      queue.add(async (): Promise<TableMergeInput | undefined> => {
        const started = (streamStart[job.decl.table] ??= performance.now());
        try {
          const out = await withWriter((w) => refresh(new PartitionRun(job, store, w, clients[job.decl.service], o)));
          job.report.partitionsDone++;
          o.logger.info({ table: job.decl.table, partition: job.partition.id }, 'partition done');
          return out;
        } catch (err) {
          if (err instanceof Skipped) {
            job.report.partitionsDone++;
            job.report.skips.push(`${job.partition.id}: ${err.message}`);
            o.logger.warn({ table: job.decl.table, partition: job.partition.id, reason: err.message }, 'partition skipped');
            return undefined;
          }
          const lost = o.lockLost?.();
          job.report.errors.push(`${job.partition.id}: ${lost ?? describeError(err)}`);
          if (err instanceof ServiceError && err.permanent) job.report.refused = (job.report.refused ?? 0) + 1;
          if (err instanceof UsageError) job.report.misconfigured = (job.report.misconfigured ?? 0) + 1;
          // A stop cuts every partition under way short: the stop is said once (stoppable), not a line each.
          if (o.signal?.aborted) o.logger.debug({ table: job.decl.table, partition: job.partition.id, err: describeError(err) }, 'partition stopped');
          else o.logger.error({ table: job.decl.table, partition: job.partition.id, err: describeError(err) }, 'partition failed');
          return undefined;
        } finally {
          job.report.seconds = (performance.now() - started) / 1000;
        }
      });
    const byTable = new Map<string, Job[]>();
    for (const job of jobs) byTable.set(job.decl.table, [...(byTable.get(job.decl.table) ?? []), job]);
    await Promise.all(
      [...byTable.values()].map(async (tableJobs) => {
        const decl = tableJobs[0]!.decl;
        const outs = await Promise.all(tableJobs.map(runJob));
        try {
          await strategyOf(decl).finish(tableJobs, outs, store, withWriter, o.runId);
        } catch (err) {
          tableJobs[0]!.report.errors.push(`merge into ${decl.table}: ${describeError(err)}`);
        }
      }),
    );
    if (o.strict)
      for (const r of new Set(jobs.map((j) => j.report))) if (r.rejects > 0) r.errors.push(`${r.rejects} rows rejected (--strict); see the _rejects view`);
  } finally {
    for (const w of writers) w.close();
  }
}

/** A run's id, its jobs (a full refresh resolved for each) and its report (live: its counters move as the run goes). */
export function newRun(p: Pipeline, lake: string, fullRefresh?: string[]): { jobs: Job[]; reports: Map<string, StreamReport>; report: RunReport } {
  const reports = new Map<string, StreamReport>();
  const jobs = planJobs(p, reports, fullRefresh);
  const report: RunReport = { runId: runId(), pipeline: p.name, lake, startedAt: new Date().toISOString(), status: 'running', streams: [...reports.values()] };
  return { jobs, reports, report };
}

export async function runPipeline(p: Pipeline, o: RunOptions): Promise<RunReport> {
  const { logger, signal, flushRows, keepRaw, partitionConcurrency, strict } = o;
  return holdRun(p, { lake: o.lake, fullRefresh: o.fullRefresh, wait: o.wait, compactAfter: o.compactAfter, signal, logger }, async ({ session, jobs, report }) => {
    const clients = newClients(p, { client: o.client, sharedBudget: o.sharedBudget, logger });
    logger.info({ run: report.runId, pipeline: p.name, partitions: jobs.length, lake: session.store.lake }, 'run started');
    o.onStart?.(report);
    await noteAddedColumns(session.store, jobs);
    await runJobs(jobs, session.store, clients, { logger, signal, flushRows, keepRaw, partitionConcurrency, strict, runId: report.runId, lockLost: () => session.lostLock() });
    report.budgets = budgetsOf(jobs, clients);
  });
}

/**
 * Says of each table the run fetches the columns its declaration has and its rows landed so far
 * do not (a newer chainlake added them): NULL in those rows, which a rebuild fills. Read before the
 * run's first commit of the table gives its schema the new columns.
 */
export async function noteAddedColumns(store: Pick<StateStore, 'publisher'>, jobs: Job[]): Promise<void> {
  const seen = new Set<string>();
  for (const job of jobs) {
    const table = job.decl.table;
    if (seen.has(table)) continue;
    seen.add(table);
    const landed = await store.publisher?.columns?.(table);
    if (!landed) continue;
    const added = landedColumns(job.decl).map(([name]) => name).filter((n) => !landed.includes(n));
    if (added.length) job.report.notes.push(`${added.length === 1 ? 'a column' : 'columns'} new since its rows were written: ${added.join(', ')} (NULL in those rows; \`chainlake rebuild ${table}\` fills ${added.length === 1 ? 'it' : 'them'} from the raw pages, \`--full-refresh ${table}\` by fetching again)`);
  }
}

/** What the shell of a run takes from its options: holding the lake's, its plan's and its compaction's. */
export type HoldRunOptions = RunHoldOptions & Pick<RunOptions, 'lake' | 'fullRefresh' | 'compactAfter'>;

/** A run's jobs and report, and the session holding its lake. */
export interface HeldRun {
  session: LakeSession;
  jobs: Job[];
  reports: Map<string, StreamReport>;
  report: RunReport;
}

/**
 * The shell of every run, in this process or queued: its jobs planned before the lake is opened,
 * the lake held while `work` fills the report (holdForRun), then the run's status from its
 * streams' errors and its tables compacted while the lake is still held.
 */
export async function holdRun(p: Pipeline, o: HoldRunOptions, work: (run: HeldRun) => Promise<void>, failed?: (report: RunReport, err: unknown) => void): Promise<RunReport> {
  const { jobs, reports, report } = newRun(p, o.lake, o.fullRefresh);
  const { wait, signal, logger, compactAfter, clock } = o;
  await holdForRun(
    o.lake,
    report,
    { wait, signal, logger, clock },
    async (session) => {
      await work({ session, jobs, reports, report });
      report.status = report.streams.some((s) => s.errors.length) ? 'failed' : 'ok';
      await compactAfterRun(session, jobs, report, { compactAfter, signal, logger });
    },
    failed && ((err) => failed(report, err)),
  );
  return report;
}

/**
 * The small files of the run's tables merged, in block order, by the same commits as `chainlake
 * compact`, while the run still holds the lake: a query of the lake right after a backfill opens a
 * few files, not one per batch, with the row groups' hash blooms (compactTables). Not after a stop;
 * a failure is told and leaves the lake as it was at the last group merged (the run's data is
 * committed already).
 */
export async function compactAfterRun(session: LakeSession, jobs: Job[], report: RunReport, o: Pick<RunOptions, 'compactAfter' | 'signal' | 'logger'>): Promise<void> {
  if (o.signal?.aborted) return;
  const tables = [...new Set(jobs.map((j) => j.decl.table))];
  if (!o.compactAfter) {
    // Without a compaction, files kept for older snapshots still go once their retention is over.
    try {
      for (const t of tables) await session.store.expireRetained(t);
    } catch (err) {
      o.logger.warn({ err: describeError(err) }, 'expiring old snapshots after the run failed; the lake is whole, `chainlake compact` can do it later');
    }
    return;
  }
  try {
    const done = await compactTables(session.store, await session.writer(), tables, { logger: o.logger, minFiles: o.compactAfter, signal: o.signal });
    const merged = done.filter((c) => c.rowsRewritten > 0).map(({ table, filesBefore, filesAfter }) => ({ table, filesBefore, filesAfter }));
    if (merged.length) report.compacted = merged;
  } catch (err) {
    if (o.signal?.aborted) return;
    o.logger.warn({ err: describeError(err) }, 'compaction after the run failed; the lake is whole, `chainlake compact` can do it later');
  }
}
