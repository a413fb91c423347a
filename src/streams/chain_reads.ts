// Reads that the custom extractors of chain-level streams share: a chain's newest block, one block,
// the window of blocks a run covers, and fetching many things a few at a time while yielding them
// in order.
import { RunError } from '../errors.js';
import { onBehalf, type ClientPort, type Page } from '../decl/request.js';
import { BLOCK_CURSOR, BLOCK_RANGE_OPTIONS, BLOCK_TIME_OPTIONS, blockRangeCheck } from './common.js';
import { DEFAULT_CHUNKS, type BlockTime, type BlockTimes, type ExtractContext, type OptionSpec, type Partition, type StreamConfig, type StreamDecl } from '../decl/stream.js';

export const LATEST_BLOCKS = '/v1/chains/{chainId}/blocks';
export const ONE_BLOCK = '/v1/chains/{chainId}/blocks/{blockId}';

export function chainPath(chainId: string): string {
  return `/v1/chains/${encodeURIComponent(chainId)}`;
}

/** One GET on behalf of a partition; `weight` is the CU of that endpoint (docs/services.md, Rate limits). */
export function getJson(x: ExtractContext, path: string, endpoint: string, query: Record<string, string> = {}, weight = x.weight): Promise<unknown> {
  return x.client.get(path, query, onBehalf(x, endpoint, weight));
}

/** Blocks and a block cost 10 CU (docs/services.md, Rate limits). */
export const BLOCK_CU = 10;

/** A block and its time (Unix seconds). */
export type BlockRef = BlockTime;

function blockRef(body: unknown, endpoint: string): BlockRef {
  const b = (body ?? {}) as Record<string, unknown>;
  const number = typeof b.blockNumber === 'string' && /^[0-9]+$/.test(b.blockNumber) ? Number(b.blockNumber) : NaN;
  if (!Number.isSafeInteger(number) || typeof b.blockTimestamp !== 'number') {
    throw new RunError(`${endpoint}: the answer is not a block (expected blockNumber as digits and blockTimestamp as a number)`);
  }
  return { number, timestamp: b.blockTimestamp };
}

/** The chain's newest block: the first of the latest-blocks listing, which is newest first. */
export async function latestBlock(x: ExtractContext, chainId: string): Promise<BlockRef> {
  const body = await getJson(x, `${chainPath(chainId)}/blocks`, LATEST_BLOCKS, { pageSize: '1' }, BLOCK_CU);
  const blocks = (body as Record<string, unknown> | null)?.blocks;
  if (!Array.isArray(blocks) || blocks.length === 0) throw new RunError(`${LATEST_BLOCKS}: the answer lists no block`);
  return blockRef(blocks[0], LATEST_BLOCKS);
}

/** Heads pinned by each client (one a run per service), by chain: the partitions of a chain share one. */
const heads = new WeakMap<ClientPort, Map<string, Promise<BlockRef>>>();

/** A chain's head, asked once per client: every window of a run on that chain ends at the same block. */
function pinnedHead(x: ExtractContext, chainId = x.partition.path.chainId!): Promise<BlockRef> {
  let byChain = heads.get(x.client);
  if (!byChain) heads.set(x.client, (byChain = new Map()));
  let head = byChain.get(chainId);
  if (!head) {
    head = latestBlock(x, chainId);
    head.catch(() => byChain.delete(chainId)); // a failed ask is asked again by the next partition
    byChain.set(chainId, head);
  }
  return head;
}

/** The time keys of a data-service table, resolved through the chain's blocks (StreamDecl.blockCursor.times). */
const CHAIN_BLOCK_TIMES: BlockTimes = {
  startOption: 'startTimestamp',
  endOption: 'endTimestamp',
  chain: (p) => p.path.chainId!,
  head: (x) => pinnedHead(x),
  block: (x, n) => blockAt(x, x.partition.path.chainId!, n),
};

/** A block-ranged listing of a chain's data service, fetched in chunks below the head (StreamDecl.blockCursor.head), bounded by blocks or times. */
export const CHUNKED_BLOCK_CURSOR = { ...BLOCK_CURSOR, head: async (x: ExtractContext) => (await pinnedHead(x)).number, times: CHAIN_BLOCK_TIMES };

/** The option of a chunked listing. */
export const CHUNKS_OPTION: Record<string, OptionSpec> = {
  chunks: { kind: 'int', min: 1, doc: `block ranges of a window fetched at once, at most (default ${DEFAULT_CHUNKS}; 1: one listing, page after page)` },
};

export function getBlock(x: ExtractContext, chainId: string, n: number): Promise<unknown> {
  return getJson(x, `${chainPath(chainId)}/blocks/${n}`, ONE_BLOCK, {}, BLOCK_CU);
}

export async function blockAt(x: ExtractContext, chainId: string, n: number): Promise<BlockRef> {
  return blockRef(await getBlock(x, chainId, n), ONE_BLOCK);
}

/**
 * [start, end) of the run's window: from the window's startBlock to its endBlock, or to the head
 * when it has none (pinned now, so a head moving during the run does not stretch the window).
 */
export async function blockWindow(x: ExtractContext, chainId: string): Promise<{ start: number; end: number }> {
  return windowUpTo(x, (await pinnedHead(x, chainId)).number, chainId);
}

/** [start, end) of the run's window on a chain whose newest block is `head`. */
export function windowUpTo(x: ExtractContext, head: number, chain: string): { start: number; end: number } {
  const start = Number(x.query.startBlock ?? 0);
  const end = x.query.endBlock === undefined ? undefined : Number(x.query.endBlock);
  // Finishing a window marks every block below its end as done, so a window may not reach past the head.
  if (end !== undefined && end > head + 1) {
    throw new RunError(`endBlock ${end} is above the latest block ${head} of chain ${chain}: those blocks do not exist yet (leave endBlock out to follow the head)`);
  }
  return { start, end: end ?? head + 1 };
}

