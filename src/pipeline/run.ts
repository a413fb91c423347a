// Runs a pipeline: every partition of every stream, concurrently, each paged, transformed, written
// and committed batch by batch. A failed partition does not stop the others; the run then fails
// (exit 1) and a rerun resumes from the checkpoints.
import { join } from 'node:path';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { Client, type ClientOptions } from '../sources/client.js';
import type { Pipeline } from '../config/pipeline.js';
import { STREAM_BY_TABLE } from '../streams/index.js';
import { folderOf, type Partition, type StreamConfig, type StreamDecl } from '../decl/stream.js';
import { PageTokenError, paginate } from '../extract/paginate.js';
import type { Page, PaginateOptions } from '../decl/request.js';
import { Transformer } from '../transform/rows.js';
import { ParquetWriter } from '../load/parquet.js';
import { RAW, REBUILD, REJECTS, STAGING, slug, StateStore, TABLE_PARTITION, type PartitionState } from '../state/store.js';
import type { Cursor } from '../state/cursor.js';
import { compressRawPages, rawLine } from '../load/raw.js';
import { Spool } from '../load/spool.js';
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
  /** Tables to rebuild from scratch; their old files are replaced when the rebuild commits. */
  fullRefresh?: Set<string>;
  /** Rejected rows fail the run. */
  strict?: boolean;
  /** Wait for another writer of the lake instead of refusing. */
  wait?: boolean;
  /** Keep every page as sent, compressed, under _raw/ (default true): `rebuild` re-derives from it. */
  keepRaw?: boolean;
  /** Called once the run has its (live) report: its counters move as the run goes (progress display). */
  onStart?: (report: RunReport) => void;
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

let last = { base: '', n: 1 };

