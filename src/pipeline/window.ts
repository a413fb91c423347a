// The refresh of an append partition as a pure machine: no I/O, no clock. append.ts feeds it what
// happens (a chunk starts, a page arrives, a batch is staged, a page token is refused, the run is
// stopped) and does what it answers (fetch this chunk from this token, stage now, commit this
// state with these files, drop those). Everything the window knows lives here: which rows a
// listing keeps (its gate), where its committed rows end, when a chunk gives half its blocks to a
// new one, and the checkpoint that a killed run resumes from. `rebuild` replays raw pages through
// the same gates. The rules of the cursor itself are state/cursor.ts.
import { afterWindow, highest, listingRange, splitPoint, windowToFetch, skipAt, chunkedWindow, FUTURE_SECONDS, isoSeconds, latestTime, type BlockKeys, type BlockParams, type Carry, type ChunkedWindow, type Cursor, type Listing } from '../state/cursor.js';
import { BELOW, KEEP, OUTSIDE, SKIPPED, UNASKED, type RowGate, type Verdict } from '../transform/gate.js';

/**
 * What a window may hold at all: blocks from its start to its end (the pipeline's endBlock, or the
 * chain's head pinned when it began, plus one) and block times up to `maxTime` (the run's clock
 * and a tolerance). A row outside them is no row of the window (a broken index, a proxy serving
 * a wrong page): never committed, so it can never move the cursor past what exists.
 */
export interface WindowBounds {
  start: number;
  end?: number;
  maxTime?: number;
}

/** Why a row lies outside a window's bounds, in words; undefined when it does not. */
export function outsideBounds(b: WindowBounds | undefined, block: number, time: number): string | undefined {
  if (!b) return undefined;
  if (b.end !== undefined && block >= b.end) return `block ${block} is at or above the window's end ${b.end}`;
  if (block < b.start) return `block ${block} is below the window's start ${b.start}`;
  if (b.maxTime !== undefined && time > b.maxTime) return `block ${block}'s time ${isoSeconds(time)} is in the future (now ${isoSeconds(b.maxTime - FUTURE_SECONDS)})`;
  return undefined;
}

/**
 * Which rows of a block-ranged listing are its own, and what they tell of the listing: the rows
 * of its range [from, to) above its floor (a split gave the blocks below to another chunk), not
 * committed already (`skip`: the first block's rows an earlier window committed), with the
 * newest block and its keys (`top`), the lowest block (`low`) and whether the listing came newest
 * first. A row outside the window's bounds is UNASKED, one outside the listing's range but in
 * the window OUTSIDE (another listing of the window sends it).
 */
export class ListingGate implements RowGate {
  /** A split moves it up while the listing pages. */
  floor?: number;
  /** A row below the floor or the range came: in a listing newest first, every later row is below too. */
  reachedFloor = false;
  newestFirst = true;
  low?: number;
  unasked?: string;
  private readonly skip?: { block: number; keys: Set<string> };
  private top?: { block: number; keys: Set<string> };

  constructor(
    private readonly range: { from: number; to: number } | undefined,
    o: { floor?: number; skip?: BlockKeys; top?: BlockKeys; low?: number; bounds?: WindowBounds } = {},
  ) {
    this.floor = o.floor;
    this.low = o.low;
    this.bounds = o.bounds;
    if (o.skip) this.skip = { block: o.skip.block, keys: new Set(o.skip.keys) };
    if (o.top) this.top = { block: o.top.block, keys: new Set(o.top.keys) };
  }

  private readonly bounds?: WindowBounds;

