// `refresh: 'append'`: a partition is a listing bounded by blocks, fetched from its high-water block
// on in windows. A window is one listing, or, for a stream that can find the chain's head, block
// ranges (chunks) fetched at once, each its own listing with its own page tokens: a single
// listing moves one page per round trip, chunks as fast as the budget allows. The window starts
// as one chunk; whenever the service could take another request, the chunk with the most rows
// left (by the density of what it fetched) gives the lower half of its blocks to a new chunk (work
// stealing), so a dense range does not hold up the end. Each batch commits with the cursor that continues it (every chunk's query, page
// token, newest block's keys and carry), so a killed run resumes each chunk at the page after its
// last commit. The rules of the cursor itself are state/cursor.ts.
import { REBUILD, type PartitionState } from '../state/store.js';
import { afterWindow, chunkedWindow, highest, listingRange, skipAt, splitPoint, windowToFetch, type BlockKeys, type ChunkedWindow, type Cursor, type Listing } from '../state/cursor.js';
import { DEFAULT_CHUNKS } from '../decl/stream.js';
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
  const cursor = rebuilding ? p.state.rebuild!.cursor : p.state.cursor;
  const cfgEnd = cfg[bc.endOption] as number | undefined;
  const chunks = bc.head && !bc.perBlock ? ((cfg.chunks as number | undefined) ?? DEFAULT_CHUNKS) : 1;
  let window: ChunkedWindow;
  if (cursor.window) window = chunkedWindow(cursor.window, bc);
  else {
    const start = windowToFetch(cursor, cfg[bc.startOption] as number | undefined, cfgEnd, rebuilding);
    if (start === undefined) return;
    let end = cfgEnd;
    // Pinned now: rows of blocks after the run began wait for the next run.
    if (end === undefined && chunks > 1) end = (await bc.head!(p.context())) + 1;
    if (end !== undefined && start >= end) return;
    const query: Record<string, string> = { ...partition.query, ...p.pageSize };
    if (start > 0) query[bc.start] = String(start);
    if (end !== undefined) query[bc.end] = String(end);
    window = { start, end, endConfigured: cfgEnd !== undefined, chunks: [{ query, files: [] }], splits: 0 };
  }
  await new WindowRun(p, window, skipAt(cursor, window.start), rebuilding, chunks).run();
  if (rebuilding) swapRebuild(p);
}

/** The tag of a chunk's files: `w<window start>.c<block its range ends before>.f<its floor>`. */
export function chunkTag(windowStart: number, range: { from: number; to: number }): string {
  return `w${windowStart}.c${Number.isFinite(range.to) ? range.to : 'head'}.f${range.from}`;
}

/** A chunk's tag read back from a file name (`rebuild`), or undefined for a file of one listing. */
export function chunkOfFile(file: string): { window: string; chunk: string; floor: number } | undefined {
  const m = /\.w(\d+)\.c(\d+|head)\.f(\d+)-\d+-\d{13}-\d+\.ndjson\.br$/.exec(file);
  return m ? { window: m[1]!, chunk: m[2]!, floor: Number(m[3]) } : undefined;
}

/** One chunk of the window in this run. */
interface Chunk {
  /** Its checkpoint as last committed; `floor` moves when a split takes its lower blocks. */
  saved: Listing;
  status: 'waiting' | 'fetching' | 'done' | 'stopped';
  /** Its listing has pages to come (a split may share them). */
  more: boolean;
  /** Lowest block its listing has sent in this run (rows still in the batch included). */
  low?: number;
  /** Items its listing has sent in this run, and the highest block among them: its density. */
  items: number;
  high?: number;
}

/**
 * A chunk is split only while it has at least this many pages left by its density (rows a block so
 * far): a split costs a page or two (the new chunk's last page, the rows of the old one's last
 * page that are the new chunk's), which pays only where many pages are left.
 */
const SPLIT_PAGES = 4;

class WindowRun {
  private readonly chunks: Chunk[];
  private splits: number;
  private failed?: { err: unknown };
  /** Seen a listing that is not newest first: no range is split any more (a split relies on the order). */
  private unordered = false;
  private readonly stop = new AbortController();
  private readonly signal: AbortSignal;
  private settle?: { resolve: () => void; reject: (err: unknown) => void };
  private readonly base: string;

