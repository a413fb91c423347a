// The run report: per stream, what the run asked and got. Printed at the end and stored in the
// lake (_runs/<run id>.json) so that `status`, checks and reports can read past runs.
import { join } from 'node:path';
import { newRequestStats, type RequestStats } from '../decl/request.js';
import { RUNS, writeAtomic } from '../state/store.js';
import { bounded, LINE_CHARS, textTable } from '../text.js';
import { EXIT } from '../errors.js';

export interface StreamReport extends RequestStats {
  table: string;
  partitions: number;
  partitionsDone: number;
  pages: number;
  rows: number;
  rejects: number;
  /** Amounts over 38 digits: exact in `_raw`, NULL in the DECIMAL column. */
  over38: number;
  /** Rows of the high-water block refetched and skipped because they were committed before. */
  skipped: number;
  /**
   * Rows the service sent again within a listing (by key, among its recent pages), or outside the
   * block range the listing asked for: dropped, the table keeps one. Absent in reports of older runs.
   */
  sentTwice: number;
  /**
   * Rows outside what the run asked for or what can exist (above a window's end or the chain's
   * head, below its start, a time in the future): dropped, never committed, never moving a
   * cursor; `outsideFirst` says why the first one was. Absent in reports of older runs.
   */
  outside: number;
  outsideFirst?: string;
  /** What the run says of a partition that is neither an error nor a skip (a cursor ahead of the chain's head). */
  notes: string[];
  /** Listings restarted from their first page after a refused (expired) page token. */
  restarts: number;
  /** Block ranges fetched as listings of their own (chunks of a window), and those split off a chunk under way. */
  chunks: number;
  splits: number;
  /** Item fields no column reads (schema drift): ignored, counted here (text.ts addNames: names and their number bounded). */
  extraFields: Record<string, number>;
  seconds: number;
  errors: string[];
  /** Partitions the source does not serve (a node without the admin API), each with the reason: no rows, no failure. */
  skips: string[];
  /** Of the errors, partitions a service refused for good (ServiceError.permanent): a rerun alone fails them again. Absent in reports of older runs. */
  refused?: number;
  /** Of the errors, partitions whose configuration the lake refused (UsageError: a start below what it fetched of them): a rerun alone fails them again. */
  misconfigured?: number;
}

export interface RunReport {
  runId: string;
  pipeline: string;
  lake: string;
  startedAt: string;
  finishedAt?: string;
  seconds?: number;
  status: 'running' | 'ok' | 'failed';
  streams: StreamReport[];
  /** Per service used: the CU budget in force at the end and where it came from. */
  budgets?: Record<string, { source: string; cuPerMinute: number | null; cuPerDay: number | null }>;
  /** Why the run stopped being the lake's writer part way (its lock taken over or not renewed): it committed nothing after. */
  lockLost?: string;
  /** Tables whose small files the run merged at its end (compact.ts), files before and after. */
  compacted?: Array<{ table: string; filesBefore: number; filesAfter: number }>;
}

export function newStreamReport(table: string): StreamReport {
  return { table, partitions: 0, partitionsDone: 0, pages: 0, rows: 0, rejects: 0, over38: 0, skipped: 0, sentTwice: 0, outside: 0, notes: [], restarts: 0, chunks: 0, splits: 0, extraFields: {}, seconds: 0, errors: [], skips: [], ...newRequestStats() };
}

/**
 * The report with each error and skip in at most LINE_CHARS characters: they quote services, whose
 * text may be megabytes (a page token in a URL), and the report is printed and kept.
 */
export function boundedReport(r: RunReport): RunReport {
  const lines = (xs: string[] | undefined) => xs?.map((x) => bounded(x, LINE_CHARS));
  return { ...r, streams: r.streams.map((s) => ({ ...s, errors: lines(s.errors)!, skips: lines(s.skips)! })) };
}

export function saveReport(lake: string, r: RunReport): string {
  const file = join(lake, RUNS, `${r.runId}.json`);
  writeAtomic(file, JSON.stringify(boundedReport(r), null, 1));
  return file;
}

/** A time to the minute, UTC: `2026-11-24 01:35`. */
export function minute(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 16).replace('T', ' ') : '?';
}


/**
 * The exit code of a finished run and the line that tells what a rerun does: it resumes, unless a
 * service refused a partition for good (a 404 of an id, a 401 of the key), which it will refuse
 * again until the pipeline or the key changes.
 */
