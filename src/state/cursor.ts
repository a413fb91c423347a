// A partition's cursor, kept in its state file (store.ts) and committed with the files it covers:
// for an append stream, where its committed rows end and the window being paged; for a merge, the
// newest point and when it was fetched.
import { isoTime } from '../text.js';
import { readName } from './names.js';

/** Rows of one block already committed, by key: the next window refetches that block and skips them. */
export interface BlockKeys {
  block: number;
  keys: string[];
}

/** Carried across pages of one partition; stored with the checkpoint. */
export interface Carry {
  group?: string;
  seen?: Record<string, number>;
}

/**
 * One listing of an append window: a block range paged with its own page tokens. A window is one
 * listing, or several (chunks) fetched at once, each committed with its own checkpoint.
 */
export interface Listing {
  /** The listing's query: its page tokens belong to it. */
  query: Record<string, string>;
  token?: string;
  /** Highest block committed by this listing and its keys. */
  top?: BlockKeys;
  carry?: Carry;
  /** Files and rows committed by this listing: a restart (expired page token) replaces them. */
  files: string[];
  rows?: number;
  /**
   * A chunk whose range was split after its listing began: rows below this block are the other
   * chunk's. They are dropped, and (the listing being newest first) the listing ends at the first.
   */
  floor?: number;
  /** Lowest block committed by this listing (newest first: what is below is still to come). */
  low?: number;
  /** Every row of the listing's range is committed. */
  done?: boolean;
}

/** A window split into chunks: [start, end) covered by the chunks' ranges, disjoint. */
export interface ChunkedWindow {
  start: number;
  /** The pipeline's endBlock, or the head pinned when the window began, plus one; none: the listing runs to the head as it pages. */
  end?: number;
  /** `end` is the pipeline's endBlock: once the window is done, every block below it is. */
  endConfigured: boolean;
  chunks: Listing[];
  /** Ranges split off a chunk under way (work stealing). */
  splits: number;
}

export interface Cursor {
  /** append: where the next window starts (inclusive); everything below is committed. */
  nextBlock?: number;
  /** append: rows of block `nextBlock` already committed, by key (skipped when refetched). */
  skip?: BlockKeys;
  /** append: a window being paged: one listing (with the page token to continue from), or chunks. */
  window?: Listing | ChunkedWindow;
  /** merge with a time cursor: the newest committed point (Unix seconds). */
  newest?: number;
  /** merge: when the partition was last fetched. */
  refreshedAt?: string;
  /** merge with a time cursor: the pipeline's end (Unix seconds, exclusive) its last fetch kept to, which `rebuild` keeps to too. */
  until?: number;
}

/**
 * How far past the run's clock a row's time may lie (clocks differ by seconds, rarely minutes): a
 * later time cannot be a block's or a point's yet, and a cursor moved there would skip every row
 * until that time comes.
 */
export const FUTURE_SECONDS = 15 * 60;

/** The latest time a row may have when the clock reads `nowSeconds` (Unix seconds). */
export function latestTime(nowSeconds: number): number {
  return nowSeconds + FUTURE_SECONDS;
}

/** Unix seconds as an ISO time to the second (`2025-11-01T00:00:00Z`), or the number where it is none. */
export function isoSeconds(t: number): string {
  return isoTime(t) ?? String(t);
}

/** The block parameters of a listing's query (a declaration's blockCursor). */
export interface BlockParams {
  start: string;
  end: string;
}

/** An open window as chunks: a window of one listing (unsplit, as written before chunks) is one chunk. */
export function chunkedWindow(w: Listing | ChunkedWindow, bp: BlockParams): ChunkedWindow {
  if ('chunks' in w) return w;
  const end = w.query[bp.end];
  return { start: Number(w.query[bp.start] ?? 0), end: end === undefined ? undefined : Number(end), endConfigured: end !== undefined, chunks: [w], splits: 0 };
}

/** The listings of an open window. */
export function listingsOf(w: Listing | ChunkedWindow | undefined): Listing[] {
  if (!w) return [];
  return 'chunks' in w ? w.chunks : [w];
}

