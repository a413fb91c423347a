// `refresh: 'append'`: a partition is a listing bounded by blocks, fetched from its high-water block
// on in windows. Each batch commits with the cursor that continues it (the window's query, the
// page token of the next page, the newest block's keys and the transform's carry), so a killed run
// resumes at the page after its last commit. The rules of the cursor itself are state/cursor.ts.
import { REBUILD, type PartitionState } from '../state/store.js';
import { afterWindow, skipAt, windowToFetch, type Cursor } from '../state/cursor.js';
import { Transformer } from '../transform/rows.js';
import { PageTokenError } from '../extract/paginate.js';
import type { Moves, Staged } from './batch.js';
import type { PartitionRun } from './partition.js';

/**
 * Block-ranged listing from the high-water block on, committed batch by batch with the page
 * token that continues it. A --full-refresh pages into _rebuild/ and swaps in at the end.
 */
export async function append(p: PartitionRun): Promise<void> {
  const { decl, cfg, partition } = p.job;
  const bc = decl.blockCursor!;
  if (p.fullRefresh && !p.state.rebuild) p.state = { ...p.state, rebuild: { cursor: {}, files: [], rows: 0, rejects: 0 } };
  const rebuilding = p.state.rebuild !== undefined;
  const base = rebuilding ? `${REBUILD}/` : '';
  const track = () => (rebuilding ? p.state.rebuild! : { cursor: p.state.cursor, files: p.state.files });
  const cfgEnd = cfg[bc.endOption] as number | undefined;
  let cursor = track().cursor;
  let window = cursor.window;
  if (!window) {
    const start = windowToFetch(cursor, cfg[bc.startOption] as number | undefined, cfgEnd, rebuilding);
    if (start === undefined) return;
    const query: Record<string, string> = { ...partition.query, ...p.pageSize };
    if (start > 0) query[bc.start] = String(start);
    if (cfgEnd !== undefined) query[bc.end] = String(cfgEnd);
    window = { query, files: [] };
  }
  const start = Number(window.query[bc.start] ?? 0);
  const end = window.query[bc.end] !== undefined ? Number(window.query[bc.end]) : undefined;
  const skip = skipAt(cursor, start);
  // The skipped keys seed the newest block: rows found later in that same block add to them.
  p.batches.restart(new Transformer(decl, partition, window.carry, { skip, top: window.top ?? skip }));
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
      ? { ...p.state, rebuild: { cursor: next, files, rows: p.state.rebuild!.rows + rows, rejects: p.state.rebuild!.rejects + staged.rejected }, lastRun: p.lastRun(false) }
      : { ...p.state, files, cursor: next, rows: p.state.rows + rows, rejects: p.state.rejects + staged.rejected, lastRun: p.lastRun(complete) };
    p.commit(next_, [...staged.data, ...staged.side], replaceOnNext);
    replaceOnNext = [];
    rowsReplaced = 0;
  };
  for (;;) {
    try {
      for await (const page of p.pages(window.query, token)) {
        p.page(page);
        const transformer = p.batches.transformer;
        if (page.next !== undefined && transformer.rows < p.flushRows) continue;
        const staged = await p.stage(base);
        const top = transformer.getTop();
        if (page.next !== undefined) {
          window = {
            query: window.query,
            token: page.next,
            top,
            carry: transformer.getCarry(),
            files: [...window.files.filter((f) => !replaceOnNext.includes(f)), ...[...staged.data, ...staged.side].map(([, t]) => t)],
            rows: (window.rows ?? 0) + staged.rows,
          };
          cursor = { ...cursor, window };
          save(staged, cursor, false);
        } else {
          save(staged, afterWindow(start, end, top, skip), true);
        }
      }
      break;
    } catch (err) {
      if (!(err instanceof PageTokenError)) throw err;
      p.restarted(err, ++restarts);
      // Rows committed by this window are replaced by the first commit of the new listing.
      replaceOnNext = [...window.files];
      rowsReplaced = window.rows ?? 0;
      window = { query: window.query, files: [] };
      token = undefined;
      p.batches.restart(new Transformer(decl, partition, undefined, { skip, top: skip }));
    }
  }
  if (rebuilding) swapRebuild(p);
}

/** The rebuilt files replace the partition's old files in one commit. */
function swapRebuild(p: PartitionRun): void {
  const rb = p.state.rebuild!;
  const moves: Moves = rb.files.map((f) => [f, f.slice(REBUILD.length + 1)]);
  const files = moves.map(([, t]) => t);
  p.commit({ ...p.state, files, cursor: rb.cursor, rebuild: undefined, rows: rb.rows, rejects: rb.rejects, lastRun: p.lastRun(true) }, moves, p.state.files);
}