  constructor(
    private readonly p: PartitionRun,
    private readonly w: ChunkedWindow,
    private readonly skip: BlockKeys | undefined,
    private readonly rebuilding: boolean,
    private readonly maxChunks: number,
  ) {
    this.chunks = w.chunks.map((saved) => ({ saved, status: saved.done ? 'done' : 'waiting', more: saved.token !== undefined, items: 0 }));
    this.splits = w.splits;
    this.base = rebuilding ? `${REBUILD}/` : '';
    const outer = p.signal;
    this.signal = outer ? AbortSignal.any([outer, this.stop.signal]) : this.stop.signal;
  }

  run(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
      this.launch();
    });
  }

  private get bc() {
    return this.p.job.decl.blockCursor!;
  }

  /** Starts chunks: those waiting, then, while the service has room for more, ranges split off. */
  private launch(): void {
    while (!this.failed) {
      const fetching = this.chunks.filter((c) => c.status === 'fetching').length;
      if (fetching >= this.maxChunks) break;
      let next = this.chunks.find((c) => c.status === 'waiting');
      if (!next && fetching > 0 && this.p.room > 0) next = this.split();
      if (!next) break;
      next.status = 'fetching';
      this.p.job.report.chunks++;
      this.fetch(next).then(
        () => this.launch(),
        (err: unknown) => {
          next.status = 'stopped';
          this.failed ??= { err };
          this.stop.abort(err);
          this.launch();
        },
      );
    }
    if (this.chunks.some((c) => c.status === 'fetching')) return;
    if (this.failed) this.settle?.reject(this.failed.err);
    else this.settle?.resolve();
  }

  /**
   * The chunk under way with the most rows left (by the density of what its listing sent so far)
   * gives the lower half of its blocks to a new chunk. Only blocks below what its listing has
   * reached (and committed) go: the rows it holds stay its own.
   */
  private split(): Chunk | undefined {
    if (this.unordered || this.w.end === undefined) return undefined;
    const pageSize = Number(this.p.pageSize.pageSize ?? 1);
    let best: { c: Chunk; from: number; mid: number; left: number } | undefined;
    for (const c of this.chunks) {
      if (c.status !== 'fetching' || !c.more || c.low === undefined || c.high === undefined) continue;
      const { from, to } = listingRange(c.saved, this.bc);
      const reached = Math.min(c.low, c.saved.low ?? Infinity);
      const mid = splitPoint(from, to, reached);
      if (mid === undefined) continue;
      const left = (c.items / (c.high - c.low + 1)) * (reached - from);
      if (left >= SPLIT_PAGES * pageSize && (!best || left > best.left)) best = { c, from, mid, left };
    }
    if (!best) return undefined;
    const { c, from, mid } = best;
    const query: Record<string, string> = { ...c.saved.query, [this.bc.end]: String(mid) };
    if (from > 0) query[this.bc.start] = String(from);
    else delete query[this.bc.start];
    c.saved = { ...c.saved, floor: mid };
    const chunk: Chunk = { saved: { query, files: [] }, status: 'waiting', more: false, items: 0 };
    this.chunks.push(chunk);
    this.splits++;
    this.p.job.report.splits++;
    return chunk;
  }

  /** Pages one chunk to its end (or its floor), committing batch by batch. */
  private async fetch(c: Chunk): Promise<void> {
    const close = this.p.openListing();
    try {
      await this.page(c);
    } finally {
      close();
    }
  }

  private async page(c: Chunk): Promise<void> {
    const { p } = this;
    const { decl, partition } = p.job;
    let query = c.saved.query;
    let token = c.saved.token;
    const fresh = (from?: Listing) => {
      const t = new Transformer(decl, partition, from?.carry, { skip: this.skip, top: from?.top });
      t.low = from?.low;
      return t;
    };
    let transformer = fresh(c.saved);
    const batches = p.newBatchPath(transformer);
    // A chunk's files are named for its window, its listing (the block it ends before: chunks of
    // a window are disjoint) and the floor its rows were cut at: `rebuild` replays them exactly so.
    const stage = () => {
      if (this.maxChunks > 1) batches.retag(chunkTag(this.w.start, listingRange(c.saved, this.bc)));
      return p.stage(this.base, batches);
    };
    // After a restart: what the listing committed before goes with the first commit of the new one.
    let restarted = false;
    let restarts = 0;
    // The next page's token while the batch holds pages not committed yet.
    let pending: string | undefined;
    const checkpoint = (next: string | undefined): Omit<Listing, 'files'> => ({ query, token: next, top: transformer.getTop(), carry: transformer.getCarry(), low: transformer.low });
    for (;;) {
      try {
        for await (const page of p.pages(query, token, this.signal)) {
          transformer.floor = c.saved.floor;
          transformer.range = listingRange({ query, files: [] }, this.bc);
          p.page(page, batches);
          pending = page.next;
          if (!transformer.newestFirst) this.unordered = true;
          // The first row below the floor ends the chunk, if the listing is newest first.
          const last = page.next === undefined || (transformer.reachedFloor && transformer.newestFirst);
          c.more = !last;
          c.low = transformer.low;
          c.high = transformer.topBlock;
          c.items += page.items.length;
          this.launch();
          if (!last && transformer.rows < p.flushRows) continue;
          pending = undefined;
          const staged = await stage();
          this.save(c, staged, checkpoint(last ? undefined : page.next), last, restarted);
          restarted = false;
          if (last) {
            c.status = 'done';
            return;
          }
        }
        // An extractor that yielded no page: nothing to commit.
        c.status = 'stopped';
        return;
      } catch (err) {
        // Stopped (SIGTERM, or another chunk failed): the pages fetched so far commit, up to the
        // token of the next one, rather than be fetched again.
        if (pending !== undefined && this.signal.aborted && !(err instanceof PageTokenError)) {
          const next = pending;
          pending = undefined;
          this.save(c, await stage(), checkpoint(next), false, restarted);
        }
        if (!(err instanceof PageTokenError)) throw err;
        p.restarted(err, ++restarts);
        restarted = true;
        const { from } = listingRange(c.saved, this.bc);
        query = { ...c.saved.query };
        if (from > 0) query[this.bc.start] = String(from);
        token = undefined;
        c.items = 0;
        c.low = c.high = undefined;
        transformer = fresh();
        batches.restart(transformer);
      }
    }
  }

  /**
   * Commits a chunk's batch with its next checkpoint; the last chunk to finish ends the window.
   * `restarted`: the listing started again, so the files it committed before are replaced.
   */
  private save(c: Chunk, staged: Staged, next: Omit<Listing, 'files'>, last: boolean, restarted: boolean): void {
    const { p } = this;
    const added = [...staged.data, ...staged.side].map(([, t]) => t);
    const dropped = new Set(restarted ? c.saved.files : []);
    const rowsBefore = restarted ? 0 : (c.saved.rows ?? 0);
    const rowsDropped = restarted ? (c.saved.rows ?? 0) : 0;
    c.saved = { ...next, floor: c.saved.floor, files: [...c.saved.files.filter((f) => !dropped.has(f)), ...added], rows: rowsBefore + staged.rows, ...(last ? { done: true } : {}) };
    if (c.saved.floor === undefined) delete c.saved.floor;
    const track = this.rebuilding ? p.state.rebuild! : { cursor: p.state.cursor, files: p.state.files, rows: p.state.rows, rejects: p.state.rejects };
    const files = [...track.files.filter((f) => !dropped.has(f)), ...added];
    const rows = track.rows + staged.rows - rowsDropped;
    const rejects = track.rejects + staged.rejected;
    const complete = this.chunks.every((x) => x.saved.done);
    let cursor: Cursor;
    if (complete) {
      const top = highest([this.skip, ...this.chunks.map((x) => x.saved.top)]);
      cursor = afterWindow(this.w.start, this.w.endConfigured ? this.w.end : undefined, top, this.skip);
    } else {
      const window: ChunkedWindow = { ...this.w, chunks: this.chunks.map((x) => x.saved), splits: this.splits };
      if (window.end === undefined) delete window.end;
      cursor = { ...track.cursor, window };
    }
    const state: PartitionState = this.rebuilding
      ? { ...p.state, rebuild: { cursor, files, rows, rejects }, lastRun: p.lastRun(false) }
      : { ...p.state, files, cursor, rows, rejects, lastRun: p.lastRun(complete) };
    p.commit(state, [...staged.data, ...staged.side], [...dropped]);
  }
}

/** The rebuilt files replace the partition's old files in one commit. */
function swapRebuild(p: PartitionRun): void {
  const rb = p.state.rebuild!;
  const moves: Moves = rb.files.map((f) => [f, f.slice(REBUILD.length + 1)]);
  const files = moves.map(([, t]) => t);
  p.commit({ ...p.state, files, cursor: rb.cursor, rebuild: undefined, rows: rb.rows, rejects: rb.rejects, lastRun: p.lastRun(true) }, moves, p.state.files);
}