/** The range [from, to) a listing is answerable for: its query's, raised to its floor. */
export function listingRange(l: Listing, bp: BlockParams): { from: number; to: number } {
  const from = Math.max(Number(l.query[bp.start] ?? 0), l.floor ?? 0);
  const to = l.query[bp.end] === undefined ? Infinity : Number(l.query[bp.end]);
  return { from, to };
}

/** The highest of some blocks' keys; keys of the same block add up. */
export function highest(tops: Array<BlockKeys | undefined>): BlockKeys | undefined {
  let best: { block: number; keys: Set<string> } | undefined;
  for (const t of tops) {
    if (!t) continue;
    if (!best || t.block > best.block) best = { block: t.block, keys: new Set(t.keys) };
    else if (t.block === best.block) for (const k of t.keys) best.keys.add(k);
  }
  return best && { block: best.block, keys: [...best.keys] };
}

/**
 * A range [from, to) cut in two at its middle, for work stealing: the upper part stays with the
 * listing under way (newest first, it has fetched down to `low` at most), the lower part becomes a
 * chunk of its own. Undefined when there is nothing left to share: fewer than two blocks below
 * what the listing has reached.
 */
export function splitPoint(from: number, to: number, low: number | undefined): number | undefined {
  const top = Math.min(to - 1, low ?? to - 1);
  if (top - from < 1) return undefined;
  return from + Math.ceil((top - from + 1) / 2);
}

/** The first block of an append partition's next window: the configured start, or where its committed rows end, whichever is later. */
export function nextWindowStart(cursor: Cursor, startBlock: number | undefined): number {
  return Math.max(startBlock ?? 0, cursor.nextBlock ?? 0);
}

/** An append partition has rows committed, or a window under way. */
function fetched(cursor: Cursor): boolean {
  return cursor.nextBlock !== undefined || cursor.window !== undefined;
}

/**
 * Whether a configured start lies below the range an append partition has fetched (which begins at
 * `from`, PartitionState.from): an incremental run resumes at its cursor and would never fetch the
 * blocks between, so such a run is refused (a full refresh fetches from the new start).
 */
export function startBelow(from: number | undefined, cursor: Cursor, start: number): boolean {
  return fetched(cursor) && from !== undefined && start < from;
}

/**
 * Where the fetched range of an append partition begins once an incremental window opens from its
 * configured `start`: there, for a partition fetched for the first time or for a start past its
 * cursor, which the window jumps to; else where it began. A lake that recorded none (written before
 * chainlake kept it) tells it by the files of windows fetched in chunks, whose names say where each
 * window began (state/names.ts); without such a file it adopts the start it is configured with.
 */
export function fetchedFrom(from: number | undefined, cursor: Cursor, start: number, files: readonly string[] = []): number {
  if (!fetched(cursor)) return start;
  if (cursor.window === undefined && start > cursor.nextBlock!) return start;
  return from ?? firstWindow(files) ?? start;
}

/** The lowest window start the names of a partition's files say, if any says one. */
export function firstWindow(files: readonly string[]): number | undefined {
  let low: number | undefined;
  for (const f of files) {
    const tag = readName(f)?.listing;
    if (tag?.kind === 'chunk' && (low === undefined || tag.window < low)) low = tag.window;
  }
  return low;
}

/**
 * A series by time whose configured start (Unix seconds) lies before the points it has fetched
 * (from `from`): a run fetches from its newest point on, so the points before `from` are fetched
 * once from that start (merged by key) instead.
 */
export function seriesStartBelow(from: number | undefined, cursor: Cursor, start: number | undefined): boolean {
  return cursor.newest !== undefined && from !== undefined && start !== undefined && start < from;
}

/**
 * Where the points a series fetched begin once it is fetched from its configured `start`: each fetch
 * runs from the later of the start and its newest point to now, so what it fetched stays one range
 * from the earliest start it was fetched from. A lake that recorded none adopts the start configured.
 */
export function seriesFrom(from: number | undefined, cursor: Cursor, start: number | undefined): number | undefined {
  if (start === undefined) return from;
  return cursor.newest === undefined || from === undefined ? start : Math.min(from, start);
}

/**
 * The first block of the next window, or undefined when there is none to fetch: every block below
 * the configured end is committed, and no full refresh asks for them again.
 */
