// `chainlake compact [tables...]`: merges a partition's small data files into files of up to
// `targetRows` rows. Every commit of a run lands a file (a 10,000-row batch, or the few rows an
// hourly cron run finds), so a lake fed for a month holds thousands of small files, which every
// query opens. The rows do not change: each group of files is rewritten as one file, checked to
// hold as many rows, and swapped in by the same atomic commit a run uses.
import type { Logger } from 'pino';
import { STREAM_BY_TABLE, streamOf } from '../streams/index.js';
import { folderOf, type StreamDecl } from '../decl/stream.js';
import type { ParquetWriter } from '../load/parquet.js';
import { type StateStore, type PartitionState } from '../state/store.js';
import { listingsOf } from '../state/cursor.js';
import { nextStem } from '../state/names.js';
import { withLockedWriter } from './session.js';
import { UsageError } from '../errors.js';
import { TARGET_ROWS } from './sizes.js';

export interface CompactReport {
  table: string;
  partitions: number;
  filesBefore: number;
  filesAfter: number;
  /** Rows in the rewritten files (the same before and after). */
  rowsRewritten: number;
  /** Files kept for older snapshots (a retention) deleted, no snapshot kept naming them any more. */
  filesExpired: number;
  seconds: number;
}

/**
 * Consecutive files whose rows add up to at most `target`, in the order given (inColumnOrder);
 * a file of half the target or more is big enough and stays as it is. Only groups of two or more
 * are worth a rewrite.
 */
export function planGroups(files: Array<{ file: string; rows: number }>, target: number): string[][] {
  const groups: string[][] = [];
  let group: string[] = [];
  let rows = 0;
  const close = () => {
    if (group.length > 1) groups.push(group);
    group = [];
    rows = 0;
  };
  for (const f of files) {
    if (f.rows >= target / 2) {
      close();
      continue;
    }
    if (rows + f.rows > target) close();
    group.push(f.file);
    rows += f.rows;
  }
  close();
  return groups;
}

/** The data files of a partition that a compaction may rewrite. */
function dataFiles(state: PartitionState): string[] {
  // A window being paged may be replaced whole by a restart (an expired page token): its files stay apart.
  const open = new Set(listingsOf(state.cursor.window).flatMap((l) => l.files));
  return state.files.filter((f) => f.startsWith(`${state.table}/`) && !open.has(f));
}

/** The column a table's rows follow in time: its block cursor's, else its time cursor's. */
export function orderColumn(decl: StreamDecl): string | undefined {
  return decl.blockCursor?.column ?? decl.timeCursor?.column;
}

/**
 * Files in the order of their least value of `column` (fetch order among equals, and for files
 * without one). Block ranges fetched at once commit interleaved; joined in this order, a rewritten
 * file's row groups each cover a narrow range instead of the whole chain.
 */
export function inColumnOrder<T extends { file: string; low?: string }>(files: T[]): T[] {
  return files
    .map((f, i) => ({ f, i }))
    .sort((a, b) => (a.f.low === b.f.low ? a.i - b.i : a.f.low === undefined ? 1 : b.f.low === undefined ? -1 : a.f.low < b.f.low ? -1 : 1))
    .map(({ f }) => f);
}

async function compactPartition(decl: StreamDecl, state: PartitionState, store: StateStore, writer: ParquetWriter, target: number, report: CompactReport, o: { signal?: AbortSignal; minFiles?: number }): Promise<void> {
  const files = dataFiles(state);
  // Without enough files to merge, a run's check costs no read of the files.
  if (o.minFiles && files.length < o.minFiles) return;
  const stats = (await writer.fileStats(await store.local(files), orderColumn(decl))).map((s, i) => ({ file: files[i]!, ...s }));
  const rowsOf = new Map(stats.map((s) => [s.file, s.rows]));
  const groups = planGroups(inColumnOrder(stats), target);
  if (o.minFiles && groups.reduce((n, g) => n + g.length, 0) < o.minFiles) return;
  report.filesBefore += files.length;
  report.filesAfter += files.length;
  if (groups.length === 0) return;
  report.partitions++;
  let next = state;
  for (const group of groups) {
    // A stop (SIGINT/SIGTERM) lands between groups: each one committed stays, and a rerun goes on.
    o.signal?.throwIfAborted();
    const want = group.reduce((n, f) => n + rowsOf.get(f)!, 0);
    const dir = store.stagingDir(decl.table, state.partition);
    const [out] = await writer.rewrite(await store.local(group), dir, nextStem(state.partition, next.files, { kind: 'compact' }), folderOf(decl, state.values ?? {}), decl, { bloomRows: want, from: group.map((file) => ({ file, rows: rowsOf.get(file)! })) });
    const got = await writer.countRowsOf([out!.staged]);
    if (got !== want) throw new Error(`compact ${decl.table} ${state.partition}: the rewritten file holds ${got} rows, its ${group.length} files ${want}; nothing was changed`);
    const landed = `${decl.table}/${out!.rel}`;
    const first = next.files.indexOf(group[0]!);
    const replaced = new Set(group);
    const kept = next.files.filter((f) => !replaced.has(f));
    kept.splice(first, 0, landed);
    next = await store.commit({ ...next, files: kept }, [[out!.staged, landed]], group, { rewrite: true });
    report.filesAfter -= group.length - 1;
    report.rowsRewritten += want;
  }
}

