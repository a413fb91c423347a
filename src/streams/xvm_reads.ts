// The asset chain by height: getHeight pins the head, getBlockByHeight (encoding json) fetches
// each block. Blocks, transactions, inputs and outputs are each their own stream over the same
// range of blocks (a stream lands one table): each fetches the blocks and makes its rows of them,
// so a pipeline lists only the tables it wants and each resumes on its own. The methods' prefix is
// the node's: AvalancheGo registers the service as `avm`, the reference names it `xvm`
// (docs/services.md, Node JSON-RPC); the first call of a run finds which.
import type { AssetNamespace, ClientPort, Page } from '../decl/request.js';
import { RunError } from '../errors.js';
import { isMissingMethod } from '../sources/jsonrpc.js';
import { BLOCK_CURSOR, BLOCK_RANGE_OPTIONS, blockRangeCheck } from './common.js';
import { windowPages, windowUpTo } from './chain_reads.js';
import { blockchainIdOf, call, chainPartitions, fields } from './node_reads.js';
import type { Column, ExtractContext, StreamDecl } from '../decl/stream.js';

type Item = Record<string, unknown>;

export function xvmPath(chain: string): string {
  return `/ext/bc/${encodeURIComponent(chain)}`;
}

/** The namespace each node client of a run answers in, once a first call found it. */
const namespaces = new WeakMap<ClientPort, Promise<AssetNamespace>>();

/**
 * Calls `method` (getHeight, getUTXOs, ...) of the asset chain at `chain` in the node's namespace:
 * the pinned one, the one a first call found, or else this call finds it by asking `avm` first (a
 * node running AvalancheGo) and `xvm` when the node has no such service.
 */
export async function assetCall(x: ExtractContext, chain: string, method: string, params: unknown): Promise<unknown> {
  const path = xvmPath(chain);
  const pinned = x.client.assetNamespace;
  if (pinned) return call(x, path, `${pinned}.${method}`, params);
  // A first call that failed for another reason found nothing: this call asks again.
  const known = await namespaces.get(x.client)?.catch(() => undefined);
  if (known) return call(x, path, `${known}.${method}`, params);
  const first = call(x, path, `avm.${method}`, params).then(
    (result) => ({ ns: 'avm' as const, result }),
    async (err: unknown) => {
      if (!isMissingMethod(err)) throw err;
      const result = await call(x, path, `xvm.${method}`, params).catch((again: unknown) => {
        if (!isMissingMethod(again)) throw again;
        throw new RunError(
          `${path}: the node has neither avm.${method} nor xvm.${method} (${err.rpcMessage}; ${again.rpcMessage}): is ${chain} an asset chain? (sources.node.assetNamespace pins the namespace)`,
        );
      });
      return { ns: 'xvm' as const, result };
    },
  );
  const ns = first.then((f) => f.ns);
  ns.catch(() => undefined);
  namespaces.set(x.client, ns);
  return (await first).result;
}

function digits(v: unknown, what: string): number {
  const n = typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : typeof v === 'number' ? v : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new RunError(`${what}: ${JSON.stringify(v)} is not a height`);
  return n;
}

export async function xvmHeight(x: ExtractContext, chain: string): Promise<number> {
  return digits(fields(await assetCall(x, chain, 'getHeight', {}), 'getHeight').height, 'getHeight');
}

async function xvmBlock(x: ExtractContext, chain: string, height: number): Promise<Item> {
  const r = fields(await assetCall(x, chain, 'getBlockByHeight', { height: String(height), encoding: 'json' }), 'getBlockByHeight');
  return fields(r.block, `getBlockByHeight ${height}`);
}

/** The rows one table makes of a block; `block` is stamped with the chain's id under `_chain`. */
export type BlockRows = (block: Item) => unknown[];

/** An extractor of the window's blocks, each turned into rows by `rowsOf`. */
export function xvmPages(rowsOf: BlockRows): (x: ExtractContext) => AsyncGenerator<Page> {
  return async function* (x) {
    const chain = x.partition.path.chain!;
    const [id, head] = await Promise.all([blockchainIdOf(x, chain), xvmHeight(x, chain)]);
    yield* windowPages(x, windowUpTo(x, head, chain), (n) => xvmBlock(x, chain, n), (block) => rowsOf({ ...(block as Item), _chain: id }));
  };
}

/** What every xvm stream shares: the node source, blocks by height, one partition per chain. */
export const XVM_STREAM = {
  service: 'node',
  endpoint: '/ext/bc/{chain}',
  methods: ['avm.getHeight', 'avm.getBlockByHeight'],
  exactNumbers: true,
  weight: 1,
  // One block per request: the method takes no page size.
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    blockchainIds: { kind: 'blockchain_id[]', doc: 'asset chains: X (default) or the ids of chains running the same VM; one partition each' },
    startBlock: { kind: 'int', min: 0, required: true, doc: 'first height (inclusive); later runs start from the high-water mark' },
    endBlock: BLOCK_RANGE_OPTIONS.endBlock!,
  },
  check: blockRangeCheck,
  partitions: (s) => chainPartitions(s, ['X']),
  refresh: 'append',
  // Inputs and outputs carry no block time: only blocks and transactions are held to the clock.
  blockCursor: { ...BLOCK_CURSOR, column: 'block_height', time: undefined, perBlock: true, head: (x: ExtractContext) => xvmHeight(x, x.partition.path.chain!) },
  knownFields: ['_chain', '_block'],
} satisfies Partial<StreamDecl>;

export const CHAIN_COLUMN: Column = { name: 'blockchain_id', type: 'varchar', from: '_chain', required: true, doc: 'the asset chain (cb58; X is resolved with info.getBlockchainID)' };

/** Where a transaction's rows come from: its block, and its place in it. */
export const TX_PLACE: Column[] = [
  CHAIN_COLUMN,
  { name: 'block_height', type: 'bigint', from: '_block.height', required: true, doc: 'height of the block' },
  { name: 'tx_id', type: 'varchar', from: '_tx', required: true, doc: 'transaction id' },
];

function list(v: unknown): Item[] {
  return Array.isArray(v) ? (v as Item[]) : [];
}

/** The block fields a transaction's rows carry. */
function blockOf(b: Item): Item {
  return { height: b.height, id: b.id, time: b.time };
}

export function txRows(b: Item): unknown[] {
  return list(b.txs).map((tx, index) => ({ ...tx, _chain: b._chain, _block: blockOf(b), _tx: tx?.id, _index: index }));
}

/**
 * Inputs, then imported inputs, numbered in that order; outputs, then exported outputs, numbered
 * in that order too, which is the output index a later input names (an exported output's index
 * follows the outputs', as the chain numbers them).
 */
function legs(own: string, moved: string, flag: string): BlockRows {
  return (b) =>
    list(b.txs).flatMap((tx) => {
      const u = (tx?.unsignedTx ?? {}) as Item;
      return [...list(u[own]).map((l) => [l, false] as const), ...list(u[moved]).map((l) => [l, true] as const)].map(([l, m], index) => ({
        ...l,
        [flag]: m,
        _chain: b._chain,
        _block: blockOf(b),
        _tx: tx?.id,
        _index: index,
        _otherChain: m ? (u.sourceChain ?? u.destinationChain) : undefined,
      }));
    });
}

export const inputRows = legs('inputs', 'importedInputs', 'imported');
export const outputRows = legs('outputs', 'exportedOutputs', 'exported');