export function windowToFetch(cursor: Cursor, startBlock: number | undefined, endBlock: number | undefined, rebuilding: boolean): number | undefined {
  const start = nextWindowStart(cursor, startBlock);
  return endBlock !== undefined && start >= endBlock && !rebuilding ? undefined : start;
}

/** The rows of a window's first block committed already, skipped when that block is fetched again. */
export function skipAt(cursor: Cursor, start: number): BlockKeys | undefined {
  return cursor.nextBlock === start ? cursor.skip : undefined;
}

/**
 * The cursor once the window from `start` (whose first block's committed rows were `skip`) is
 * paged to its end. With an end block, every block below it is done. Without one, the newest
 * block seen (`top`) is refetched next time, as it may have grown; its rows committed now are
 * skipped by key.
 */
export function afterWindow(start: number, end: number | undefined, top: BlockKeys | undefined, skip: BlockKeys | undefined): Cursor {
  if (end !== undefined) return { nextBlock: end };
  return top ? { nextBlock: top.block, skip: top } : { nextBlock: start, skip };
}

/**
 * Where an append partition's committed rows may lie, from its cursor: `high` is the highest block
 * a committed row may have, `hw` the high-water block whose committed rows the cursor lists by key
 * (the next run refetches that block and skips exactly those keys).
 */
export function coveredRange(c: Cursor): { high?: number; hw?: { block: number; keys: number } } {
  // Rows of the skipped block found again by the window add to the keys the cursor skips.
  const skip = c.skip && c.skip.block === c.nextBlock ? c.skip : undefined;
  const top = highest([skip, ...listingsOf(c.window).map((l) => l.top)]);
  // Without rows at the high-water block: ended at an exclusive endBlock, or nothing committed at the start block yet.
  const below = c.nextBlock === undefined ? undefined : c.nextBlock - 1;
  if (top && (below === undefined || top.block > below)) return { high: top.block, hw: { block: top.block, keys: top.keys.length } };
  return { high: below };
}

/**
 * Whether a chunked window's ranges cover it once: from its start to its end, each chunk beginning
 * where the one below ends. Undefined when they do; else the first gap or overlap.
 */
export function tilingProblem(w: ChunkedWindow, bp: BlockParams): string | undefined {
  const ranges = w.chunks.map((l) => listingRange(l, bp)).sort((a, b) => a.from - b.from);
  let at = w.start;
  for (const r of ranges) {
    if (r.from > at) return `no chunk covers blocks ${at} to ${r.from - 1}`;
    if (r.from < at) return `blocks ${r.from} to ${Math.min(at, r.to) - 1} are in two chunks`;
    at = r.to;
  }
  const end = w.end ?? Infinity;
  if (at < end) return `no chunk covers blocks ${at} to ${end === Infinity ? 'the head' : end - 1}`;
  if (at > end) return `a chunk reaches past the window's end (${end})`;
  return undefined;
}

/**
 * What is wrong with a partition's cursor, if anything: ahead of the chain's head its last run
 * found (rows above the head were committed, or the chain went back), or a series' newest point
 * in the future. Either way the next runs fetch nothing until the chain or the clock catches up.
 */
export function cursorProblem(s: { table: string; partition: string; cursor: Cursor; rebuild?: { cursor: Cursor }; head?: { block: number; at: string } }, nowSeconds: number): string | undefined {
  const c = s.rebuild?.cursor ?? s.cursor;
  if (s.head) {
    const high = coveredRange(c).high;
    if (high !== undefined && high > s.head.block) {
      const at = c.nextBlock !== undefined ? `next block ${c.nextBlock}` : `rows up to block ${high}`;
      return `the cursor (${at}) is ahead of the chain's head (block ${s.head.block}, seen ${s.head.at.slice(0, 16).replace('T', ' ')}); move it back: chainlake reset ${s.table} --partition '${s.partition}' --to-block ${s.head.block + 1}`;
    }
  }
  if (c.newest !== undefined && c.newest > latestTime(nowSeconds))
    return `the newest point (${isoSeconds(c.newest)}) is in the future; move it back: chainlake reset ${s.table} --partition '${s.partition}' --to-time ${nowSeconds}`;
  return undefined;
}
