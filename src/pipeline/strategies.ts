// One strategy per refresh kind: append (append.ts), merge or replace into the partition's rows,
// and merge or replace into the table's (merge.ts). A strategy owns how its partitions are fetched
// and committed, how a run groups them into jobs, the table's commit at the end of a stream, the
// commits of a `rebuild` (commitRebuild), and where a dry run says a partition starts. The run,
// the queue and its workers, `reset`, `check` and the table reference ask the strategy rather than
// branch on the declaration's refresh and merge scope, which strategyOf (at the end) reads once.
import { TABLE_PARTITION, REJECTS, RAW, type PartitionState, type StateStore } from '../state/store.js';
import { folderOf, type StreamDecl } from '../decl/stream.js';
import type { ParquetWriter } from '../load/parquet.js';
import { fetchedFrom, firstWindow, isoSeconds, listingRange, listingsOf, seriesStartBelow, startBelow, windowToFetch, type Cursor } from '../state/cursor.js';
import { nextStem } from '../state/names.js';
import type { Moves } from './batch.js';
import type { Job, PartitionRun } from './partition.js';
import { append, appendStart } from './append.js';
import { advanceCursors, commitPartition, commitTable, fetchMerge, stageForTable, type TableMergeInput } from './merge.js';
import { minute } from './report.js';
import { startBelowReason, type BlockCursor } from './block_times.js';

/** Where a partition would start: from scratch, from its committed state, or not at all. */
/** `refused`: the run would fail the partition (its configured start below what the lake fetched of it). */
export type Start = 'new' | 'resume' | 'refetch' | 'full refresh' | 'done' | 'refused';

export interface PartitionPlan {
  id: string;
  start: Start;
  /** Where, in words (`from block 80000000`, `resumes at block 80012345`). */
  from: string;
  /** The fewest requests this partition makes. */
  requests: number;
  /** Block-range streams: the block the fetch starts at (none when there is nothing to fetch). */
  fromBlock?: number;
  /**
   * Time keys whose block the lake does not know yet: each is found at the run's start by a
   * search of the chain's blocks (one a chain and time, whatever the partitions), of a request
   * at least, counted once in the plan.
   */
  searches?: number;
}

/**
 * A block-ranged window's bounds for a dry run: its block keys, or the blocks the lake remembers for
 * its time keys; a time it does not know the block of yet is said, with what finding it costs.
 */
export interface PlanBlocks {
  startBlock?: number;
  endBlock?: number;
  /** A start or an end whose block is found at the run's start: its time. */
  startAt?: number;
  endAt?: number;
  /** Their keys, and the most requests a search of the chain's blocks makes. */
  unknown: string[];
  most: number;
  /** Searches of those no earlier partition of the plan counted (a chain and a time). */
  searches: number;
}

/** A partition as `rebuild` replayed it from its raw pages, for the strategy's commit. */
export interface RebuiltPartition {
  state: PartitionState;
  /** Data files in staging, each with its target in the table folder. */
  data: Moves;
  rejects: Moves;
  rejected: number;
  /** The data files are the table's already: every duplicate was skipped the way the run skips it. */
  final: boolean;
}

/** A Parquet writer lent for one task (a run's pool). */
export type WithWriter = <T>(f: (w: ParquetWriter) => Promise<T>) => Promise<T>;

export interface RefreshStrategy {
  /** Whose rows a fetch merges into or replaces, in words (the table reference). */
  readonly rows: string;
  readonly scope: 'partition' | 'table';
  /**
   * The state that holds the table's rows when its partitions' do not (their rows merge across
   * partitions): a run works all the table's partitions as one job, which commits this state too.
   */
  readonly shared?: string;
  /** A partition's fetch and commits; what the table's commit at the end of the stream takes from it. */
  refresh(p: PartitionRun): Promise<TableMergeInput | undefined>;
  /**
   * After every partition of the table's jobs (`outs`: what each handed on, in order; none for a
   * partition that failed): the table's commit, where the strategy has one.
   */
  finish(jobs: Job[], outs: Array<TableMergeInput | undefined>, store: StateStore, withWriter: WithWriter, runId: string): Promise<void>;
  /** Commits what `rebuild` replayed of the table's partitions; returns the table's rows. */
  commitRebuild(decl: StreamDecl, replayed: RebuiltPartition[], store: StateStore, writer: ParquetWriter): Promise<number>;
  /** Where a dry run says the partition starts, given its committed state (and a block-ranged one's bounds). */
  start(job: Job, state: PartitionState, blocks?: PlanBlocks): Omit<PartitionPlan, 'id'>;
}

