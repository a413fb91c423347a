import type { StreamDecl } from '../decl/stream.js';
import { TX_PLACE, XVM_STREAM, txRows, xvmPages } from './xvm_reads.js';

type Item = Record<string, unknown>;

const unsigned = (t: Item) => (t.unsignedTx ?? {}) as Item;
const count = (...lists: unknown[]) => lists.reduce((n: number, l) => n + (Array.isArray(l) ? l.length : 0), 0);

/** What the transaction does, from the fields its type adds to a base transaction. */
function txType(t: Item): string {
  const u = unsigned(t);
  if ('importedInputs' in u || 'sourceChain' in u) return 'import';
  if ('exportedOutputs' in u || 'destinationChain' in u) return 'export';
  if ('initialStates' in u) return 'create_asset';
  if ('operations' in u) return 'operation';
  return 'base';
}

export const xvmTransactions: StreamDecl = {
  table: 'xvm_transactions',
  doc: 'transactions of the asset chain (xvm) by block height range, from the same blocks as xvm_blocks',
  ...XVM_STREAM,
  blockCursor: { ...XVM_STREAM.blockCursor, time: 'block_time' },
  items: 'txs',
  extract: xvmPages(txRows),
  key: ['blockchain_id', 'tx_id'],
  knownFields: [...XVM_STREAM.knownFields, '_tx', '_index', 'id'],
  columns: [
    ...TX_PLACE,
    { name: 'block_time', type: 'timestamptz', from: '_block.time', required: true, doc: 'block time (UTC)' },
    { name: 'tx_index', type: 'integer', from: '_index', required: true, doc: 'position in the block' },
    { name: 'tx_type', type: 'varchar', derive: txType, doc: 'base, import, export, create_asset or operation (from the fields the transaction has)' },
    { name: 'network_id', type: 'integer', from: 'unsignedTx.networkID', doc: 'network id (1 mainnet, 5 the test network)' },
    { name: 'memo', type: 'varchar', from: 'unsignedTx.memo', doc: 'memo (hex)' },
    { name: 'source_chain', type: 'varchar', from: 'unsignedTx.sourceChain', doc: 'imports: the chain the inputs come from' },
    { name: 'destination_chain', type: 'varchar', from: 'unsignedTx.destinationChain', doc: 'exports: the chain the exported outputs go to' },
    { name: 'input_count', type: 'integer', derive: (t) => count(unsigned(t).inputs, unsigned(t).importedInputs), doc: 'inputs, imported ones included (rows of xvm_inputs)' },
    { name: 'output_count', type: 'integer', derive: (t) => count(unsigned(t).outputs, unsigned(t).exportedOutputs), doc: 'outputs, exported ones included (rows of xvm_outputs)' },
    { name: 'credential_count', type: 'integer', derive: (t) => count(t.credentials), doc: 'credentials (one per input it spends)' },
    { name: 'unsigned_tx', type: 'json', from: 'unsignedTx', required: true, doc: 'the unsigned transaction whole' },
    { name: 'credentials', type: 'json', from: 'credentials', doc: 'fxID and signatures (hex) per credential' },
  ],
};
