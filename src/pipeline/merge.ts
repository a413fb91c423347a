// `refresh: 'merge'` and `'replace'`: a partition is fetched (a time series from its newest point
// on), then its rows are merged by key into what was committed, newest first; a replace table's
// complete fetch replaces it. With `mergeScope: 'table'` the rows of every partition merge into
// the table's one set of files, in one commit at the end of the stream (commitTable, which
// `rebuild` uses too).
import PQueue from 'p-queue';
import { DEFAULT_CHUNKS, type StreamDecl } from '../decl/stream.js';
import type { ParquetWriter } from '../load/parquet.js';
import { RAW, REBUILD, REJECTS, slug, TABLE_PARTITION, type StateStore } from '../state/store.js';
import type { Cursor } from '../state/cursor.js';
import { Transformer } from '../transform/rows.js';
import { PageTokenError } from '../extract/paginate.js';
import type { BatchPath, Moves, Staged } from './batch.js';
import type { Job, PartitionRun } from './partition.js';

const isRaw = (f: string) => f.startsWith(`${RAW}/`) || f.startsWith(`${REBUILD}/${RAW}/`);
const isRejects = (f: string) => f.startsWith(`${REJECTS}/`) || f.startsWith(`${REBUILD}/${REJECTS}/`);

/** What a merge-into-table partition leaves for the table's commit at the end of its stream. */
export interface TableMergeInput {
  job: Job;
  fresh: string[];
}

/**
 * The time ranges of a series fetched at once: a series has a point per interval, so how many
 * pages a range holds is known before asking. From its start (the newest committed point, or
 * `startTimestamp`) to its end (`endTimestamp`, or now), in ranges of a page each, at most
 * `chunks` fetched at once. One range (the query as is) where the start is not known.
 */
export function timeRanges(decl: StreamDecl, query: Record<string, string>, now: number): Array<Record<string, string>> {
  const tc = decl.timeCursor;
  if (!tc?.start || !tc.end || !tc.step || query[tc.start] === undefined) return [query];
  const from = Number(query[tc.start]);
  const to = query[tc.end] !== undefined ? Number(query[tc.end]) : now;
  const span = tc.step(query) * Number(query.pageSize ?? 1);
  if (!(to - from > span)) return [query];
  const out: Array<Record<string, string>> = [];
  for (let a = from; a < to; a += span) {
    const q = { ...query, [tc.start]: String(a) };
    // A second before the next range's first point: the range holds the same points whether the
    // service reads its end as inclusive or exclusive. The last range keeps the query's end.
    if (a + span < to) q[tc.end] = String(a + span - 1);
    out.push(q);
  }
  return out;
}

/** One range's listing: its staged batches and its newest point. */
interface Fetched {
  fresh: Staged[];
  top?: number;
}

/** Pages one listing of the partition to its end into `batches`, staging as it goes. */
async function fetchListing(p: PartitionRun, query: Record<string, string>, newest: number | undefined, batches: BatchPath): Promise<Fetched> {
  const { decl, partition } = p.job;
  const tc = decl.timeCursor;
  let fresh: Staged[] = [];
  let restarts = 0;
  let top: number | undefined;
  const tsIndex = tc ? decl.columns.findIndex((c) => c.name === tc.column) : -1;
  for (;;) {
    try {
      for await (const page of p.pages(query)) {
        p.page(page, batches);
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
        if (page.next !== undefined && !reachedCommitted && batches.transformer.rows < p.flushRows) continue;
        fresh.push(await p.stage('', batches));
        if (reachedCommitted) break;
      }
      return { fresh, top };
    } catch (err) {
      if (!(err instanceof PageTokenError)) throw err;
      p.restarted(err, ++restarts);
      fresh = [];
      top = undefined;
      batches.restart(new Transformer(decl, partition));
    }
  }
}

