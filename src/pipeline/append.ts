// `refresh: 'append'`: a partition is a listing bounded by blocks, fetched from its high-water block
// on in windows. A window is one listing, or, for a stream that can find the chain's head, block
// ranges (chunks) fetched at once, each its own listing with its own page tokens: a single
// listing moves one page per round trip, chunks as fast as the budget allows; a chunk under way
// gives the lower half of its blocks to a new one whenever the service could take another request
// (work stealing), so a dense range does not hold up the end. Each batch commits with the cursor
// that continues it, so a killed run resumes each chunk at the page after its last commit. Every
// decision is window.ts's (pure, tested alone); this file is its I/O: it fetches, stages and commits.
import { setMaxListeners } from 'node:events';
import { REBUILD, type PartitionState } from '../state/store.js';
import { DEFAULT_CHUNKS } from '../decl/stream.js';
import { Transformer } from '../transform/rows.js';
import { PageTokenError } from '../extract/paginate.js';
import type { Moves, Staged } from './batch.js';
import type { PartitionRun } from './partition.js';
import { chunkTag } from '../state/names.js';
import { givenBlocks, startBelowReason, timeBounded, windowBlocks } from './block_times.js';
import { fetchedFrom, startBelow } from '../state/cursor.js';
import { UsageError } from '../errors.js';
import { headNote, nextWindow, openWindow, WindowMachine, type Track, type WindowConfig } from './window.js';

/** The part of a partition's state a window moves: the table's own, or a full refresh's shadow. */
function trackOf(state: PartitionState): Track {
  return state.rebuild ?? { cursor: state.cursor, files: state.files, rows: state.rows, rejects: state.rejects };
}

/**
 * A partition's state as an append starts on it, and the track its window moves: a full refresh
 * not begun yet starts with an empty shadow under _rebuild/; one in progress goes on with its own.
 */
export function appendStart(state: PartitionState, fullRefresh: boolean): { state: PartitionState; track: Track; rebuilding: boolean } {
  const started = fullRefresh && !state.rebuild ? { ...state, rebuild: { cursor: {}, files: [], rows: 0, rejects: 0 } } : state;
  return { state: started, track: trackOf(started), rebuilding: started.rebuild !== undefined };
}

/**
 * Block-ranged listing from the high-water block on, committed batch by batch with the page
 * token that continues it. A --full-refresh pages into _rebuild/ and swaps in at the end.
 */
export async function append(p: PartitionRun): Promise<void> {
  const { decl, cfg, partition } = p.job;
  const bc = decl.blockCursor!;
  const start = appendStart(p.state, p.fullRefresh);
  p.state = start.state;
  const { rebuilding, track } = start;
  const chunks = bc.head && !bc.perBlock ? ((cfg.chunks as number | undefined) ?? DEFAULT_CHUNKS) : 1;
  const blocks = timeBounded(bc, cfg) ? await windowBlocks(p.store, p.context(), bc, cfg, partition) : givenBlocks(bc, cfg);
  if (blocks.note) p.note(blocks.note);
  if (blocks.notYet) return;
  const configured = blocks.startBlock ?? 0;
  if (!rebuilding) {
    // Kept with the partition's next commit (a lake that recorded none tells it by its files first).
    const from = fetchedFrom(p.state.from, track.cursor, configured, p.state.files);
    if (startBelow(from, track.cursor, configured)) throw new UsageError(startBelowReason(bc, cfg, decl.table, configured, from));
    if (from !== p.state.from) p.state = { ...p.state, from };
  }
  const wc: WindowConfig = {
    bp: bc,
    startBlock: blocks.startBlock,
    endBlock: blocks.endBlock,
    chunks,
    query: { ...partition.query, ...p.pageSize },
    pageSize: Number(p.pageSize.pageSize ?? 1),
    rebuilding,
    findsHead: bc.head !== undefined,
    now: Math.floor(Date.now() / 1000),
  };
  const next = nextWindow(track.cursor, wc);
  let window = next.window;
  if (next.needsHead) {
    const head = await bc.head!(p.context());
    const note = headNote(track.cursor, wc, head);
    if (note) p.note(note);
    // Kept with the partition's next commit, so that `status` can set its cursor against it.
    const seen = p.state.head?.block !== head;
    p.state = { ...p.state, head: { block: head, at: new Date().toISOString() } };
    window = openWindow(track.cursor, wc, head);
    if (!window && seen) p.commit(p.state, []);
  }
  if (!window) return;
  await new WindowRun(p, WindowMachine.of(track, window, wc), rebuilding, chunks).run();
  if (rebuilding) swapRebuild(p, configured);
}

