// A block-ranged window bounded by times (a table's startTimestamp and endTimestamp): each time is
// resolved to the first block at or after it (block_search.ts) through the chain's blocks, on the
// partition's requests, so counted in the run's budget. Once: the lake remembers each answer
// (state/block_times.ts), and the partitions of a run on one chain share each search. A time the
// chain has not reached has no block yet: it is not remembered, and asked again by a later run.
import type { BlockTime, BlockTimes, ExtractContext, Partition, StreamConfig, StreamDecl } from '../decl/stream.js';
import type { StateStore } from '../state/store.js';
import type { Resolved } from '../state/block_times.js';
import { isoSeconds } from '../state/cursor.js';
import { RunError } from '../errors.js';
import { firstBlockAt, type Found } from './block_search.js';

/** How a block-ranged stream is windowed (StreamDecl.blockCursor). */
export type BlockCursor = NonNullable<StreamDecl['blockCursor']>;

/** The blocks that bound a window, and what the run says of a time after the chain's head. */
export interface WindowBlocks {
  startBlock?: number;
  endBlock?: number;
  note?: string;
  /** The start is after the chain's head: nothing to fetch yet. */
  notYet?: boolean;
}

/** One chain's resolutions for a lake's writer: those the lake remembers, and the searches under way. */
class ChainTimes {
  private known?: Resolved[];
  private readonly searches = new Map<number, Promise<Found>>();
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: StateStore,
    private readonly chain: string,
  ) {}

  remembered(): Resolved[] {
    return (this.known ??= this.store.blockTimes(this.chain));
  }

  resolve(time: number, times: BlockTimes, x: ExtractContext): Promise<Found> {
    const hit = this.remembered().find((r) => r.time === time);
    if (hit) return Promise.resolve({ block: hit.block });
    let search = this.searches.get(time);
    if (!search) {
      search = this.search(time, times, x);
      // Shared while under way; then a block found is remembered, and a time after the head (or a
      // failed search) is asked again by the next partition, against the head its run pinned.
      const settled = () => this.searches.delete(time);
      search.then(settled, settled);
      this.searches.set(time, search);
    }
    return search;
  }

  private async search(time: number, times: BlockTimes, x: ExtractContext): Promise<Found> {
    const head = await times.head(x);
    const timeOf = async (n: number) => {
      const b = await times.block(x, n);
      if (b.number !== n) throw new RunError(`asked for block ${n} of chain ${this.chain}, the service answered block ${b.number}`);
      return b.timestamp;
    };
    const found = await firstBlockAt(time, head, timeOf, this.remembered());
    if ('block' in found) {
      this.known = [...this.remembered(), { time, block: found.block }];
      // One write at a time, each of everything resolved so far.
      this.saving = this.saving.catch(() => undefined).then(() => this.store.saveBlockTimes(this.chain, this.known!));
      await this.saving;
    }
    return found;
  }
}

const byStore = new WeakMap<StateStore, Map<string, ChainTimes>>();

function chainTimes(store: StateStore, chain: string): ChainTimes {
  let byChain = byStore.get(store);
  if (!byChain) byStore.set(store, (byChain = new Map()));
  let c = byChain.get(chain);
  if (!c) byChain.set(chain, (c = new ChainTimes(store, chain)));
  return c;
}

/** A time and what it is in words: `endTimestamp 2025-11-01T00:00:00Z`. */
const named = (key: string, t: number) => `${key} ${isoSeconds(t)}`;

/** The window's block keys as the pipeline gives them. */
export function givenBlocks(bc: BlockCursor, cfg: StreamConfig): WindowBlocks {
  return { startBlock: cfg[bc.startOption] as number | undefined, endBlock: cfg[bc.endOption] as number | undefined };
}

/**
 * Why a run refuses a partition whose configured start (`start`, the block its start key gives)
 * lies below the range it has fetched (from `from`): said alike by the run and its dry run.
 */
export function startBelowReason(bc: BlockCursor, cfg: StreamConfig, table: string, start: number, from: number): string {
  const time = bc.times && cfg[bc.times.startOption] !== undefined ? ` (${named(bc.times.startOption, cfg[bc.times.startOption] as number)})` : '';
  const key = time ? '' : ` ${cfg[bc.startOption] === undefined ? '(none: genesis)' : `${bc.startOption} ${start}`}`;
  return `its configured start${key}${time} is block ${start}, below block ${from} where the blocks this lake fetched of it begin: a run resumes at its cursor and would fetch nothing below block ${from}, so nothing is fetched; run with \`--full-refresh ${table}\` to fetch it from the new start, or set the start back to block ${from} or later`;
}

/** Whether a time key bounds the window: its blocks are then found (windowBlocks). */
export function timeBounded(bc: BlockCursor, cfg: StreamConfig): boolean {
  return bc.times !== undefined && (cfg[bc.times.startOption] !== undefined || cfg[bc.times.endOption] !== undefined);
}

/**
 * The blocks that bound a partition's window: its block keys as given, or the blocks its time keys
 * resolve to (the start's first, so that it bounds the end's search). `x` makes the requests.
 */
export async function windowBlocks(store: StateStore, x: ExtractContext, bc: BlockCursor, cfg: StreamConfig, partition: Partition): Promise<WindowBlocks> {
  const out = givenBlocks(bc, cfg);
  const times = bc.times;
  if (!times || !timeBounded(bc, cfg)) return out;
  const start = cfg[times.startOption] as number | undefined;
  const end = cfg[times.endOption] as number | undefined;
  const chain = chainTimes(store, times.chain(partition));
  const head = (h: BlockTime) => `the chain's head (block ${h.number} at ${isoSeconds(h.timestamp)})`;
  if (start !== undefined) {
    const s = await chain.resolve(start, times, x);
    if ('afterHead' in s) return { notYet: true, note: `${named(times.startOption, start)} is after ${head(s.afterHead)}: nothing to fetch yet` };
    out.startBlock = s.block;
  }
  if (end !== undefined) {
    const e = await chain.resolve(end, times, x);
    if ('afterHead' in e) out.note = `${named(times.endOption, end)} is after ${head(e.afterHead)}: fetched to the head; a later run goes on`;
    else out.endBlock = e.block;
  }
  return out;
}

/** A time key's block as the lake remembers it, for a dry run (which asks nothing); undefined when not known yet. */
export function rememberedBlock(store: StateStore, chain: string, time: number): number | undefined {
  return store.blockTimes(chain).find((r) => r.time === time)?.block;
}
