// `chainlake reset <table>`: moves partitions' cursors back, or drops them, without hand-editing
// a file. An append partition goes back to a block, a series to a time: its committed rows at or
// after that point are deleted in the same atomic commit that moves the cursor, so the next run
// fetches them again and nothing lands twice. A dropped partition is as if never fetched. The cure
// for a cursor that a wrong row moved past what exists (runs before the window's bounds), a chain
// that went back, or rows an analyst knows to be wrong.
import type { Logger } from 'pino';
import { streamOf } from '../streams/index.js';
import { folderOf, type StreamDecl } from '../decl/stream.js';
import { RAW, TABLE_PARTITION, type PartitionState } from '../state/store.js';
import { isTableData } from '../state/names.js';
import { coveredRange, isoSeconds, type Cursor } from '../state/cursor.js';
import { nextStem } from '../state/names.js';
import { UsageError } from '../errors.js';
import { withLockedWriter } from './session.js';
import { strategyOf } from './strategies.js';

/** Where a reset takes a partition: back to a block (append tables), to a time (series), or dropped. */
export type ResetTarget = { block: number } | { time: number } | { drop: true };

/** What a reset does to one partition's state: the data files it filters and what the state becomes. */
export interface ResetPlan {
  /** Data files whose rows before the point stay (rewritten as one file); none for a drop. */
  filter: string[];
  /** SQL condition on a row that keeps it. */
  keep?: string;
  /** Files the commit deletes (the filtered ones among them). */
  deletes: string[];
  /** The state without the filtered files; `rows` set once the filtered file is counted. */
  state: PartitionState;
  /** The cursor before and after, in words. */
  from: string;
  to: string;
}

const quoted = (column: string) => `"${column.replace(/"/g, '""')}"`;

/**
 * The reset of a partition to `target`, or a usage error saying why it cannot be: a reset moves a
 * cursor back, never forward (a cursor moved forward would skip rows that exist).
 */
export function resetPlan(decl: StreamDecl, state: PartitionState, target: ResetTarget): ResetPlan {
  const where = `${decl.table} ${state.partition}`;
  if (state.rebuild) throw new UsageError(`reset ${where}: a --full-refresh is in progress; finish it first (\`chainlake run ... --full-refresh ${decl.table}\`)`);
  const data = state.files.filter((f) => isTableData(state.table, f));
  const from = describe(state.cursor);
  if ('drop' in target) {
    const { values, table, partition } = state;
    return { filter: [], deletes: state.files, state: { table, partition, ...(values ? { values } : {}), files: [], rows: 0, rejects: 0, cursor: {} }, from, to: 'dropped: the next run fetches it from its configured start' };
  }
  // Raw pages go too: a page holding rows on both sides of the point cannot be kept in part, and
  // `rebuild` would bring back the rows taken back (rawIncomplete says why it cannot rebuild).
  const raw = state.files.filter((f) => f.startsWith(`${RAW}/`));
  const keptFiles = state.files.filter((f) => !data.includes(f) && !raw.includes(f));
  const gone = [...data, ...raw];
  if ('block' in target) {
    const bc = decl.blockCursor;
    if (!bc) throw new UsageError(`reset ${decl.table}: --to-block is for tables appended by block; this one refreshes by ${decl.refresh}${decl.timeCursor ? ' (give --to-time)' : ' (give --drop)'}`);
    const high = coveredRange(state.cursor).high;
    const next = high === undefined ? undefined : high + 1;
    if (next === undefined || target.block > next) throw new UsageError(`reset ${where}: --to-block ${target.block} is not behind the cursor (${from}); a reset only moves a cursor back`);
    const cursor: Cursor = { nextBlock: target.block };
    return { filter: data, keep: `${quoted(bc.column)} < ${target.block}`, deletes: gone, state: { ...state, files: keptFiles, cursor, rawIncomplete: true }, from, to: describe(cursor) };
  }
  const tc = decl.timeCursor;
  if (!tc || decl.blockCursor) throw new UsageError(`reset ${decl.table}: --to-time is for series and listings by time; ${decl.blockCursor ? 'this one is appended by block (give --to-block)' : 'this one has no time cursor (give --drop)'}`);
  if (strategyOf(decl).shared !== undefined) throw new UsageError(`reset ${decl.table}: its partitions' rows merge into one set of files; refetch it whole with \`chainlake run ... --full-refresh ${decl.table}\``);
  if (state.cursor.newest === undefined || target.time > state.cursor.newest) throw new UsageError(`reset ${where}: --to-time ${isoSeconds(target.time)} is not behind the cursor (${from}); a reset only moves a cursor back`);
  const cursor: Cursor = { ...state.cursor, newest: target.time };
  return { filter: data, keep: `${quoted(tc.column)} < to_timestamp(${target.time})`, deletes: gone, state: { ...state, files: keptFiles, cursor, rawIncomplete: true }, from, to: describe(cursor) };
}

function describe(c: Cursor): string {
  if (c.window) return 'a window being paged';
  if (c.nextBlock !== undefined) return `next block ${c.nextBlock}`;
  if (c.newest !== undefined) return `newest point ${isoSeconds(c.newest)}`;
  return 'nothing committed';
}

export interface ResetReport {
  table: string;
  partitions: Array<{ partition: string; from: string; to: string; rowsBefore: number; rowsAfter: number }>;
}

/**
 * Resets `partitions` of `table` (every one when none is given; an id is as `status` prints it,
 * with or without the table in front) to `target`, each in one commit, holding the lake.
 */
export async function resetTable(lake: string, table: string, target: ResetTarget, o: { logger: Logger; partitions?: string[]; wait?: boolean }): Promise<ResetReport> {
  const decl = streamOf('reset', table);
  const report: ResetReport = { table, partitions: [] };
  await withLockedWriter(lake, { wait: o.wait, onNote: (note) => o.logger.warn(note) }, async (store, writer) => {
    const all = store.statesOf(table).filter((s) => s.partition !== TABLE_PARTITION);
    const wanted = (o.partitions ?? []).map((p) => (p.startsWith(`${table}/`) ? p.slice(table.length + 1) : p));
    const unknown = wanted.filter((p) => !all.some((s) => s.partition === p));
    if (unknown.length) throw new UsageError(`reset ${table}: no partition ${unknown.map((p) => JSON.stringify(p)).join(', ')} in ${store.lake} (\`chainlake status\` lists them)`);
    const states = wanted.length ? all.filter((s) => wanted.includes(s.partition)) : all;
    if (!states.length) throw new UsageError(`reset ${table}: the lake ${store.lake} holds no partition of it`);
    // Every plan first: a reset that cannot be done for one partition changes none.
    const plans = states.map((s) => resetPlan(decl, s, target));
    for (const plan of plans) {
      const s = plan.state;
      let moves: Array<[string, string]> = [];
      let rows = 0;
      if (plan.filter.length) {
        const dir = store.stagingDir(table, s.partition);
        const [out] = await writer.rewrite(await store.local(plan.filter), dir, nextStem(s.partition, [...plan.filter, ...s.files]), folderOf(decl, s.values ?? {}), decl, { keep: plan.keep });
        rows = await writer.countRowsOf([out!.staged]);
        if (rows > 0) moves = [[out!.staged, `${table}/${out!.rel}`]];
      }
      const before = states.find((x) => x.partition === s.partition)!.rows;
      await store.commit({ ...s, files: [...s.files, ...moves.map(([, t]) => t)], rows }, moves, plan.deletes);
      report.partitions.push({ partition: s.partition, from: plan.from, to: plan.to, rowsBefore: before, rowsAfter: rows });
    }
  });
  return report;
}

