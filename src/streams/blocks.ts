import type { Page } from '../decl/request.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { CHAIN_ID_COLUMN } from './common.js';
import { BLOCK_WINDOW_STREAM, blockWindow, getBlock, windowPages } from './chain_reads.js';

/** One GET per block, a few in flight, yielded in block order; `next` is the next block number. */
async function* blockPages(x: ExtractContext): AsyncGenerator<Page> {
  const chainId = x.partition.path.chainId!;
  yield* windowPages(x, await blockWindow(x, chainId), (n) => getBlock(x, chainId, n));
}

export const blocks: StreamDecl = {
  table: 'blocks',
  doc: 'blocks of an EVM chain by block range, one request per block (the newest block, for the head, from `GET /v1/chains/{chainId}/blocks`)',
  ...BLOCK_WINDOW_STREAM,
  endpoint: '/v1/chains/{chainId}/blocks/{blockId}',
  items: 'blocks',
  extract: blockPages,
  weight: 10,
  // One block per request: the endpoint takes no page size.
  pageSize: { min: 0, max: 0, default: 0 },
  key: ['chain_id', 'block_number'],
  columns: [
    CHAIN_ID_COLUMN,
    { name: 'block_number', type: 'bigint', from: 'blockNumber', required: true, doc: 'block number' },
    { name: 'block_timestamp', type: 'timestamptz', from: 'blockTimestamp', required: true, doc: 'block time (UTC)' },
    { name: 'block_hash', type: 'varchar', from: 'blockHash', required: true, doc: 'block hash' },
    { name: 'parent_hash', type: 'varchar', from: 'parentHash', doc: 'hash of the parent block' },
    { name: 'tx_count', type: 'integer', from: 'txCount', required: true, doc: 'transactions in the block' },
    { name: 'cumulative_transactions', type: 'bigint', from: 'cumulativeTransactions', doc: 'transactions on the chain from genesis through this block' },
    { name: 'gas_used', type: 'bigint', from: 'gasUsed', doc: 'gas used by the transactions of the block' },
    { name: 'gas_limit', type: 'bigint', from: 'gasLimit', doc: 'gas limit of the block' },
    { name: 'base_fee', type: 'amount', from: 'baseFee', doc: 'base fee per gas, in wei' },
    { name: 'gas_cost', type: 'amount', from: 'gasCost', doc: 'block gas cost as sent (gasCost)' },
    { name: 'fees_spent', type: 'amount', from: 'feesSpent', units: 18, doc: 'fees paid (burned) by the transactions of the block, in wei' },
  ],
};
