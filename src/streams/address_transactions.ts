import type { Column, Partition, StreamConfig, StreamDecl } from '../decl/stream.js';
import { BLOCK_RANGE_OPTIONS, blockRangeCheck, CHAIN_ID_COLUMN } from './common.js';
import { CHAIN_ID_OPTION, CHUNKED_BLOCK_CURSOR, CHUNKS_OPTION } from './chain_reads.js';
import { blockTransactions } from './block_transactions.js';

/** One partition per address of the pipeline entry, lowercased (its listing and its rows). */
export function addressPartitions(s: StreamConfig): Partition[] {
  const chainId = String(s.chainId);
  return (s.addresses as string[]).map((a) => {
    const address = a.toLowerCase();
    return { id: `${chainId}/${address}`, path: { chainId, address }, query: {}, values: { chainId, address } };
  });
}

/**
 * What the block-ranged listings of an address share (native transactions, token transfers): the
 * options, one partition per address, appended by block range, chunked below a pinned head.
 */
export const ADDRESS_LISTING = {
  service: 'data',
  weight: 20,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    chainId: CHAIN_ID_OPTION,
    addresses: { kind: 'evm_address[]', required: true, doc: 'addresses whose transactions to list; one partition each' },
    ...BLOCK_RANGE_OPTIONS,
    ...CHUNKS_OPTION,
  },
  check: blockRangeCheck,
  partitions: addressPartitions,
  refresh: 'append',
  blockCursor: CHUNKED_BLOCK_CURSOR,
  folder: { key: 'chain', partition: 'chainId' },
} satisfies Partial<StreamDecl>;

/** The address column: the partition's address, not the item's sender or receiver. */
export const ADDRESS_COLUMN = { name: 'address', type: 'evm_address', partition: 'address', doc: 'the listed address this row was fetched for, lowercased' } as const;

export const addressTransactions: StreamDecl = {
  ...ADDRESS_LISTING,
  table: 'address_transactions',
  doc: 'native transactions of addresses (sent or received), by block range',
  endpoint: '/v1/chains/{chainId}/addresses/{address}/transactions:listNative',
  items: 'transactions',
  key: ['chain_id', 'address', 'tx_hash'],
  keyDoc: 'a transaction is listed once for each listed address it was sent from or to',
  // The item's own chainId is the EVM chain id; chain_id keeps the pipeline's form.
  knownFields: ['chainId'],
  // An item is a NativeTransaction, as a block's transactions are: the same columns.
  columns: [
    CHAIN_ID_COLUMN,
    ADDRESS_COLUMN,
    ...blockTransactions.columns.filter((c) => c.name !== 'chain_id'),
  ],
};

/**
 * The full listing of an address's transactions (`GET .../addresses/{address}/transactions`): each
 * item a transaction (`nativeTransaction`) with the address's own token transfers and internal
 * transactions in it. Its tables land the nested lists, one row per element; the transaction
 * itself is what address_transactions lands from the native listing. The listing takes a
 * `sortOrder`, whose default is not published: chainlake asks for newest first, which its chunks
 * rely on (docs/services.md, Data service).
 */
export const TRANSACTION_DETAILS_LISTING = {
  ...ADDRESS_LISTING,
  endpoint: '/v1/chains/{chainId}/addresses/{address}/transactions',
  items: 'transactions',
  partitions: (s: StreamConfig): Partition[] => addressPartitions(s).map((p) => ({ ...p, query: { sortOrder: 'desc' } })),
} satisfies Partial<StreamDecl>;

/** Where an element of a transaction's nested lists finds its transaction (explode's parent). */
const PARENT_TX = '_parent.nativeTransaction';
const TX_FIELDS = ['blockNumber', 'blockTimestamp', 'blockHash', 'txHash'];

function withTransaction(item: Record<string, unknown>): Record<string, unknown> {
  const tx = ((item._parent as Record<string, unknown> | undefined)?.nativeTransaction ?? {}) as Record<string, unknown>;
  return { ...item, blockNumber: tx.blockNumber, blockTimestamp: tx.blockTimestamp, blockHash: tx.blockHash, txHash: tx.txHash };
}

/**
 * The columns of a listing of single items (transfers, internal transactions), for the same items
 * nested in their transaction: its block, time and hash are read from the transaction, and a derived
 * column sees the item as the single listing sends it, so that both tables derive the same values.
 */
export function nestedColumns(columns: readonly Column[]): Column[] {
  return columns.map((c): Column => {
    if (typeof c.from === 'string' && TX_FIELDS.includes(c.from)) return { ...c, from: `${PARENT_TX}.${c.from}` };
    const derive = c.derive;
    return derive ? { ...c, derive: (item, ctx) => derive(withTransaction(item), ctx) } : c;
  });
}
