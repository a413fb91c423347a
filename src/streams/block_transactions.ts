import type { Page } from '../decl/request.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { addressColumns, BLOCK_COLUMNS, CHAIN_ID_COLUMN } from './common.js';
import { BLOCK_WINDOW_STREAM, blockWindow, chainPath, inOrder, parseBlockToken } from './chain_reads.js';

/**
 * Each block's transactions are paged in block order. `next` is `<block>` (start that block) or
 * `<block>:<page token>` (continue inside it), so a resumed run picks up mid-block.
 */
async function* transactionPages(x: ExtractContext): AsyncGenerator<Page> {
  const chainId = x.partition.path.chainId!;
  const { start, end } = await blockWindow(x, chainId);
  const at = x.startToken === undefined ? { block: start } : parseBlockToken(x.startToken, 'block_transactions');
  if (at.block >= end) {
    yield { items: [] };
    return;
  }
  const query = { pageSize: x.query.pageSize! };
  const listing = (block: number, startToken?: string) =>
    x.paginate({ path: `${chainPath(chainId)}/blocks/${block}/transactions`, query, startToken });
  // The first page of each block is fetched ahead; the rest of a block when its turn comes.
  const firstPages = inOrder(end - at.block, async (i) => {
    const block = at.block + i;
    const pages = listing(block, i === 0 ? at.inner : undefined);
    return { block, pages, first: await pages.next() };
  });
  for await (const { block, pages, first } of firstPages) {
    for (let r = first; !r.done; r = await pages.next()) {
      const page = r.value;
      const next = page.next !== undefined ? `${block}:${page.next}` : block + 1 < end ? String(block + 1) : undefined;
      yield { ...page, next };
    }
  }
}

export const blockTransactions: StreamDecl = {
  table: 'block_transactions',
  doc: 'transactions of the blocks of a block range, in block order',
  ...BLOCK_WINDOW_STREAM,
  endpoint: '/v1/chains/{chainId}/blocks/{blockId}/transactions',
  items: 'transactions',
  extract: transactionPages,
  weight: 10,
  pageSize: {
    min: 1,
    max: 100,
    default: 100,
    note: 'the service also takes 0, its own default, whose meaning the reference leaves open: the whole block, or nothing; chainlake always sends an explicit size so that blocks page predictably',
  },
  key: ['chain_id', 'tx_hash'],
  columns: [
    CHAIN_ID_COLUMN,
    ...BLOCK_COLUMNS,
    { name: 'block_index', type: 'integer', from: 'blockIndex', required: true, doc: 'position of the transaction in its block (0-based)' },
    { name: 'tx_status', type: 'varchar', from: 'txStatus', required: true, doc: "'1' succeeded, '0' failed (text as sent)" },
    { name: 'tx_type', type: 'integer', from: 'txType', doc: 'transaction type (0 legacy, 1 access list, 2 EIP-1559, ...)' },
    ...addressColumns('from', 'from'),
    ...addressColumns('to', 'to', false),
    { name: 'value', type: 'amount', from: 'value', required: true, units: 18, doc: 'value sent, in wei' },
    { name: 'gas_limit', type: 'bigint', from: 'gasLimit', doc: 'gas limit of the transaction' },
    { name: 'gas_used', type: 'bigint', from: 'gasUsed', doc: 'gas used' },
    { name: 'gas_price', type: 'amount', from: 'gasPrice', doc: 'gas price, in wei' },
    { name: 'nonce', type: 'bigint', from: 'nonce', doc: "the sender's nonce" },
    { name: 'call_type', type: 'varchar', from: 'method.callType', doc: 'NATIVE_TRANSFER, CONTRACT_CALL or CONTRACT_CREATION' },
    { name: 'method_hash', type: 'varchar', from: 'method.methodHash', doc: '4-byte selector of a contract call (empty otherwise)' },
    { name: 'method_name', type: 'varchar', from: 'method.methodName', doc: "method signature when known; 'Native Transfer' or 'Contract Created' for those" },
  ],
};