/** Blocks per yielded page: a checkpoint can land every this many blocks. */
const BLOCKS_PER_PAGE = 20;

/**
 * The blocks of a window, a few fetched at a time, yielded in block order as the rows `rowsOf`
 * makes of each; `next` is the next block number, so a checkpoint resumes at a block boundary.
 */
export async function* windowPages(
  x: ExtractContext,
  window: { start: number; end: number },
  fetch: (n: number) => Promise<unknown>,
  rowsOf: (block: unknown, n: number) => unknown[] = (block) => [block],
): AsyncGenerator<Page> {
  const { end } = window;
  const first = x.startToken === undefined ? window.start : parseBlockToken(x.startToken, x.config.table).block;
  if (first >= end) {
    // Nothing new: an empty last page still closes the window, so the run is recorded.
    yield { items: [] };
    return;
  }
  let items: unknown[] = [];
  let n = first;
  for await (const block of inOrder(end - first, (i) => fetch(first + i))) {
    items.push(...rowsOf(block, n));
    n++;
    if ((n - first) % BLOCKS_PER_PAGE === 0 || n === end) {
      yield { items, next: n < end ? String(n) : undefined };
      items = [];
    }
  }
}

/** Runs fetch(0), fetch(1), ... up to `ahead` at a time, and yields the results in index order. */
export async function* inOrder<T>(count: number, fetch: (i: number) => Promise<T>, ahead = 8): AsyncGenerator<T> {
  const pending: Array<Promise<T>> = [];
  let next = 0;
  const launch = () => {
    const p = fetch(next++);
    // A failure waits for its turn to be thrown; until then it must not count as unhandled.
    p.catch(() => undefined);
    pending.push(p);
  };
  while (next < count && pending.length < ahead) launch();
  while (pending.length) {
    const value = await pending.shift()!;
    if (next < count) launch();
    yield value;
  }
}

export const CHAIN_ID_OPTION: OptionSpec = { kind: 'evm_chain_id', required: true, doc: 'EVM chain id (43114) or blockchain id' };

/** Every block is at least one request, so where to begin is asked for rather than genesis assumed. */
export const BLOCK_WINDOW_OPTIONS: Record<string, OptionSpec> = {
  chainId: CHAIN_ID_OPTION,
  startBlock: { kind: 'int', min: 0, doc: 'first block (inclusive), required unless startTimestamp is given; later runs start from the high-water mark' },
  endBlock: BLOCK_RANGE_OPTIONS.endBlock!,
  ...BLOCK_TIME_OPTIONS,
};

/** A block window's bounds (blockRangeCheck), and where it begins, asked for. */
function blockWindowCheck(s: StreamConfig): Array<[string, string]> {
  const out = blockRangeCheck(s);
  if (s.startBlock === undefined && s.startTimestamp === undefined) out.unshift(['startBlock', `is required for ${s.table} (or startTimestamp)`]);
  return out;
}

/** One partition per chain. */
export function chainPartition(s: StreamConfig): Partition[] {
  const chainId = String(s.chainId);
  return [{ id: chainId, path: { chainId }, query: {}, values: { chainId } }];
}

/** What the streams over a chain's blocks (blocks, block transactions) share. */
export const BLOCK_WINDOW_STREAM = {
  service: 'data',
  options: BLOCK_WINDOW_OPTIONS,
  check: blockWindowCheck,
  partitions: chainPartition,
  refresh: 'append',
  blockCursor: { ...CHUNKED_BLOCK_CURSOR, perBlock: true },
  // The item's own chainId is the EVM chain id; chain_id keeps the pipeline's form.
  knownFields: ['chainId'],
  folder: { key: 'chain', partition: 'chainId' },
} satisfies Partial<StreamDecl>;

/** The block number in a checkpoint token (`<block>` or `<block>:<page token>`), and the rest. */
export function parseBlockToken(token: string, table: string): { block: number; inner?: string } {
  const i = token.indexOf(':');
  const head = i < 0 ? token : token.slice(0, i);
  if (!/^[0-9]+$/.test(head) || !Number.isSafeInteger(Number(head))) {
    throw new RunError(`${table}: the checkpoint token ${JSON.stringify(token.slice(0, 40))} does not start with a block number; rerun with --full-refresh ${table}`);
  }
  return i < 0 ? { block: Number(head) } : { block: Number(head), inner: token.slice(i + 1) };
}

/** The block a balance snapshot is of, and when chainlake took it. */
export interface Snapshot {
  blockNumber: string;
  blockTimestamp: number;
  takenAt: number;
}

/**
 * Pins a snapshot to a concrete block: the one asked for, or the newest now. Every page of the
 * snapshot then asks for that block, and every row says which block it is of.
 */
export async function snapshotBlock(x: ExtractContext, chainId: string, blockNumber?: number): Promise<Snapshot> {
  const takenAt = Math.floor(Date.now() / 1000);
  const b = blockNumber === undefined ? await latestBlock(x, chainId) : await blockAt(x, chainId, blockNumber);
  return { blockNumber: String(b.number), blockTimestamp: b.timestamp, takenAt };
}

/** Items with the snapshot under `_snapshot` (read by the snapshot columns of the table). */
export function stamped(items: unknown[], s: object): unknown[] {
  return items.map((i) => (i !== null && typeof i === 'object' && !Array.isArray(i) ? { ...i, _snapshot: s } : i));
}
