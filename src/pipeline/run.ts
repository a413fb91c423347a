// Runs a pipeline: every partition of every stream, concurrently, each paged, transformed, written
// and committed batch by batch. A failed partition does not stop the others; the run then fails
// (exit 1) and a rerun resumes from the checkpoints.
import { join } from 'node:path';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { Client, type ClientOptions } from '../sources/client.js';
import type { Pipeline } from '../config/pipeline.js';
import { STREAM_BY_TABLE } from '../streams/index.js';
import type { Partition, StreamConfig, StreamDecl } from '../streams/types.js';
import { paginate } from '../extract/paginate.js';
import { Transformer } from '../transform/rows.js';
import { ParquetWriter } from '../load/parquet.js';
import { REJECTS, slug, StateStore, type Cursor, type PartitionState } from '../state/store.js';
import { LakeLock } from '../state/lock.js';
import { UsageError } from '../errors.js';
import { newStreamReport, saveReport, type RunReport, type StreamReport } from './report.js';

export interface RunOptions {
  lake: string;
  logger: Logger;
  /** Rows buffered per partition before a commit. */
  flushRows?: number;
  /** Partitions worked on at once (requests are capped by each service's queue). */
  partitionConcurrency?: number;
  client?: ClientOptions;
  signal?: AbortSignal;
}

interface Job {
  decl: StreamDecl;
  cfg: StreamConfig;
  partition: Partition;
  report: StreamReport;
}

function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(values[k] ?? ''));
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function runId(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z') + '-' + process.pid;
}

/** All jobs of a pipeline; two entries that name the same partition of a table are a config error. */
export function planJobs(p: Pipeline, reports: Map<string, StreamReport>): Job[] {
  const jobs: Job[] = [];
  const seen = new Map<string, number>();
  p.streams.forEach((cfg, i) => {
    const decl = STREAM_BY_TABLE.get(cfg.table)!;
    if (!reports.has(decl.table)) reports.set(decl.table, newStreamReport(decl.table));
    const report = reports.get(decl.table)!;
    for (const partition of decl.partitions(cfg)) {
      const key = `${decl.table}\0${partition.id}`;
      if (seen.has(key)) throw new UsageError(`${p.file}: streams[${i}]: partition ${partition.id} of ${decl.table} is also in streams[${seen.get(key)}]`);
      seen.set(key, i);
      report.partitions++;
      jobs.push({ decl, cfg, partition, report });
    }
  });
  return jobs;
}

class PartitionRun {
  private state: PartitionState;
  private readonly transformer: Transformer;
  private readonly prefix: string;

  constructor(
    private readonly job: Job,
    private readonly store: StateStore,
    private readonly writer: ParquetWriter,
    private readonly client: Client,
    private readonly o: RunOptions & { runId: string },
  ) {
    this.state = store.load(job.decl.table, job.partition.id);
    this.transformer = new Transformer(job.decl, job.partition, this.state.cursor.window?.carry);
    this.prefix = slug(job.partition.id);
  }

  private get pageSize(): Record<string, string> {
    const { decl, cfg } = this.job;
    return decl.pageSize.max === 0 ? {} : { pageSize: String(cfg.pageSize ?? decl.pageSize.default) };
  }

  /** Writes what the transformer holds to staging; returns [staged, lake-relative] pairs. */
  private async stage(): Promise<{ add: Array<[string, string]>; rows: number; rejects: number; maxBlock?: number }> {
    const { decl, partition, report } = this.job;
    const batch = this.transformer.take();
    const dir = this.store.stagingDir(decl.table, partition.id);
    const data = await this.writer.write(decl, batch, join(dir, 'data'), this.prefix);
    const rej = await this.writer.writeRejects(decl.table, partition.id, this.o.runId, batch.rejects, join(dir, 'rejects'), this.prefix);
    report.rows += batch.rows;
    report.rejects += batch.rejects.length;
    report.over38 += batch.over38;
    if (batch.rejects.length) this.o.logger.warn({ table: decl.table, partition: partition.id, rejects: batch.rejects.length, first: batch.rejects[0]!.reason }, 'rows rejected');
    return {
      add: [...data.map((f): [string, string] => [f.staged, `${decl.table}/${f.rel}`]), ...rej.map((f): [string, string] => [f.staged, `${REJECTS}/${decl.table}/${f.rel}`])],
      rows: batch.rows,
      rejects: batch.rejects.length,
      maxBlock: batch.maxBlock,
    };
  }

  private commit(add: Array<[string, string]>, rows: number, rejects: number, cursor: Cursor, replace?: string[], complete = false): void {
    this.state = this.store.commit(this.state, {
      add,
      replace,
      cursor,
      rows: (replace ? 0 : this.state.rows) + rows,
      rejects: (replace ? 0 : this.state.rejects) + rejects,
      lastRun: { runId: this.o.runId, at: new Date().toISOString(), status: complete ? 'complete' : 'partial' },
    });
  }

  async run(): Promise<void> {
    if (this.job.decl.refresh === 'append') await this.append();
    else await this.replace();
  }