  admit(b: number, key: string, time = NaN): Verdict {
    const why = outsideBounds(this.bounds, b, time);
    if (why !== undefined) {
      if (b < this.bounds!.start) this.reachedFloor = true;
      this.unasked = why;
      return UNASKED;
    }
    const r = this.range;
    if (r && (b < r.from || b >= r.to)) {
      if (b < r.from) this.reachedFloor = true;
      return OUTSIDE;
    }
    if (this.floor !== undefined && b < this.floor) {
      this.reachedFloor = true;
      return BELOW;
    }
    if (this.low !== undefined && b > this.low) this.newestFirst = false;
    if (this.low === undefined || b < this.low) this.low = b;
    if (this.skip && b === this.skip.block && this.skip.keys.has(key)) return SKIPPED;
    if (!this.top || b > this.top.block) this.top = { block: b, keys: new Set([key]) };
    else if (b === this.top.block) this.top.keys.add(key);
    return KEEP;
  }

  /** The highest block kept so far (getTop without copying its keys). */
  get topBlock(): number | undefined {
    return this.top?.block;
  }

  /** The highest block kept so far and the keys of its rows. */
  getTop(): BlockKeys | undefined {
    return this.top && { block: this.top.block, keys: [...this.top.keys] };
  }
}

/** What a partition's window is fetched under: the declaration's block parameters and the stream's options. */
export interface WindowConfig {
  bp: BlockParams;
  startBlock?: number;
  endBlock?: number;
  /** Chunks fetched at once at most (1: one listing, paged one page after another). */
  chunks: number;
  /** The partition's query, page size included. */
  query: Record<string, string>;
  /** Rows a page holds at most: a split pays only where several pages are left. */
  pageSize: number;
  /** A full refresh (into the shadow state) is under way: a window is fetched even past the end block. */
  rebuilding: boolean;
  /** The chain's head can be found: every new window ends at it, or at the end block if lower. */
  findsHead?: boolean;
  /** The run's clock (Unix seconds): a row whose time lies beyond it (and a tolerance) is not the window's. */
  now?: number;
}

/** Where an append partition stands, whether it is the table's or the full refresh's shadow. */
export interface Track {
  cursor: Cursor;
  files: string[];
  rows: number;
  rejects: number;
}

/**
 * How the next window opens: none (every block to the end is committed), at once (an open window
 * to resume, or an end known and no head to find), or once the chain's head is known (a window
 * never reaches past it).
 */
export function nextWindow(cursor: Cursor, cfg: WindowConfig): { window?: ChunkedWindow; needsHead?: boolean } {
  if (cursor.window) return { window: chunkedWindow(cursor.window, cfg.bp) };
  const start = windowToFetch(cursor, cfg.startBlock, cfg.endBlock, cfg.rebuilding);
  if (start === undefined) return {};
  if (cfg.findsHead || (cfg.endBlock === undefined && cfg.chunks > 1)) return { needsHead: true };
  return { window: openWindow(cursor, cfg) };
}

/**
 * A new window from the cursor on, below `head` (the chain's newest block, pinned now: rows of
 * blocks after the run began wait for the next run) and the end block, whichever is lower. An end
 * block above the head ends the window at the head, as if none were given: it is done only once
 * the chain has reached it.
 */
export function openWindow(cursor: Cursor, cfg: WindowConfig, head?: number): ChunkedWindow | undefined {
  const start = windowToFetch(cursor, cfg.startBlock, cfg.endBlock, cfg.rebuilding);
  if (start === undefined) return undefined;
  const endConfigured = cfg.endBlock !== undefined && (head === undefined || cfg.endBlock <= head + 1);
  const end = endConfigured ? cfg.endBlock : head === undefined ? undefined : head + 1;
  if (end !== undefined && start >= end) return undefined;
  const query: Record<string, string> = { ...cfg.query };
  if (start > 0) query[cfg.bp.start] = String(start);
  if (end !== undefined) query[cfg.bp.end] = String(end);
  return { start, end, endConfigured, chunks: [{ query, files: [] }], splits: 0 };
}

/**
 * What a run says of a window against the chain's head, when there is anything to say: a cursor
 * ahead of the head (rows above it were committed once, or the chain went back: nothing is
 * fetched until the head passes it), or an end block the chain has not reached.
 */
