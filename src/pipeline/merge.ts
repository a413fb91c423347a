// `refresh: 'merge'` and `'replace'`: a partition is fetched (a time series from its newest point
// on), then its rows are merged by key into what was committed, newest first; a replace table's
// complete fetch replaces it. Into the partition's rows (commitPartition), or, for a table whose
// rows merge across partitions, into the table's one set of files in one commit at the end of the
// stream (stageForTable, then commitTable, which `rebuild` uses too). Which is the strategy's
// (strategies.ts).
import PQueue from 'p-queue';
import { DEFAULT_CHUNKS, type StreamDecl } from '../decl/stream.js';
import type { ParquetWriter } from '../load/parquet.js';
import { TABLE_PARTITION, type StateStore } from '../state/store.js';
import { dataFilesOf, newestOf, partitionMerge, seriesQuery, SeriesListing, tableScopePartition, TimeGate, timeOf, timeRanges } from './series.js';
import { isoSeconds, latestTime, seriesFrom, seriesStartBelow, type Cursor } from '../state/cursor.js';
import { nextStem, partitionStem } from '../state/names.js';
import { Transformer } from '../transform/rows.js';
import type { BatchPath, Moves, Staged } from './batch.js';
import type { Job, PartitionRun } from './partition.js';

/** What a merge-into-table partition leaves for the table's commit at the end of its stream. */
export interface TableMergeInput {
  job: Job;
  fresh: string[];
  /**
   * A series' newest point after this fetch: its partition's cursor moves there only once the
   * fresh rows are in the table (a run stopped before would otherwise resume past rows that never
   * reached it; fetched again, they merge by key).
   */
  newest?: number;
  /** And where the points it fetched begin (PartitionState.from), recorded with it. */
  from?: number;
}

/** One range's listing: its staged batches and its newest point; `more`: a probe found more than a page (and kept nothing). */
interface Fetched {
  fresh: Staged[];
  top?: number;
  more?: boolean;
}

/**
 * Pages one listing of the partition to its end into `batches`, staging as it goes. `probe`: a
 * listing of one page is landed as such; one with more pages is left (nothing kept) for the
 * caller to fetch in time ranges.
 */
async function fetchListing(p: PartitionRun, query: Record<string, string>, newest: number | undefined, batches: BatchPath, probe = false, gate?: TimeGate): Promise<Fetched> {
  const { decl, partition } = p.job;
  const tc = decl.timeCursor;
  const listing = new SeriesListing(newest, tc?.start !== undefined, timeOf(decl), tc?.settled, gate);
  batches.transformer.gate = gate;
  let fresh: Staged[] = [];
  return p.restarting(
    async (): Promise<Fetched> => {
      for await (const page of p.pages(query)) {
        if (probe && page.next !== undefined) return { fresh: [], more: true };
        p.page(page, batches);
        const after = listing.paged(page.items, page.next, batches.transformer.rows, p.flushRows);
        if (!after.commit) continue;
        fresh.push(await p.stage('', batches));
        if (after.stop) break;
      }
      return { fresh, top: listing.point };
    },
    () => {
      fresh = [];
      listing.restart();
      batches.restart(new Transformer(decl, partition, {}, gate));
    },
  );
}

/** What a merge partition fetched, staged, for its commit. */
export interface MergeFetch {
  /** The fresh rows' Parquet files in staging, in fetch order. */
  data: string[];
  /** Their rejects and raw pages, with where each lands. */
  side: Moves;
  rows: number;
  rejected: number;
  /** The partition's cursor after this fetch. */
  cursor: Cursor;
  /** Where the points fetched begin once these rows are committed (PartitionState.from). */
  from?: number;
}