const REBUILT = { runId: 'rebuild', status: 'complete' as const };

/** The raw pages a partition keeps through a rebuild: what it is rebuilt from. */
const rawOf = (s: PartitionState) => s.files.filter((f) => f.startsWith(`${RAW}/`));

/** Partitions that commit their own rows: each its own job, nothing to do at the end of the stream. */
abstract class OwnRows {
  readonly rows = "the partition's rows";
  readonly scope = 'partition';
  abstract refresh(p: PartitionRun): Promise<TableMergeInput | undefined>;
  abstract start(job: Job, state: PartitionState, blocks?: PlanBlocks): Omit<PartitionPlan, 'id'>;

  async finish(): Promise<void> {}

  async commitRebuild(decl: StreamDecl, replayed: RebuiltPartition[], store: StateStore, writer: ParquetWriter): Promise<number> {
    const { table } = decl;
    const lastRun = { ...REBUILT, at: new Date().toISOString() };
    let total = 0;
    for (const r of replayed) {
      const merged = r.final
        ? r.data
        : (await writer.merge(decl, r.data.map(([s]) => s), [], store.stagingDir(table, r.state.partition), nextStem(r.state.partition, r.state.files), folderOf(decl, r.state.values ?? {}))).map((f): [string, string] => [f.staged, `${table}/${f.rel}`]);
      const rows = await writer.countRowsOf(merged.map(([s]) => s));
      total += rows;
      const drop = r.state.files.filter((f) => !f.startsWith(`${RAW}/`));
      await store.commit(
        { ...r.state, files: [...rawOf(r.state), ...[...merged, ...r.rejects].map(([, t]) => t)], rows, rejects: r.rejected, lastRun },
        [...merged, ...r.rejects],
        drop,
      );
    }
    return total;
  }
}

/** `refresh: 'append'`: block windows from the high-water block on, committed batch by batch (append.ts). */
class Append extends OwnRows {
  async refresh(p: PartitionRun): Promise<undefined> {
    await append(p);
    return undefined;
  }

  start(job: Job, state: PartitionState, blocks?: PlanBlocks): Omit<PartitionPlan, 'id'> {
    const at = windowStart(job, blocks!, state);
    if (!blocks!.unknown.length) return at;
    const search = `${blocks!.unknown.join(' and ')}: found at the run's start, a search of the chain's blocks each (a few requests on a regular chain, at most ${blocks!.most})`;
    return { ...at, from: `${at.from}; ${search}`, searches: blocks!.searches };
  }
}

/** How a run would start a block-ranged partition bounded by `blocks`, as append() starts it. */
function windowStart(job: Job, blocks: PlanBlocks, state: PartitionState): Omit<PartitionPlan, 'id'> {
  const bc = job.decl.blockCursor!;
  const { track, rebuilding } = appendStart(state, job.fullRefresh);
  const cursor = track.cursor;
  const plan = windowPlan(bc, blocks, state, cursor, rebuilding);
  if (rebuilding) return plan;
  // As append() refuses it: a start below what the lake fetched of the partition. A start whose
  // block is not known yet is found by the run, which then decides.
  const start = blocks.startBlock ?? 0;
  const from = fetchedFrom(state.from, cursor, start, state.files);
  if (blocks.startAt === undefined && startBelow(from, cursor, start)) return { start: 'refused', from: startBelowReason(bc, job.cfg, job.decl.table, start, from), requests: 0 };
  const known = state.from ?? firstWindow(state.files);
  if (blocks.startAt !== undefined && startBelow(known, cursor, 0))
    return { ...plan, from: `${plan.from}; unless the first block at or after ${isoSeconds(blocks.startAt)} is below block ${known}, where the blocks this lake fetched of it begin: the run then refuses the partition, as it would fetch nothing below` };
  return plan;
}