export function headNote(cursor: Cursor, cfg: WindowConfig, head: number): string | undefined {
  const start = windowToFetch(cursor, cfg.startBlock, cfg.endBlock, cfg.rebuilding);
  if (start === undefined) return undefined;
  if (start > head + 1) return `the cursor (block ${start}) is ahead of the chain's head (block ${head}): nothing fetched; if rows above the head were committed, move it back with \`chainlake reset\``;
  if (cfg.endBlock !== undefined && cfg.endBlock > head + 1) return `endBlock ${cfg.endBlock} is above the chain's head (block ${head}): fetched to the head; a later run goes on to endBlock`;
  return undefined;
}

/** A batch staged for a chunk: the lake paths of its files, its rows and rejects. */
export interface StagedBatch {
  files: string[];
  rows: number;
  rejected: number;
}

/** What to commit: the track's next state, whether the window is done, and the files that go. */
export interface CommitIntent {
  track: Track;
  complete: boolean;
  drop: string[];
}

/** What to do after a page. */
export interface AfterPage {
  /** Stage and commit the batch now. */
  commit: boolean;
  /** The chunk's listing is at its end. */
  last: boolean;
}

/**
 * A chunk is split only while it has at least this many pages left by its density (rows a block so
 * far): a split costs a page or two (the new chunk's last page, the rows of the old one's last
 * page that are the new chunk's), which pays only where many pages are left.
 */
const SPLIT_PAGES = 4;

/** One chunk of the window in this run. */
interface Chunk {
  /** Its checkpoint as last committed; `floor` moves when a split takes its lower blocks. */
  saved: Listing;
  status: 'waiting' | 'fetching' | 'done' | 'stopped';
  /** The query its listing pages now (a restart raises its start to the floor). */
  query: Record<string, string>;
  token?: string;
  gate: ListingGate;
  /** Its listing has pages to come (a split may share them). */
  more: boolean;
  /** Items its listing has sent in this run, and the blocks among them: its density. */
  items: number;
  low?: number;
  high?: number;
  /** The next page's token while the batch holds pages not committed yet. */
  pending?: string;
  /** Where the batch being staged ends: the token that continues it, and whether it is the last. */
  cut?: { next?: string; last: boolean };
  /** The listing started again: the files it committed before go with its next commit. */
  restarted: boolean;
}

export class WindowMachine {
  private readonly chunks: Chunk[];
  private splits: number;
  /** Seen a listing that is not newest first: no range is split any more (a split relies on the order). */
  private unordered = false;
  private failed = false;

  /**
   * `skip`: the rows of the window's first block that an earlier window committed (they come again).
   * `maxChunks`: chunks fetched at once at most.
   */
  constructor(
    readonly window: ChunkedWindow,
    private readonly skip: BlockKeys | undefined,
    private readonly bp: BlockParams,
    private readonly maxChunks: number,
    private readonly pageSize: number,
    /** The latest time a row may have (WindowBounds.maxTime). */
    private readonly maxTime?: number,
  ) {
    this.chunks = window.chunks.map((saved) => ({
      saved,
      status: saved.done ? 'done' : 'waiting',
      query: saved.query,
      token: saved.token,
      gate: this.gateOf(saved),
      more: saved.token !== undefined,
      items: 0,
      restarted: false,
    }));
    this.splits = window.splits;
  }

  /** The machine for a partition's track: its open window (resumed) or `window`, skipping what the track committed of its first block. */
  static of(track: Track, window: ChunkedWindow, cfg: WindowConfig): WindowMachine {
    return new WindowMachine(window, skipAt(track.cursor, window.start), cfg.bp, cfg.chunks, cfg.pageSize, cfg.now === undefined ? undefined : latestTime(cfg.now));
  }

  private gateOf(l: Listing, fresh = false): ListingGate {
    const bounds: WindowBounds = { start: this.window.start, end: this.window.end, maxTime: this.maxTime };
    return new ListingGate(listingRange({ query: l.query, files: [] }, this.bp), fresh ? { floor: l.floor, skip: this.skip, bounds } : { floor: l.floor, skip: this.skip, top: l.top, low: l.low, bounds });
  }

  get fetching(): number {
    return this.chunks.filter((c) => c.status === 'fetching').length;
  }