export function runOutcome(r: RunReport): { code: number; line?: string } {
  if (r.lockLost) return { code: EXIT.lakeInUse, line: `the run lost the lake to another writer part way (${r.lockLost}); what it committed before is kept, and the lake's warehouse file is left to that writer: rerun when it is done` };
  if (r.status === 'ok') return { code: EXIT.ok };
  const refused = r.streams.reduce((n, s) => n + (s.refused ?? 0), 0);
  const misconfigured = r.streams.reduce((n, s) => n + (s.misconfigured ?? 0), 0);
  if (refused === 0 && misconfigured > 0)
    return { code: EXIT.failed, line: `the run failed: the pipeline's configuration of ${misconfigured === 1 ? 'a partition' : `${misconfigured} partitions`} does not fit the lake (see the errors above), and a rerun fails ${misconfigured === 1 ? 'it' : 'them'} again until the pipeline or the command changes as the error says; committed work is kept` };
  if (refused === 0) return { code: EXIT.failed, line: 'the run failed; committed work is kept and rerunning the same command resumes' };
  return {
    code: EXIT.refused,
    line: `the run failed: a service refused ${refused === 1 ? 'a partition' : `${refused} partitions`} for good (see the errors above), and will again until what the error names (an id in the pipeline, the API key, a URL) is corrected; committed work is kept`,
  };
}

/**
 * A table's errors, one line for each thing that went wrong: partitions that failed alike (an
 * interrupt, an address that refuses connections) are one line saying how many and the first of
 * them, not a line each (66 lines of "stopped by SIGINT"). An error is `<partition>: <what>`.
 */
export function errorLines(table: string, errors: readonly string[]): string[] {
  const alike = new Map<string, string[]>();
  for (const e of errors) {
    const at = e.indexOf(': ');
    const what = at < 0 ? e : e.slice(at + 2);
    alike.set(what, [...(alike.get(what) ?? []), at < 0 ? '' : e.slice(0, at)]);
  }
  return [...alike].map(([what, ids]) =>
    ids.length === 1 ? `  ${table}: ${ids[0] ? `${ids[0]}: ` : ''}${what}` : `  ${table}: ${what} (${ids.length} partitions: ${ids[0]} and ${ids.length - 1} more)`,
  );
}

export function formatReport(report: RunReport): string {
  const r = boundedReport(report);
  const rows = r.streams.map((s) => [
    s.table,
    `${s.partitionsDone}/${s.partitions}`,
    s.requests,
    s.pages,
    s.rows,
    s.retries,
    s.status429,
    s.restarts,
    s.rejects,
    s.over38,
    Number(s.seconds.toFixed(1)),
  ]);
  const budgets = Object.entries(r.budgets ?? {}).map(([svc, b]) => `${svc} ${b.cuPerMinute === null ? 'no limit seen' : `${b.cuPerMinute} CU/min`} (${b.source})`);
  const head = `run ${r.runId} of ${r.pipeline}: ${r.status} in ${(r.seconds ?? 0).toFixed(1)} s (lake ${r.lake})${budgets.length ? `; budgets: ${budgets.join(', ')}` : ''}`;
  const errors = r.streams.flatMap((s) => errorLines(s.table, s.errors));
  // Reports of runs before skips were kept have none.
  const skips = r.streams.flatMap((s) => (s.skips ?? []).map((e) => `  ${s.table}: ${e}`));
  const drift = r.streams.filter((s) => Object.keys(s.extraFields).length).map((s) => `  ${s.table}: ${Object.entries(s.extraFields).map(([k, n]) => `${k} (${n})`).join(', ')}`);
  // Reports of runs before chunks have no counts of them.
  const chunked = r.streams.filter((s) => (s.splits ?? 0) > 0).map((s) => `  ${s.table}: ${s.chunks} block ranges, ${s.splits} split off a range under way`);
  const twice = r.streams.filter((s) => (s.sentTwice ?? 0) > 0).map((s) => `  ${s.table}: ${s.sentTwice} rows`);
  const outside = r.streams.filter((s) => (s.outside ?? 0) > 0).map((s) => `  ${s.table}: ${s.outside} rows${s.outsideFirst ? ` (the first: ${s.outsideFirst})` : ''}`);
  const notes = r.streams.flatMap((s) => (s.notes ?? []).map((n) => `  ${s.table}: ${n}`));
  const faults = r.streams.filter((s) => Object.keys(s.faults).length).map((s) => `  ${s.table}: ${Object.entries(s.faults).map(([k, n]) => `${k} x${n}`).join(', ')}`);
  return [
    head,
    textTable(['table', 'partitions', 'requests', 'pages', 'rows', 'retries', '429s', 'restarts', 'rejects', '>38 digits', 'seconds'], rows),
    ...(chunked.length ? ['listings fetched as block ranges at once:', ...chunked] : []),
    ...(twice.length ? ['sent twice by the service (dropped, the table keeps one):', ...twice] : []),
    ...(outside.length ? ['outside what was asked or can exist (dropped, never committed; the service sent them):', ...outside] : []),
    ...(notes.length ? ['notes:', ...notes] : []),
    ...(faults.length ? ['failed attempts by kind (retried):', ...faults] : []),
    ...(drift.length ? ['fields the declarations do not read (ignored):', ...drift] : []),
    ...(skips.length ? ['skipped (the source does not serve them; no rows, not a failure):', ...skips] : []),
    ...(errors.length ? ['errors:', ...errors] : []),
    ...(r.compacted?.length ? ['small files merged at the end (in block order):', ...r.compacted.map((c) => `  ${c.table}: ${c.filesBefore} -> ${c.filesAfter} files`)] : []),
  ].join('\n');
}