function windowPlan(bc: BlockCursor, blocks: PlanBlocks, state: PartitionState, cursor: Cursor, rebuilding: boolean): Omit<PartitionPlan, 'id'> {
  const end = blocks.endBlock;
  const upTo = end !== undefined ? `to block ${end} (exclusive)` : blocks.endAt !== undefined ? `to the first block at or after ${isoSeconds(blocks.endAt)} (exclusive)` : 'to the head';
  const span = (from: number) => (bc.perBlock && end !== undefined ? 1 + Math.max(0, end - from) : 1);
  const listings = listingsOf(cursor.window);
  const what = state.rebuild ? 'resumes the full refresh in progress' : 'resumes the window being paged';
  if (listings.length > 1) {
    const left = listings.filter((l) => !l.done);
    const at = Math.min(...left.map((l) => listingRange(l, bc).from));
    return { start: 'resume', from: `${what}: ${left.length} of ${listings.length} block ranges left, the lowest from block ${at}, ${upTo}`, requests: left.length, fromBlock: at };
  }
  const w = listings[0];
  if (w) {
    // A block-by-block window's token starts with the block it continues at.
    const at = bc.perBlock && w.token ? Number(/^\d+/.exec(w.token)?.[0] ?? w.query[bc.start] ?? 0) : Number(w.query[bc.start] ?? 0);
    return { start: 'resume', from: `${what}: from block ${at}${w.token ? ', at its stored page token' : ''}, ${upTo}`, requests: span(at), fromBlock: at };
  }
  const from = windowToFetch(cursor, blocks.startBlock, end, rebuilding);
  if (from === undefined) return { start: 'done', from: `every block below ${end} is committed: nothing to fetch`, requests: 0 };
  if (blocks.startAt !== undefined && cursor.nextBlock === undefined) {
    const at = `from the first block at or after ${isoSeconds(blocks.startAt)} ${upTo}`;
    return rebuilding ? { start: 'full refresh', from: `rebuilds ${at}`, requests: 1 } : { start: 'new', from: at, requests: 1 };
  }
  if (rebuilding) return { start: 'full refresh', from: `${state.rebuild ? 'resumes the full refresh in progress' : 'rebuilds'} from block ${from} ${upTo}`, requests: span(from), fromBlock: from };
  if (cursor.nextBlock !== undefined) return { start: 'resume', from: `resumes at block ${from} ${upTo}`, requests: span(from), fromBlock: from };
  return { start: 'new', from: `from block ${from}${from === 0 ? ' (genesis)' : ''} ${upTo}`, requests: span(from), fromBlock: from };
}

/** How a run would start a merge partition: fetched whole, or a series from its newest point. */
function mergeStart(job: Job, state: PartitionState): Omit<PartitionPlan, 'id'> {
  const { decl, cfg } = job;
  if (job.fullRefresh) return { start: 'full refresh', from: 'full refresh: fetched whole, replaces what is committed', requests: 1 };
  const tc = decl.timeCursor;
  const start = tc?.startOption === undefined ? undefined : (cfg[tc.startOption] as number | undefined);
  if (seriesStartBelow(state.from, state.cursor, start))
    return { start: 'refetch', from: `from its configured start, ${minute(start! * 1000)}: before ${minute(state.from! * 1000)}, where the points this lake fetched of it begin (merged by key)`, requests: 1 };
  if (tc && state.cursor.newest !== undefined) return { start: 'resume', from: `from its newest point, ${minute(state.cursor.newest * 1000)} (refetched)`, requests: 1 };
  if (state.lastRun !== undefined || state.files.length > 0) {
    const last = state.cursor.refreshedAt ?? state.lastRun?.at;
    return { start: 'refetch', from: `fetched again${last ? ` (last ${minute(Date.parse(last))})` : ''}`, requests: 1 };
  }
  const since = tc?.startOption !== undefined && cfg[tc.startOption] !== undefined ? ` from ${minute(Number(cfg[tc.startOption]) * 1000)}` : '';
  return { start: 'new', from: tc ? `the whole series${since}` : '', requests: 1 };
}

