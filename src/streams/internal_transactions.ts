import { createHash } from 'node:crypto';
import type { StreamDecl } from '../decl/stream.js';
import { addressColumns, BLOCK_COLUMNS, BLOCK_RANGE_OPTIONS, blockRangeCheck } from './common.js';
import { CHUNKED_BLOCK_CURSOR, CHUNKS_OPTION } from './chain_reads.js';

const CONTENT = ['txHash', 'blockNumber', 'from.address', 'to.address', 'internalTxType', 'value', 'gasUsed', 'gasLimit', 'isReverted'];

function at(item: Record<string, unknown>, path: string): unknown {
  let v: unknown = item;
  for (const k of path.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return typeof v === 'string' && path.endsWith('address') ? v.toLowerCase() : v;
}

/**
 * The service gives internal transactions no id. The content hash is the same on every refetch;
 * `occurrence` (set by the transform, counting identical siblings in the same transaction in the
 * order served) separates calls that are identical in every field.
 */
export function internalTxId(item: Record<string, unknown>, occurrence: number): string {
  const h = createHash('sha256');
  for (const p of CONTENT) h.update(String(at(item, p) ?? '')).update('\x1f');
  h.update(String(occurrence));
  return h.digest('hex').slice(0, 32);
}

export const internalTransactions: StreamDecl = {
  table: 'internal_transactions',
  doc: 'internal transactions (CALL/CALLCODE with value, CREATE*) of addresses',
  service: 'data',
  endpoint: '/v1/chains/{chainId}/addresses/{address}/transactions:listInternals',
  items: 'transactions',
  weight: 20,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    chainId: { kind: 'evm_chain_id', required: true, doc: 'EVM chain id (43114) or blockchain id' },
    addresses: { kind: 'evm_address[]', required: true, doc: 'addresses whose internal transactions to list; one partition each' },
    ...BLOCK_RANGE_OPTIONS,
    ...CHUNKS_OPTION,
  },
  check: blockRangeCheck,
  partitions: (s) =>
    (s.addresses as string[]).map((a) => ({
      id: `${s.chainId}/${a.toLowerCase()}`,
      path: { chainId: String(s.chainId), address: a.toLowerCase() },
      query: {},
      values: { chainId: String(s.chainId), address: a.toLowerCase() },
    })),
  refresh: 'append',
  blockCursor: CHUNKED_BLOCK_CURSOR,
  key: ['chain_id', 'address', 'internal_tx_id'],
  keyDoc: 'internal_tx_id is a hash of the transaction hash, block, from, to, type, value, gas and revert flag, plus the occurrence among identical siblings',
  folder: { key: 'chain', partition: 'chainId' },
  columns: [
    { name: 'chain_id', type: 'varchar', partition: 'chainId', doc: 'chain id as given in the pipeline' },
    { name: 'address', type: 'evm_address', partition: 'address', doc: 'the listed address this row was fetched for' },
    { name: 'internal_tx_id', type: 'varchar', derive: (item, ctx) => internalTxId(item, ctx.seen(String(item.txHash), internalTxId(item, 0))), required: true, doc: 'derived stable id (see key)' },
    ...BLOCK_COLUMNS,
    ...addressColumns('from', 'from'),
    ...addressColumns('to', 'to'),
    { name: 'internal_tx_type', type: 'varchar', from: 'internalTxType', required: true, doc: 'CALL, CREATE, CREATE2, ... as sent' },
    { name: 'value', type: 'amount', from: 'value', required: true, units: 18, doc: 'value in wei' },
    { name: 'is_reverted', type: 'boolean', from: 'isReverted', required: true, doc: 'true if reverted' },
    { name: 'gas_used', type: 'bigint', from: 'gasUsed', required: true, doc: 'gas used' },
    { name: 'gas_limit', type: 'bigint', from: 'gasLimit', required: true, doc: 'gas limit' },
  ],
};