/** UTC time of the start and the process id; a second run of one process in one second gets `-2`, and so on. */
export function runId(): string {
  const base = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z') + '-' + process.pid;
  if (base !== last.base) last = { base, n: 1 };
  else last.n++;
  return last.n === 1 ? base : `${base}-${last.n}`;
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

/** How many times one partition restarts its listing after a refused page token, in one run. */
const MAX_RESTARTS = 3;

type Moves = Array<[string, string]>;

interface Staged {
  data: Moves;
  /** Files that travel with the data: rejects, raw pages. */
  side: Moves;
  rows: number;
  rejected: number;
}

const isRaw = (f: string) => f.startsWith(`${RAW}/`) || f.startsWith(`${REBUILD}/${RAW}/`);
const isRejects = (f: string) => f.startsWith(`${REJECTS}/`) || f.startsWith(`${REBUILD}/${REJECTS}/`);

/** What a merge-into-table partition leaves for the table's commit at the end of its stream. */
export interface TableMergeInput {
  job: Job;
  fresh: string[];
}

class PartitionRun {
  private state: PartitionState;
  private transformer: Transformer;
  private readonly prefix: string;
  private readonly table: string;

  constructor(
    private readonly job: Job,
    private readonly store: StateStore,
    private readonly writer: ParquetWriter,
    private readonly client: Client,
    private readonly o: RunOptions & { runId: string },
  ) {
    this.table = job.decl.table;
    // The partition's values (chain_id, network, ...) are kept so `rebuild` can re-derive its rows.
    this.state = { ...store.load(job.decl.table, job.partition.id), values: job.partition.values };
    this.transformer = new Transformer(job.decl, job.partition);
    this.prefix = slug(job.partition.id);
  }

  /** The batch in the making, on disk: staged rows, and raw pages (as sent) unless --no-raw. */
  private spools?: { dir: string; rows: Spool; raw: Spool };

  private get spool(): { dir: string; rows: Spool; raw: Spool } {
    if (!this.spools) {
      const dir = this.store.stagingDir(this.table, this.job.partition.id);
      this.spools = { dir, rows: new Spool(join(dir, 'batch.rows')), raw: new Spool(join(dir, 'batch.raw')) };
    }
    return this.spools;
  }

  private page(page: Page): void {
    this.job.report.pages++;
    if (this.o.keepRaw !== false) {
      // A body as sent is kept as its bytes, unless it is pretty-printed over several lines.
      if (page.raw && !page.raw.includes(0x0a)) this.spool.raw.appendBytes(page.raw);
      else this.spool.raw.append([rawLine(page.raw?.toString('utf8') ?? JSON.stringify(page.items))]);
    }
    this.transformer.push(page.items, page.bytes);
    this.spool.rows.append(this.transformer.takeLines(), page.bytes);
  }

  /** A listing starts again: what its batch held so far is dropped. */
  private dropBatch(transformer: Transformer): void {
    this.spools?.rows.discard();
    this.spools?.raw.discard();
    this.spools = undefined;
    this.transformer = transformer;
  }

  private get fullRefresh(): boolean {
    return this.o.fullRefresh?.has(this.table) ?? false;
  }

  private get flushRows(): number {
    return this.o.flushRows ?? 10_000;
  }

  private get pageSize(): Record<string, string> {
    const { decl, cfg } = this.job;
    return decl.pageSize.max === 0 ? {} : { pageSize: String(cfg.pageSize ?? decl.pageSize.default) };
  }

  private lastRun(complete: boolean): PartitionState['lastRun'] {
    return { runId: this.o.runId, at: new Date().toISOString(), status: complete ? 'complete' : 'partial' };
  }

  /** Writes what the transformer holds to staging, named for where each file will land. */
  private async stage(base = ''): Promise<Staged> {
    const { decl, partition, report } = this.job;
    const batch = this.transformer.take();
    const { dir, rows: rowsSpool, raw: rawSpool } = this.spool;
    this.spools = undefined;
    rowsSpool.append(batch.lines);
    rowsSpool.close();
    rawSpool.close();
    // The raw pages compress on libuv's threads while DuckDB writes the rows on its own.
    const compressed = rawSpool.lines ? compressRawPages(rawSpool.path, join(dir, 'raw'), this.prefix) : Promise.resolve([]);
    compressed.catch(() => undefined); // awaited below; not unhandled if the write fails first
    const data = await this.writer.write(decl, rowsSpool.path, batch.rows, join(dir, 'data'), this.prefix, folderOf(decl, partition.values));
    rowsSpool.discard();
    const rej = await this.writer.writeRejects(decl.table, partition.id, this.o.runId, batch.rejects, join(dir, 'rejects'), this.prefix);
    const raw = await compressed;
    report.rows += batch.rows;
    report.rejects += batch.rejects.length;
    report.over38 += batch.over38;
    report.skipped += batch.skipped;
    for (const [k, n] of Object.entries(batch.extraFields)) report.extraFields[k] = (report.extraFields[k] ?? 0) + n;
    if (batch.rejects.length) this.o.logger.warn({ table: decl.table, partition: partition.id, rejects: batch.rejects.length, first: batch.rejects[0]!.reason }, 'rows rejected');
    return {
      data: data.map((f): [string, string] => [f.staged, `${base}${decl.table}/${f.rel}`]),
      side: [
        ...rej.map((f): [string, string] => [f.staged, `${base}${REJECTS}/${decl.table}/${f.rel}`]),
        ...raw.map((f): [string, string] => [f.staged, `${base}${RAW}/${decl.table}/${f.rel}`]),
      ],
      rows: batch.rows,
      rejected: batch.rejects.length,
    };
  }

  private pages(query: Record<string, string>, startToken?: string) {
    const { decl, partition, report, cfg } = this.job;
    const request = { endpoint: decl.endpoint, stats: report, signal: this.o.signal, weight: decl.weight, flow: `${decl.table}/${partition.id}` };
    const base: PaginateOptions = {
      ...request,
      path: fillPath(decl.endpoint, partition.path),
      query,
      items: decl.items,
      startToken,
      // Pages as bytes only where the paginator hands them straight to the transform.
      bytes: decl.bytesSafe === true && !decl.extract,
    };
    if (!decl.extract) return paginate(this.client, base);
    return decl.extract({
      ...request,
      client: this.client,
      path: base.path,
      query,
      partition,
      config: cfg,
      startToken,
      paginate: (o = {}) => paginate(this.client, { ...base, startToken: undefined, ...o }),
    });
  }

  private restarted(err: PageTokenError, restarts: number): void {
    if (restarts > MAX_RESTARTS) throw err.cause;
    this.job.report.restarts++;
    this.o.logger.warn({ table: this.table, partition: this.job.partition.id, err: err.message }, 'page token refused: restarting the listing from its first page');
  }

  async run(): Promise<TableMergeInput | undefined> {
    if (this.job.decl.refresh === 'append') {
      await this.append();
      return undefined;
    }
    return this.merge();
  }

  /**
   * Block-ranged listing from the high-water block on, committed batch by batch with the page
   * token that continues it. A --full-refresh pages into _rebuild/ and swaps in at the end.
   */
  private async append(): Promise<void> {
    const { decl, cfg, partition } = this.job;
    const bc = decl.blockCursor!;
    if (this.fullRefresh && !this.state.rebuild) this.state = { ...this.state, rebuild: { cursor: {}, files: [], rows: 0, rejects: 0 } };
    const rebuilding = this.state.rebuild !== undefined;
    const base = rebuilding ? `${REBUILD}/` : '';
    const track = () => (rebuilding ? this.state.rebuild! : { cursor: this.state.cursor, files: this.state.files });
    const cfgEnd = cfg[bc.endOption] as number | undefined;
    let cursor = track().cursor;
    let window = cursor.window;
    if (!window) {
      const start = Math.max((cfg[bc.startOption] as number | undefined) ?? 0, cursor.nextBlock ?? 0);
      if (cfgEnd !== undefined && start >= cfgEnd && !rebuilding) return;
      const query: Record<string, string> = { ...partition.query, ...this.pageSize };
      if (start > 0) query[bc.start] = String(start);
      if (cfgEnd !== undefined) query[bc.end] = String(cfgEnd);
      window = { query, files: [] };
    }
    const start = Number(window.query[bc.start] ?? 0);
    const end = window.query[bc.end] !== undefined ? Number(window.query[bc.end]) : undefined;
    const skip = cursor.nextBlock === start ? cursor.skip : undefined;
    // The skipped keys seed the newest block: rows found later in that same block add to them.
    this.transformer = new Transformer(decl, partition, window.carry, { skip, top: window.top ?? skip });
    let token = window.token;
    let replaceOnNext: string[] = [];
    let rowsReplaced = 0;
    let restarts = 0;
    const save = (staged: Staged, next: Cursor, complete: boolean) => {
      const added = [...staged.data, ...staged.side].map(([, t]) => t);
      const dropped = new Set(replaceOnNext);
      const files = [...track().files.filter((f) => !dropped.has(f)), ...added];
      const rows = staged.rows - rowsReplaced;
      const next_: PartitionState = rebuilding
        ? { ...this.state, rebuild: { cursor: next, files, rows: this.state.rebuild!.rows + rows, rejects: this.state.rebuild!.rejects + staged.rejected }, lastRun: this.lastRun(false) }
        : { ...this.state, files, cursor: next, rows: this.state.rows + rows, rejects: this.state.rejects + staged.rejected, lastRun: this.lastRun(complete) };
      this.state = this.store.commit(next_, [...staged.data, ...staged.side], replaceOnNext);
      replaceOnNext = [];
      rowsReplaced = 0;
    };
    for (;;) {
      try {
        for await (const page of this.pages(window.query, token)) {
          this.page(page);
          if (page.next !== undefined && this.transformer.rows < this.flushRows) continue;
          const staged = await this.stage(base);
          const top = this.transformer.getTop();
          if (page.next !== undefined) {
            window = {
              query: window.query,
              token: page.next,
              top,
              carry: this.transformer.getCarry(),
              files: [...window.files.filter((f) => !replaceOnNext.includes(f)), ...[...staged.data, ...staged.side].map(([, t]) => t)],
              rows: (window.rows ?? 0) + staged.rows,
            };
            cursor = { ...cursor, window };
            save(staged, cursor, false);
          } else {
            // The window is done. Without an end block, the newest block seen is refetched next
            // time (it may have grown); its rows committed now are skipped by key.
            const next: Cursor =
              end !== undefined
                ? { nextBlock: end }
                : top
                  ? { nextBlock: top.block, skip: top }
                  : { nextBlock: start, skip };
            save(staged, next, true);
          }
        }
        break;
      } catch (err) {
        if (!(err instanceof PageTokenError)) throw err;
        this.restarted(err, ++restarts);
        // Rows committed by this window are replaced by the first commit of the new listing.
        replaceOnNext = [...window.files];
        rowsReplaced = window.rows ?? 0;
        window = { query: window.query, files: [] };
        token = undefined;
        this.dropBatch(new Transformer(decl, partition, undefined, { skip, top: skip }));
      }
    }
    if (rebuilding) this.swapRebuild();
  }

  /** The rebuilt files replace the partition's old files in one commit. */
  private swapRebuild(): void {
    const rb = this.state.rebuild!;
    const moves: Moves = rb.files.map((f) => [f, f.slice(REBUILD.length + 1)]);
    const files = moves.map(([, t]) => t);
    this.state = this.store.commit(
      { ...this.state, files, cursor: rb.cursor, rebuild: undefined, rows: rb.rows, rejects: rb.rejects, lastRun: this.lastRun(true) },
      moves,
      this.state.files,
    );
  }

  /** Fetches the partition (from its newest point on, for series), then merges by key. */
  private async merge(): Promise<TableMergeInput | undefined> {
    const { decl, partition } = this.job;
    const tc = decl.timeCursor;
    const newest = this.fullRefresh ? undefined : this.state.cursor.newest;
    const query: Record<string, string> = { ...partition.query, ...this.pageSize };
    if (tc?.start && newest !== undefined) query[tc.start] = String(Math.max(Number(query[tc.start] ?? 0), newest));
    let fresh: Staged[] = [];
    let restarts = 0;
    let top: number | undefined;
    const tsIndex = tc ? decl.columns.findIndex((c) => c.name === tc.column) : -1;
    for (;;) {
      try {
        for await (const page of this.pages(query)) {
          this.page(page);
          let oldest: number | undefined;
          if (tc) {
            for (const item of page.items) {
              const t = Number((item as Record<string, unknown>)?.[decl.columns[tsIndex]!.from as string]);
              if (Number.isFinite(t)) {
                top = top === undefined ? t : Math.max(top, t);
                oldest = oldest === undefined ? t : Math.min(oldest, t);
              }
            }
          }
          // Without a start parameter the listing is newest first: once a page reaches below the
          // newest committed point, the rest is committed already.
          const reachedCommitted = tc && !tc.start && newest !== undefined && oldest !== undefined && oldest < newest;
          if (page.next !== undefined && !reachedCommitted && this.transformer.rows < this.flushRows) continue;
          fresh.push(await this.stage());
          if (reachedCommitted) break;
        }
        break;
      } catch (err) {
        if (!(err instanceof PageTokenError)) throw err;
        this.restarted(err, ++restarts);
        fresh = [];
        top = undefined;
        this.dropBatch(new Transformer(decl, partition));
      }
    }
    const freshData = fresh.flatMap((f) => f.data.map(([s]) => s));
    const sideMoves = fresh.flatMap((f) => f.side);
    const rows = fresh.reduce((n, f) => n + f.rows, 0);
    const rejected = fresh.reduce((n, f) => n + f.rejected, 0);
    const cursor: Cursor = { refreshedAt: new Date().toISOString(), ...(tc ? { newest: top ?? newest } : {}) };
    // This fetch is the partition's whole truth: what it committed before goes, raw pages included
    // (a rebuild replays only the fetch that the table holds).
    const whole = this.fullRefresh || decl.refresh === 'replace';
    if (decl.mergeScope === 'table') {
      // The data commits with the table (merge of every partition of the stream); the partition
      // keeps its cursor, the rejects of its latest fetch and the raw pages of every fetch (of
      // this one only, when it is whole).
      const drop = this.state.files.filter((f) => isRejects(f) || whole);
      this.state = this.store.commit(
        { ...this.state, files: [...this.state.files.filter((f) => !drop.includes(f)), ...sideMoves.map(([, t]) => t)], cursor, rows, rejects: rejected, lastRun: this.lastRun(true) },
        sideMoves,
        drop,
      );
      return { job: this.job, fresh: freshData };
    }
    const oldData = this.state.files.filter((f) => !isRejects(f) && !isRaw(f));
    const oldRejects = this.state.files.filter(isRejects);
    const oldRaw = whole ? this.state.files.filter(isRaw) : [];
    const merged = await this.writer.merge(decl, freshData, whole ? [] : oldData.map((f) => this.store.path(f)), this.store.stagingDir(decl.table, partition.id), this.prefix);
    const dataMoves: Moves = merged.map((f) => [f.staged, `${decl.table}/${f.rel}`]);
    // The merge's output (or, for a whole fetch, nothing) takes the place of the old data files.
    const replaced = merged.length > 0 || whole;
    const keepData = replaced ? [] : oldData;
    const keepRaw = this.state.files.filter((f) => isRaw(f) && !oldRaw.includes(f));
    const files = [...keepData, ...keepRaw, ...[...dataMoves, ...sideMoves].map(([, t]) => t)];
    const deletes = [...(replaced ? oldData : []), ...oldRejects, ...oldRaw];
    const total = replaced ? await this.writer.countRowsOf(merged.map((f) => f.staged)) : this.state.rows;
    this.state = this.store.commit({ ...this.state, files, cursor, rows: total, rejects: rejected, lastRun: this.lastRun(true) }, [...dataMoves, ...sideMoves], deletes);
    return undefined;
  }
}

/**
 * Merges the fresh rows of every partition of a table stream into the table, in one commit.
 * `replace`: the fresh rows are the whole table (every partition fetched), old rows go.
 */
async function commitTable(decl: StreamDecl, inputs: TableMergeInput[], store: StateStore, writer: ParquetWriter, replace: boolean, runId: string): Promise<void> {
  const state = store.load(decl.table, TABLE_PARTITION);
  const fresh = inputs.flatMap((i) => i.fresh);
  if (fresh.length === 0 && !replace) return;
  const merged = fresh.length ? await writer.merge(decl, fresh, replace ? [] : state.files.map((f) => store.path(f)), store.stagingDir(decl.table, TABLE_PARTITION), slug(TABLE_PARTITION)) : [];
  const moves: Moves = merged.map((f) => [f.staged, `${decl.table}/${f.rel}`]);
  const rows = await writer.countRowsOf(merged.map((f) => f.staged));
  store.commit(
    { ...state, files: moves.map(([, t]) => t), rows, cursor: { refreshedAt: new Date().toISOString() }, lastRun: { runId, at: new Date().toISOString(), status: 'complete' } },
    moves,
    state.files,
  );
}

export async function runPipeline(p: Pipeline, o: RunOptions): Promise<RunReport> {
  const store = new StateStore(o.lake);
  const reports = new Map<string, StreamReport>();
  const jobs = planJobs(p, reports);
  const report: RunReport = { runId: runId(), pipeline: p.name, lake: store.lake, startedAt: new Date().toISOString(), status: 'running', streams: [...reports.values()] };
  const lock = await LakeLock.acquire(store.lake, { wait: o.wait, signal: o.signal, onWait: (holder) => o.logger.info({ holder }, 'waiting for the other run on this lake') });
  const t0 = performance.now();
  const writers: ParquetWriter[] = [];
  try {
    const { rolledForward } = store.recover();
    if (rolledForward) o.logger.info({ rolledForward }, 'finished commits of an interrupted run');
    const clients = {
      data: new Client('data', p.sources.data, o.client),
      metrics: new Client('metrics', p.sources.metrics, o.client),
      node: new Client('node', p.sources.node, o.client),
    };
    const queue = new PQueue({ concurrency: o.partitionConcurrency ?? 8 });
    const free: ParquetWriter[] = [];
    const withWriter = async <T>(f: (w: ParquetWriter) => Promise<T>): Promise<T> => {
      const w = free.pop() ?? (await ParquetWriter.open(store.path(join(STAGING, 'duckdb'))));
      if (!writers.includes(w)) writers.push(w);
      try {
        return await f(w);
      } finally {
        free.push(w);
      }
    };
    // Seconds per stream are wall time from its first partition's start to its last one's end.
    const streamStart: Record<string, number> = {};
    o.logger.info({ run: report.runId, pipeline: p.name, partitions: jobs.length, lake: store.lake }, 'run started');
    o.onStart?.(report);
    const runJob = (job: Job) =>
      queue.add(async (): Promise<TableMergeInput | undefined> => {
        const started = (streamStart[job.decl.table] ??= performance.now());
        try {
          const out = await withWriter((w) => new PartitionRun(job, store, w, clients[job.decl.service], { ...o, runId: report.runId }).run());
          job.report.partitionsDone++;
          o.logger.info({ table: job.decl.table, partition: job.partition.id }, 'partition done');
          return out;
        } catch (err) {
          job.report.errors.push(`${job.partition.id}: ${describeError(err)}`);
          o.logger.error({ table: job.decl.table, partition: job.partition.id, err: describeError(err) }, 'partition failed');
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
        if (decl.mergeScope !== 'table') return;
        const inputs = outs.filter((x): x is TableMergeInput => x !== undefined);
        const full = o.fullRefresh?.has(decl.table) ?? false;
        const complete = inputs.length === tableJobs.length;
        // A full refresh swaps the table only when every partition fetched, so nothing is lost.
        if (full && !complete) return;
        // A replace table is replaced only by a complete fetch; a partial one merges (keeps the
        // rows of the partitions that failed) and the next complete run replaces.
        const replace = full || (decl.refresh === 'replace' && complete);
        try {
          await withWriter((w) => commitTable(decl, inputs, store, w, replace, report.runId));
        } catch (err) {
          tableJobs[0]!.report.errors.push(`merge into ${decl.table}: ${describeError(err)}`);
        }
      }),
    );
    const used = new Set(jobs.map((j) => j.decl.service));
    report.budgets = Object.fromEntries([...used].map((svc) => [svc, clients[svc].budgetState()]));
    if (o.strict)
      for (const s of report.streams) if (s.rejects > 0) s.errors.push(`${s.rejects} rows rejected (--strict); see the _rejects view`);
    report.status = report.streams.some((s) => s.errors.length) ? 'failed' : 'ok';
  } finally {
    for (const w of writers) w.close();
    // What the run staged and did not commit (a merge's inputs, a batch cut short) goes now, not
    // at the next start: _staging does not keep a run's leftovers on disk between runs.
    try {
      store.recover();
    } catch (err) {
      o.logger.warn({ err: describeError(err) }, 'could not clear _staging; the next run will');
    }
    report.finishedAt = new Date().toISOString();
    report.seconds = (performance.now() - t0) / 1000;
    if (report.status === 'running') report.status = 'failed';
    saveReport(store.lake, report);
    lock.release();
  }
  o.logger.info({ run: report.runId, status: report.status, seconds: report.seconds }, 'run finished');
  return report;
}
