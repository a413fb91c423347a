import type { StreamDecl } from '../decl/stream.js';
import { CHAIN_COLUMN, XVM_STREAM, xvmPages } from './xvm_reads.js';

export const xvmBlocks: StreamDecl = {
  table: 'xvm_blocks',
  doc: 'blocks of the asset chain (the avm, or xvm, namespace) by height range, one request per block (the head from getHeight)',
  ...XVM_STREAM,
  blockCursor: { ...XVM_STREAM.blockCursor, time: 'block_time' },
  items: 'block',
  extract: xvmPages((b) => [b]),
  key: ['blockchain_id', 'block_height'],
  knownFields: [...XVM_STREAM.knownFields, 'txs'],
  columns: [
    CHAIN_COLUMN,
    { name: 'block_height', type: 'bigint', from: 'height', required: true, doc: 'height' },
    { name: 'block_id', type: 'varchar', from: 'id', required: true, doc: 'block id (cb58)' },
    { name: 'parent_id', type: 'varchar', from: 'parentID', doc: 'id of the parent block' },
    { name: 'block_time', type: 'timestamptz', from: 'time', required: true, doc: 'block time (UTC)' },
    { name: 'merkle_root', type: 'varchar', from: 'merkleRoot', doc: 'merkle root' },
    { name: 'tx_count', type: 'integer', derive: (b) => (Array.isArray(b.txs) ? b.txs.length : undefined), required: true, doc: 'transactions in the block' },
    { name: 'tx_ids', type: 'varchar[]', derive: (b) => (Array.isArray(b.txs) ? b.txs.map((t) => (t as Record<string, unknown> | null)?.id) : undefined), doc: 'their ids, in block order' },
  ],
};