  /** Block-ranged listing after the high-water mark, committed batch by batch with its page token. */
  private async append(): Promise<void> {
    const { decl, cfg, partition, report } = this.job;
    const bc = decl.blockCursor!;
    const flushRows = this.o.flushRows ?? 20_000;
    let window = this.state.cursor.window;
    const prevNext = this.state.cursor.nextBlock;
    let start = 0;
    if (!window) {
      start = Math.max((cfg[bc.startOption] as number | undefined) ?? 0, prevNext ?? 0);
      const end = cfg[bc.endOption] as number | undefined;
      if (end !== undefined && start >= end) return;
      const query: Record<string, string> = { ...partition.query, ...this.pageSize };
      if (start > 0) query[bc.start] = String(start);
      if (end !== undefined) query[bc.end] = String(end);
      window = { query };
    } else {
      start = Number(window.query[bc.start] ?? 0);
    }
    const end = window.query[bc.end] !== undefined ? Number(window.query[bc.end]) : undefined;
    let maxBlock = window.maxBlock;
    const pages = paginate(this.client, {
      path: fillPath(decl.endpoint, partition.path),
      query: window.query,
      items: decl.items,
      endpoint: decl.endpoint,
      stats: report,
      startToken: window.token,
      signal: this.o.signal,
    });
    for await (const page of pages) {
      report.pages++;
      this.transformer.push(page.items);
      if (page.next !== undefined && this.transformer.rows < flushRows) continue;
      const staged = await this.stage();
      if (staged.maxBlock !== undefined) maxBlock = Math.max(maxBlock ?? staged.maxBlock, staged.maxBlock);
      if (page.next !== undefined) {
        this.commit(staged.add, staged.rows, staged.rejects, {
          nextBlock: prevNext,
          window: { query: window.query, token: page.next, maxBlock, carry: this.transformer.getCarry() },
        });
      } else {
        // The window is done: everything below its end (or the newest block seen) is committed.
        const nextBlock = end ?? Math.max(start, maxBlock !== undefined ? maxBlock + 1 : start);
        this.commit(staged.add, staged.rows, staged.rejects, { nextBlock }, undefined, true);
      }
    }
  }

  /** Snapshot-like listing: refetched whole, its files swapped in one commit at the end. */
  private async replace(): Promise<void> {
    const { decl, partition, report } = this.job;
    const flushRows = this.o.flushRows ?? 20_000;
    const add: Array<[string, string]> = [];
    let rows = 0;
    let rejects = 0;
    const pages = paginate(this.client, {
      path: fillPath(decl.endpoint, partition.path),
      query: { ...partition.query, ...this.pageSize },
      items: decl.items,
      endpoint: decl.endpoint,
      stats: report,
      signal: this.o.signal,
    });
    for await (const page of pages) {
      report.pages++;
      this.transformer.push(page.items);
      if (page.next !== undefined && this.transformer.rows < flushRows) continue;
      const staged = await this.stage();
      add.push(...staged.add);
      rows += staged.rows;
      rejects += staged.rejects;
    }
    this.commit(add, rows, rejects, { refreshedAt: new Date().toISOString() }, this.state.files, true);
  }
}

export async function runPipeline(p: Pipeline, o: RunOptions): Promise<RunReport> {
  const store = new StateStore(o.lake);
  const reports = new Map<string, StreamReport>();
  const jobs = planJobs(p, reports);
  const report: RunReport = { runId: runId(), pipeline: p.name, lake: store.lake, startedAt: new Date().toISOString(), status: 'running', streams: [...reports.values()] };
  const lock = LakeLock.acquire(store.lake);
  const t0 = performance.now();
  try {
    const { rolledForward } = store.recover();
    if (rolledForward) o.logger.info({ rolledForward }, 'finished commits of an interrupted run');
    const clients = { data: new Client('data', p.sources.data, o.client), metrics: new Client('metrics', p.sources.metrics, o.client) };
    const queue = new PQueue({ concurrency: o.partitionConcurrency ?? 8 });
    const writers: ParquetWriter[] = [];
    // Seconds per stream are wall time from its first partition's start to its last one's end.
    const streamStart: Record<string, number> = {};
    const free: ParquetWriter[] = [];
    o.logger.info({ run: report.runId, pipeline: p.name, partitions: jobs.length, lake: store.lake }, 'run started');
    await Promise.all(
      jobs.map((job) =>
        queue.add(async () => {
          const writer = free.pop() ?? (await ParquetWriter.open());
          if (!writers.includes(writer)) writers.push(writer);
          const started = (streamStart[job.decl.table] ??= performance.now());
          try {
            await new PartitionRun(job, store, writer, clients[job.decl.service], { ...o, runId: report.runId }).run();
            job.report.partitionsDone++;
            o.logger.info({ table: job.decl.table, partition: job.partition.id }, 'partition done');
          } catch (err) {
            job.report.errors.push(`${job.partition.id}: ${describeError(err)}`);
            o.logger.error({ table: job.decl.table, partition: job.partition.id, err: describeError(err) }, 'partition failed');
          } finally {
            job.report.seconds = (performance.now() - started) / 1000;
            free.push(writer);
          }
        }),
      ),
    );
    for (const w of writers) w.close();
    report.status = report.streams.some((s) => s.errors.length) ? 'failed' : 'ok';
  } finally {
    report.finishedAt = new Date().toISOString();
    report.seconds = (performance.now() - t0) / 1000;
    if (report.status === 'running') report.status = 'failed';
    saveReport(store.lake, report);
    lock.release();
  }
  o.logger.info({ run: report.runId, status: report.status, seconds: report.seconds }, 'run finished');
  return report;
}