/**
 * Compacts `tables` of a lake held by the caller (every table with state when none is named).
 * With `minFiles`, only partitions where a compaction would merge at least that many files (a
 * run's own check, AUTO_MIN_FILES). An abort of `signal` stops it before the next group.
 * The rewritten files get a bloom filter of each row group's hashes (ParquetWriter.rewrite), a run's
 * own merge's too: between two `compact`s of an hourly lake, its merged files are the ones other
 * engines read.
 */
export async function compactTables(store: StateStore, writer: ParquetWriter, tables: string[], o: { logger: Logger; targetRows?: number; minFiles?: number; signal?: AbortSignal; sweep?: boolean; retainMs?: number }): Promise<CompactReport[]> {
  const target = o.targetRows ?? TARGET_ROWS;
  const reports: CompactReport[] = [];
  const states = store.all();
  const names = tables.length ? tables : [...new Set(states.map((s) => s.table))].filter((t) => STREAM_BY_TABLE.has(t));
  for (const table of names) {
    const t0 = performance.now();
    const report: CompactReport = { table, partitions: 0, filesBefore: 0, filesAfter: 0, rowsRewritten: 0, filesExpired: 0, seconds: 0 };
    // A table committed before the lake kept Iceberg metadata gets its first snapshot here.
    if (await store.publisher?.adopt(table)) o.logger.info({ table }, 'wrote the Iceberg metadata of a table that had none');
    // A retention given is the table's before its files are rewritten: those it replaces stay as long.
    if (o.retainMs !== undefined) report.filesExpired += await store.expireRetained(table, o.retainMs);
    // A --full-refresh in progress swaps its own files in later; leave it be.
    for (const state of states.filter((s) => s.table === table && !s.rebuild)) await compactPartition(STREAM_BY_TABLE.get(table)!, state, store, writer, target, report, o);
    // What publishes cut short by a kill left in the table's metadata folder goes with it: only
    // by `chainlake compact` (no worker of a queued run can be publishing beside it then).
    report.filesExpired += await store.expireRetained(table);
    const swept = o.sweep ? ((await store.publisher?.sweep(table)) ?? 0) : 0;
    if (swept) o.logger.info({ table, files: swept }, 'removed metadata files no snapshot names');
    report.seconds = (performance.now() - t0) / 1000;
    o.logger[report.rowsRewritten ? 'info' : 'debug']({ ...report }, 'compacted');
    reports.push(report);
  }
  return reports;
}

/**
 * Compacts the named tables of a lake (every table with state when none is named). An abort of
 * `signal` stops it before the next group, with the signal's reason.
 */
export async function compactLake(lake: string, tables: string[], o: { logger: Logger; targetRows?: number; wait?: boolean; signal?: AbortSignal; retainMs?: number }): Promise<CompactReport[]> {
  const target = o.targetRows ?? TARGET_ROWS;
  if (!Number.isSafeInteger(target) || target < 2) throw new UsageError(`compact: --target-rows must be a whole number of at least 2, got ${target}`);
  if (o.retainMs !== undefined && !(Number.isSafeInteger(o.retainMs) && o.retainMs >= 0)) throw new UsageError(`compact: --retention must be a duration of 0 or more (30m, 6h, 7d), got ${o.retainMs}`);
  for (const t of tables) streamOf('compact', t);
  return withLockedWriter(lake, { wait: o.wait, onNote: (note) => o.logger.warn(note) }, (store, writer) => compactTables(store, writer, tables, { ...o, sweep: true }));
}