/** Fetches the partition (from its newest point on, for series), then merges by key. */
export async function merge(p: PartitionRun): Promise<TableMergeInput | undefined> {
  const { decl, partition, cfg } = p.job;
  const tc = decl.timeCursor;
  const newest = p.fullRefresh ? undefined : p.state.cursor.newest;
  const query: Record<string, string> = { ...partition.query, ...p.pageSize };
  if (tc?.start && newest !== undefined) query[tc.start] = String(Math.max(Number(query[tc.start] ?? 0), newest));
  const limit = (cfg.chunks as number | undefined) ?? DEFAULT_CHUNKS;
  const ranges = limit > 1 ? timeRanges(decl, query, Math.floor(Date.now() / 1000)) : [query];
  let fetched: Fetched[];
  if (ranges.length === 1) fetched = [await fetchListing(p, query, newest, p.batches)];
  else {
    // Each range its own listing and batch path, its raw pages named for it (rebuild replays them apart).
    p.job.report.chunks += ranges.length;
    const queue = new PQueue({ concurrency: limit });
    fetched = await Promise.all(ranges.map((q) => queue.add(() => fetchListing(p, q, newest, p.newBatchPath(new Transformer(decl, partition), `chunk${q[tc!.start!]}`)))));
  }
  const fresh = fetched.flatMap((f) => f.fresh);
  const tops = fetched.map((f) => f.top).filter((t): t is number => t !== undefined);
  const top = tops.length ? Math.max(...tops) : undefined;
  const freshData = fresh.flatMap((f) => f.data.map(([s]) => s));
  const sideMoves = fresh.flatMap((f) => f.side);
  const rows = fresh.reduce((n, f) => n + f.rows, 0);
  const rejected = fresh.reduce((n, f) => n + f.rejected, 0);
  const cursor: Cursor = { refreshedAt: new Date().toISOString(), ...(tc ? { newest: top ?? newest } : {}) };
  // This fetch is the partition's whole truth: what it committed before goes, raw pages included
  // (a rebuild replays only the fetch that the table holds).
  const whole = p.fullRefresh || decl.refresh === 'replace';
  const state = p.state;
  if (decl.mergeScope === 'table') {
    // The data commits with the table (merge of every partition of the stream); the partition
    // keeps its cursor, the rejects of its latest fetch and the raw pages of every fetch (of
    // this one only, when it is whole).
    const drop = state.files.filter((f) => isRejects(f) || whole);
    p.commit(
      { ...state, files: [...state.files.filter((f) => !drop.includes(f)), ...sideMoves.map(([, t]) => t)], cursor, rows, rejects: rejected, lastRun: p.lastRun(true) },
      sideMoves,
      drop,
    );
    return { job: p.job, fresh: freshData };
  }
  const oldData = state.files.filter((f) => !isRejects(f) && !isRaw(f));
  const oldRejects = state.files.filter(isRejects);
  const oldRaw = whole ? state.files.filter(isRaw) : [];
  const merged = await p.writer.merge(decl, freshData, whole ? [] : await p.store.local(oldData), p.store.stagingDir(decl.table, partition.id), slug(partition.id));
  const dataMoves: Moves = merged.map((f) => [f.staged, `${decl.table}/${f.rel}`]);
  // The merge's output (or, for a whole fetch, nothing) takes the place of the old data files.
  const replaced = merged.length > 0 || whole;
  const keepData = replaced ? [] : oldData;
  const keepRaw = state.files.filter((f) => isRaw(f) && !oldRaw.includes(f));
  const files = [...keepData, ...keepRaw, ...[...dataMoves, ...sideMoves].map(([, t]) => t)];
  const deletes = [...(replaced ? oldData : []), ...oldRejects, ...oldRaw];
  const total = replaced ? await p.writer.countRowsOf(merged.map((f) => f.staged)) : state.rows;
  p.commit({ ...state, files, cursor, rows: total, rejects: rejected, lastRun: p.lastRun(true) }, [...dataMoves, ...sideMoves], deletes);
  return undefined;
}

/**
 * How the end of a merge-into-table stream commits, given what its partitions fetched: undefined
 * when it must not (a full refresh swaps the table only when every partition fetched, so nothing
 * is lost), else whether the fresh rows replace the table. A replace table is replaced only by a
 * complete fetch; a partial one merges (keeps the rows of the partitions that failed) and the
 * next complete run replaces.
 */
export function tableCommit(decl: StreamDecl, inputs: TableMergeInput[], partitions: number, fullRefresh: boolean): { replace: boolean } | undefined {
  const complete = inputs.length === partitions;
  if (fullRefresh && !complete) return undefined;
  return { replace: fullRefresh || (decl.refresh === 'replace' && complete) };
}

/**
 * Merges fresh rows (Parquet files in staging, in fetch order) into a merge-into-table stream's
 * table, in one commit; `replace`: they are the whole table, old rows go. `refreshed`: the rows
 * were fetched now (not replayed), which the table's cursor records. Returns the table's rows.
 */
export async function commitTable(
  decl: StreamDecl,
  fresh: string[],
  store: StateStore,
  writer: ParquetWriter,
  o: { replace: boolean; runId: string; refreshed: boolean },
): Promise<number> {
  const state = store.load(decl.table, TABLE_PARTITION);
  if (fresh.length === 0 && !o.replace) return state.rows;
  const merged = fresh.length ? await writer.merge(decl, fresh, o.replace ? [] : await store.local(state.files), store.stagingDir(decl.table, TABLE_PARTITION), slug(TABLE_PARTITION)) : [];
  const moves: Moves = merged.map((f) => [f.staged, `${decl.table}/${f.rel}`]);
  const rows = await writer.countRowsOf(merged.map((f) => f.staged));
  const at = new Date().toISOString();
  await store.commit(
    { ...state, files: moves.map(([, t]) => t), rows, ...(o.refreshed ? { cursor: { refreshedAt: at } } : {}), lastRun: { runId: o.runId, at, status: 'complete' } },
    moves,
    state.files,
  );
  return rows;
}
