import type { StreamDecl } from '../decl/stream.js';
import { TX_PLACE, XVM_STREAM, outputRows, xvmPages } from './xvm_reads.js';

export const xvmOutputs: StreamDecl = {
  table: 'xvm_outputs',
  doc: 'outputs (exported ones included) of asset-chain (xvm) transactions by block height range, from the same blocks as xvm_blocks',
  ...XVM_STREAM,
  items: 'outputs',
  extract: xvmPages(outputRows),
  key: ['blockchain_id', 'tx_id', 'output_index'],
  knownFields: [...XVM_STREAM.knownFields, '_otherChain'],
  columns: [
    ...TX_PLACE,
    { name: 'output_index', type: 'bigint', from: '_index', required: true, doc: 'output index: position among the outputs, then the exported outputs' },
    { name: 'exported', type: 'boolean', from: 'exported', required: true, doc: 'an exported output (exportedOutputs of an export)' },
    { name: 'destination_chain', type: 'varchar', derive: (o) => (o.exported ? o._otherChain : undefined), doc: 'exported outputs: the chain they go to' },
    { name: 'asset_id', type: 'varchar', from: 'assetID', required: true, doc: 'asset' },
    { name: 'fx_id', type: 'varchar', from: 'fxID', doc: 'feature extension' },
    { name: 'amount', type: 'amount', from: 'output.amount', doc: 'amount (uint64, the asset\'s smallest unit)' },
    { name: 'locktime', type: 'ubigint', from: 'output.locktime', doc: 'Unix time before which it cannot be spent' },
    { name: 'threshold', type: 'integer', from: 'output.threshold', doc: 'signatures of the addresses needed to spend it' },
    { name: 'addresses', type: 'varchar[]', from: 'output.addresses', doc: 'owners' },
  ],
};