  /** Every chunk has stopped fetching. */
  get idle(): boolean {
    return this.fetching === 0;
  }

  /**
   * The chunk to start now, if any: one waiting, else, while `room` says the service could take
   * more and a chunk is under way, a range split off one. Undefined once a chunk failed.
   */
  next(room: number): { id: number; split: boolean } | undefined {
    if (this.failed) return undefined;
    const fetching = this.fetching;
    if (fetching >= this.maxChunks) return undefined;
    let id = this.chunks.findIndex((c) => c.status === 'waiting');
    let split = false;
    if (id < 0 && fetching > 0 && room > 0) {
      id = this.split();
      split = id >= 0;
    }
    if (id < 0) return undefined;
    this.chunks[id]!.status = 'fetching';
    return { id, split };
  }

  /**
   * The chunk under way with the most rows left (by the density of what its listing sent so far)
   * gives the lower half of its blocks to a new chunk. Only blocks below what its listing has
   * reached (and committed) go: the rows it holds stay its own. -1 when none is worth it.
   */
  private split(): number {
    if (this.unordered || this.window.end === undefined) return -1;
    let best: { c: Chunk; from: number; mid: number; left: number } | undefined;
    for (const c of this.chunks) {
      if (c.status !== 'fetching' || !c.more || c.low === undefined || c.high === undefined) continue;
      const { from, to } = listingRange(c.saved, this.bp);
      const reached = Math.min(c.low, c.saved.low ?? Infinity);
      const mid = splitPoint(from, to, reached);
      if (mid === undefined) continue;
      const left = (c.items / (c.high - c.low + 1)) * (reached - from);
      if (left >= SPLIT_PAGES * this.pageSize && (!best || left > best.left)) best = { c, from, mid, left };
    }
    if (!best) return -1;
    const { c, from, mid } = best;
    const query: Record<string, string> = { ...c.saved.query, [this.bp.end]: String(mid) };
    if (from > 0) query[this.bp.start] = String(from);
    else delete query[this.bp.start];
    this.raiseFloor(c, mid);
    const saved: Listing = { query, files: [] };
    this.chunks.push({ saved, status: 'waiting', query, gate: this.gateOf(saved), more: false, items: 0, restarted: false });
    this.splits++;
    return this.chunks.length - 1;
  }

  /** The blocks of a chunk below `floor` went to another chunk: its listing drops their rows, and ends at the first if newest first. */
  private raiseFloor(c: Chunk, floor: number): void {
    c.saved = { ...c.saved, floor };
    c.gate.floor = floor;
  }

  /**
   * A chunk's floor as its files were cut at when it was fetched (`rebuild` replays a chunk's raw
   * files, each named with the floor a split had raised it to by then).
   */
  cutAt(id: number, floor: number): void {
    const c = this.chunks[id]!;
    if (floor > (c.saved.floor ?? -Infinity)) this.raiseFloor(c, floor);
  }

  /** The listing a chunk pages: its query and the token to continue from. */
  listing(id: number): { query: Record<string, string>; token?: string } {
    const c = this.chunks[id]!;
    return { query: c.query, token: c.token };
  }

  /** The carry of a chunk's derive function as last committed: its listing resumes with it. */
  carry(id: number): Carry | undefined {
    return this.chunks[id]!.saved.carry;
  }

  /** The rows a chunk's listing keeps. */
  gate(id: number): ListingGate {
    return this.chunks[id]!.gate;
  }

  /** A chunk's listing ends at a floor: its range and its floor (the block its files are cut at). */
  range(id: number): { from: number; to: number } {
    return listingRange(this.chunks[id]!.saved, this.bp);
  }