/** Fetches the partition (from its newest point on, for series), to staging. */
export async function fetchMerge(p: PartitionRun, now = Math.floor(Date.now() / 1000)): Promise<MergeFetch> {
  const { decl, partition, cfg } = p.job;
  const tc = decl.timeCursor;
  // A series whose start moved before what it fetched is fetched from that start, once.
  const start = tc?.startOption === undefined ? undefined : (cfg[tc.startOption] as number | undefined);
  const earlier = !p.fullRefresh && seriesStartBelow(p.state.from, p.state.cursor, start);
  if (earlier) p.note(`its configured start ${isoSeconds(start!)} is before ${isoSeconds(p.state.from!)}, where the points this lake fetched of it begin: fetched from that start, merged by key`);
  const newest = p.fullRefresh || earlier ? undefined : p.state.cursor.newest;
  const query = seriesQuery(decl, { ...partition.query, ...p.pageSize }, newest);
  const limit = (cfg.chunks as number | undefined) ?? DEFAULT_CHUNKS;
  const ranges = limit > 1 ? timeRanges(decl, query, now, limit) : [query];
  const gateOf = (q: Record<string, string>) => (tc ? TimeGate.of(decl, cfg, query, q, now) : undefined);
  if (tc && newest !== undefined && newest > latestTime(now))
    p.note(`the newest committed point (${isoSeconds(newest)}) is in the future: points before it are not fetched again; if it came from a wrong row, move it back with \`chainlake reset\``);
  const atOnce = (rs: Array<Record<string, string>>): Promise<Fetched[]> => {
    // Each range its own listing and batch path, its raw pages named for it (rebuild replays them apart).
    p.job.report.chunks += rs.length;
    const queue = new PQueue({ concurrency: limit });
    return Promise.all(rs.map((q) => queue.add(() => fetchListing(p, q, newest, p.newBatchPath(new Transformer(decl, partition), { kind: 'range', start: Number(q[tc!.start!]) }), false, gateOf(q)))));
  };
  let fetched: Fetched[];
  if (ranges.length === 1) fetched = [await fetchListing(p, query, newest, p.batches, false, gateOf(query))];
  else if (tc?.span) {
    // A listing at no regular interval: a partition whose listing fits in a page costs that page;
    // a longer one is fetched again in ranges at once (its first page asked twice).
    const head = await fetchListing(p, query, newest, p.batches, true, gateOf(query));
    fetched = head.more ? await atOnce(ranges) : [head];
  } else fetched = await atOnce(ranges);
  const fresh = fetched.flatMap((f) => f.fresh);
  const until = tc?.endOption === undefined ? undefined : (cfg[tc.endOption] as number | undefined);
  return {
    data: fresh.flatMap((f) => f.data.map(([s]) => s)),
    side: fresh.flatMap((f) => f.side),
    rows: fresh.reduce((n, f) => n + f.rows, 0),
    rejected: fresh.reduce((n, f) => n + f.rejected, 0),
    cursor: { refreshedAt: new Date().toISOString(), ...(tc ? { newest: newestOf(fetched.map((f) => f.top), p.fullRefresh ? undefined : p.state.cursor.newest) } : {}), ...(until === undefined ? {} : { until }) },
    from: !tc ? p.state.from : p.fullRefresh ? start : seriesFrom(p.state.from, p.state.cursor, start),
  };
}

/**
 * Merges what the partition fetched by key into its committed rows, newest first, in one commit;
 * `whole`: the fetch is the partition's rows, the old ones go.
 */
export async function commitPartition(p: PartitionRun, f: MergeFetch, whole: boolean): Promise<void> {
  const { decl, partition } = p.job;
  const state = p.state;
  const oldData = dataFilesOf(state.files);
  const merged = await p.writer.merge(decl, f.data, whole ? [] : await p.store.local(oldData), p.store.stagingDir(decl.table, partition.id), partitionStem(partition.id, p.nextSeq()));
  const moves: Moves = [...merged.map((m): [string, string] => [m.staged, `${decl.table}/${m.rel}`]), ...f.side];
  const plan = partitionMerge(state.files, moves.map(([, t]) => t), merged.length > 0, whole);
  const total = plan.replaced ? await p.writer.countRowsOf(merged.map((m) => m.staged)) : state.rows;
  p.commit({ ...state, files: plan.files, cursor: f.cursor, from: f.from, rows: total, rejects: f.rejected, lastRun: p.lastRun(true), ...(whole ? { rawIncomplete: undefined } : {}) }, moves, plan.deletes);
}

/**
 * A partition of a table whose rows merge across partitions: its rejects and raw pages commit
 * now; its rows wait in staging for the table's commit at the end of the stream (commitTable).
 */
export function stageForTable(p: PartitionRun, f: MergeFetch, whole: boolean): TableMergeInput {
  const tc = p.job.decl.timeCursor;
  const state = p.state;
  const plan = tableScopePartition(state.files, f.side.map(([, t]) => t), whole);
  const kept: Cursor = { ...f.cursor, ...(tc ? { newest: state.cursor.newest } : {}) };
  if (kept.newest === undefined) delete kept.newest;
  p.commit({ ...state, files: plan.files, cursor: kept, rows: f.rows, rejects: f.rejected, lastRun: p.lastRun(true) }, f.side, plan.deletes);
  return { job: p.job, fresh: f.data, ...(f.cursor.newest !== undefined ? { newest: f.cursor.newest } : {}), ...(f.from !== undefined ? { from: f.from } : {}) };
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
  const merged = fresh.length ? await writer.merge(decl, fresh, o.replace ? [] : await store.local(state.files), store.stagingDir(decl.table, TABLE_PARTITION), nextStem(TABLE_PARTITION, state.files)) : [];
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

/** Once a table-wide merge committed, each partition's series cursor moves to what it fetched. */
export async function advanceCursors(store: StateStore, inputs: TableMergeInput[]): Promise<void> {
  for (const i of inputs) {
    if (i.newest === undefined) continue;
    const state = store.load(i.job.decl.table, i.job.partition.id);
    if (state.cursor.newest === i.newest && state.from === i.from) continue;
    await store.commit({ ...state, cursor: { ...state.cursor, newest: i.newest }, ...(i.from !== undefined ? { from: i.from } : {}) }, []);
  }
}
