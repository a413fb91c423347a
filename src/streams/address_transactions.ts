import type { Partition, StreamConfig, StreamDecl } from '../decl/stream.js';
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