  /**
   * A page of a chunk went through its gate (`items` as sent; `batchRows` the rows its batch holds
   * now): commit now, or page on. The first row below the floor ends the chunk, if its listing is
   * newest first.
   */
  paged(id: number, next: string | undefined, items: number, batchRows: number, flushRows: number): AfterPage {
    const c = this.chunks[id]!;
    const g = c.gate;
    if (!g.newestFirst) this.unordered = true;
    const last = next === undefined || (g.reachedFloor && g.newestFirst);
    c.more = !last;
    c.low = g.low;
    c.high = g.topBlock;
    c.items += items;
    c.token = last ? undefined : next;
    const commit = last || batchRows >= flushRows;
    if (commit) {
      c.pending = undefined;
      c.cut = { next: c.token, last };
    } else c.pending = next;
    return { commit, last };
  }

  /**
   * The run is stopping while a chunk's batch holds pages not committed: they commit, up to the
   * token of the next page, rather than be fetched again. False when there is nothing to commit.
   */
  stopping(id: number): boolean {
    const c = this.chunks[id]!;
    if (c.pending === undefined) return false;
    c.cut = { next: c.pending, last: false };
    c.pending = undefined;
    return true;
  }

  /**
   * A chunk's batch is staged: the track's next state to commit with it (the chunk's checkpoint:
   * its query, the token that continues it, its newest block's keys, the carry of its derive
   * function, and the window's cursor once every chunk is done). After a restart the files the
   * listing committed before go.
   */
  commit(id: number, track: Track, staged: StagedBatch, carry: Carry): CommitIntent {
    const c = this.chunks[id]!;
    const cut = c.cut ?? { next: c.token, last: false };
    c.cut = undefined;
    const dropped = new Set(c.restarted ? c.saved.files : []);
    const rowsBefore = c.restarted ? 0 : (c.saved.rows ?? 0);
    const rowsDropped = c.restarted ? (c.saved.rows ?? 0) : 0;
    c.restarted = false;
    const saved: Listing = {
      query: c.query,
      token: cut.next,
      top: c.gate.getTop(),
      carry,
      low: c.gate.low,
      floor: c.saved.floor,
      files: [...c.saved.files.filter((f) => !dropped.has(f)), ...staged.files],
      rows: rowsBefore + staged.rows,
      ...(cut.last ? { done: true } : {}),
    };
    if (saved.floor === undefined) delete saved.floor;
    c.saved = saved;
    if (cut.last) c.status = 'done';
    const files = [...track.files.filter((f) => !dropped.has(f)), ...staged.files];
    const rows = track.rows + staged.rows - rowsDropped;
    const rejects = track.rejects + staged.rejected;
    const complete = this.chunks.every((x) => x.saved.done);
    let cursor: Cursor;
    if (complete) {
      const top = highest([this.skip, ...this.chunks.map((x) => x.saved.top)]);
      cursor = afterWindow(this.window.start, this.window.endConfigured ? this.window.end : undefined, top, this.skip);
    } else {
      const window: ChunkedWindow = { ...this.window, chunks: this.chunks.map((x) => x.saved), splits: this.splits };
      if (window.end === undefined) delete window.end;
      cursor = { ...track.cursor, window };
    }
    return { track: { cursor, files, rows, rejects }, complete, drop: [...dropped] };
  }

  /**
   * A chunk's page token was refused (it expired): its listing starts again from its first page,
   * its start raised to its floor. What it fetched in this run is forgotten; what it committed
   * before goes with its next commit.
   */
  restart(id: number): void {
    const c = this.chunks[id]!;
    const { from } = listingRange(c.saved, this.bp);
    const query = { ...c.saved.query };
    if (from > 0) query[this.bp.start] = String(from);
    c.query = query;
    c.token = undefined;
    c.pending = undefined;
    c.cut = undefined;
    c.items = 0;
    c.low = c.high = undefined;
    c.gate = this.gateOf({ ...c.saved, query }, true);
    c.restarted = true;
  }

  /** A chunk's listing ended without its last page (an extractor that yielded nothing, or a stop). */
  stopped(id: number): void {
    const c = this.chunks[id]!;
    if (c.status === 'fetching') c.status = 'stopped';
  }

  /** A chunk failed: no chunk starts any more. */
  fail(id: number): void {
    this.stopped(id);
    this.failed = true;
  }
}