/** `merge` or `replace` into the partition's rows: each partition commits its merge at its end. */
class PartitionMerge extends OwnRows {
  /** `replace`: a fetch is the partition's rows, the old ones go. */
  constructor(private readonly replaces: boolean) {
    super();
  }

  async refresh(p: PartitionRun): Promise<undefined> {
    await commitPartition(p, await fetchMerge(p), p.fullRefresh || this.replaces);
    return undefined;
  }

  start(job: Job, state: PartitionState): Omit<PartitionPlan, 'id'> {
    return mergeStart(job, state);
  }
}

/**
 * `merge` or `replace` into the table's rows (rows of one key may come from several queries): the
 * partitions' fresh rows wait in staging and merge into the table's one set of files, held by its
 * own state, in one commit at the end of the stream; its partitions are one job.
 */
class TableMerge {
  readonly rows = 'the whole table (one row per key across all queries)';
  readonly scope = 'table';
  readonly shared = TABLE_PARTITION;

  /** `replace`: a complete fetch is the table's rows, the old ones go. */
  constructor(private readonly replaces: boolean) {}

  async refresh(p: PartitionRun): Promise<TableMergeInput> {
    return stageForTable(p, await fetchMerge(p), p.fullRefresh || this.replaces);
  }

  /**
   * The table's commit, given what its partitions fetched. A full refresh swaps the table only
   * when every partition fetched, so nothing is lost. A replace table is replaced only by a
   * complete fetch; a partial one merges (keeps the rows of the partitions that failed) and the
   * next complete run replaces.
   */
  async finish(jobs: Job[], outs: Array<TableMergeInput | undefined>, store: StateStore, withWriter: WithWriter, runId: string): Promise<void> {
    const inputs = outs.filter((x): x is TableMergeInput => x !== undefined);
    const complete = inputs.length === jobs.length;
    const fullRefresh = jobs[0]!.fullRefresh;
    if (fullRefresh && !complete) return;
    const fresh = inputs.flatMap((i) => i.fresh);
    await withWriter((w) => commitTable(jobs[0]!.decl, fresh, store, w, { replace: fullRefresh || (this.replaces && complete), runId, refreshed: true }));
    await advanceCursors(store, inputs);
  }

  /** Every partition's rows merge into the table's one set of files, newest fetch first; each partition keeps its raw pages and rejects. */
  async commitRebuild(decl: StreamDecl, replayed: RebuiltPartition[], store: StateStore, writer: ParquetWriter): Promise<number> {
    const fresh = replayed.flatMap((r) => r.data.map(([s]) => s));
    const rows = await commitTable(decl, fresh, store, writer, { replace: true, runId: REBUILT.runId, refreshed: false });
    const lastRun = { ...REBUILT, at: new Date().toISOString() };
    for (const r of replayed)
      await store.commit({ ...r.state, files: [...rawOf(r.state), ...r.rejects.map(([, t]) => t)], rejects: r.rejected, lastRun }, r.rejects, r.state.files.filter((f) => f.startsWith(`${REJECTS}/`)));
    return rows;
  }

  start(job: Job, state: PartitionState): Omit<PartitionPlan, 'id'> {
    return mergeStart(job, state);
  }
}

const APPEND = new Append();
const MERGE_PARTITION = new PartitionMerge(false);
const REPLACE_PARTITION = new PartitionMerge(true);
const MERGE_TABLE = new TableMerge(false);
const REPLACE_TABLE = new TableMerge(true);

/** The strategy of a stream's refresh. */
export function strategyOf(decl: StreamDecl): RefreshStrategy {
  if (decl.refresh === 'append') return APPEND;
  const replaces = decl.refresh === 'replace';
  if (decl.mergeScope === 'table') return replaces ? REPLACE_TABLE : MERGE_TABLE;
  return replaces ? REPLACE_PARTITION : MERGE_PARTITION;
}