/** The I/O of a window: fetches the chunks the machine starts, stages their batches, commits what it answers. */
class WindowRun {
  private failed?: { err: unknown };
  private readonly stop = new AbortController();
  private readonly signal: AbortSignal;
  private settle?: { resolve: () => void; reject: (err: unknown) => void };
  private readonly base: string;

  constructor(
    private readonly p: PartitionRun,
    private readonly m: WindowMachine,
    private readonly rebuilding: boolean,
    private readonly maxChunks: number,
  ) {
    this.base = rebuilding ? `${REBUILD}/` : '';
    const outer = p.signal;
    this.signal = outer ? AbortSignal.any([outer, this.stop.signal]) : this.stop.signal;
    // Each of a window's chunks (16 by default) and its requests follow it.
    setMaxListeners(0, this.signal, this.stop.signal);
  }

  run(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
      this.launch();
    });
  }

  /** Starts the chunks the machine gives, while it gives any. */
  private launch(): void {
    for (let next = this.m.next(this.p.room); next; next = this.m.next(this.p.room)) {
      const { id } = next;
      this.p.job.report.chunks++;
      if (next.split) this.p.job.report.splits++;
      this.fetch(id).then(
        () => this.launch(),
        (err: unknown) => {
          this.m.fail(id);
          this.failed ??= { err };
          this.stop.abort(err);
          this.launch();
        },
      );
    }
    if (!this.m.idle) return;
    if (this.failed) this.settle?.reject(this.failed.err);
    else this.settle?.resolve();
  }

  /** Pages one chunk to its end (or its floor), committing batch by batch. */
  private async fetch(id: number): Promise<void> {
    const close = this.p.openListing();
    try {
      await this.page(id);
    } finally {
      close();
    }
  }

  private async page(id: number): Promise<void> {
    const { p, m } = this;
    const { decl, partition } = p.job;
    let transformer = new Transformer(decl, partition, m.carry(id), m.gate(id));
    const batches = p.newBatchPath(transformer);
    // A chunk's files are named for its window, its listing (the block it ends before: chunks of
    // a window are disjoint) and the floor its rows were cut at: `rebuild` replays them exactly so.
    const stage = () => {
      if (this.maxChunks > 1) batches.retag(chunkTag(m.window.start, m.range(id)));
      return p.stage(this.base, batches);
    };
    await p.restarting(
      async () => {
        const { query, token } = m.listing(id);
        try {
          for await (const page of p.pages(query, token, this.signal)) {
            p.page(page, batches);
            const after = m.paged(id, page.next, page.items.length, transformer.rows, p.flushRows);
            this.launch();
            if (!after.commit) continue;
            this.save(id, await stage(), transformer);
            if (after.last) return;
          }
          // An extractor that yielded no page: nothing to commit.
          m.stopped(id);
        } catch (err) {
          // Stopped (SIGTERM, or another chunk failed): the pages fetched so far commit, up to the
          // token of the next one, rather than be fetched again.
          if (this.signal.aborted && !(err instanceof PageTokenError) && m.stopping(id)) this.save(id, await stage(), transformer);
          throw err;
        }
      },
      () => {
        m.restart(id);
        transformer = new Transformer(decl, partition, {}, m.gate(id));
        batches.restart(transformer);
      },
    );
  }

  /** Commits what the machine answers for a chunk's staged batch. */
  private save(id: number, staged: Staged, transformer: Transformer): void {
    const { p } = this;
    const moves: Moves = [...staged.data, ...staged.side];
    const intent = this.m.commit(id, trackOf(p.state), { files: moves.map(([, t]) => t), rows: staged.rows, rejected: staged.rejected }, transformer.getCarry());
    const state: PartitionState = this.rebuilding
      ? { ...p.state, rebuild: intent.track, lastRun: p.lastRun(false) }
      : { ...p.state, ...intent.track, lastRun: p.lastRun(intent.complete) };
    p.commit(state, moves, intent.drop);
  }
}
/** The rebuilt files replace the partition's old files in one commit. */
function swapRebuild(p: PartitionRun, from: number): void {
  const rb = p.state.rebuild!;
  const moves: Moves = rb.files.map((f) => [f, f.slice(REBUILD.length + 1)]);
  const files = moves.map(([, t]) => t);
  p.commit({ ...p.state, files, cursor: rb.cursor, from, rebuild: undefined, rawIncomplete: undefined, rows: rb.rows, rejects: rb.rejects, lastRun: p.lastRun(true) }, moves, p.state.files);
}

