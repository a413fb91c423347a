import type { StreamDecl } from '../decl/stream.js';
import { TX_PLACE, XVM_STREAM, inputRows, xvmPages } from './xvm_reads.js';

export const xvmInputs: StreamDecl = {
  table: 'xvm_inputs',
  doc: 'inputs (imported ones included) of asset-chain (xvm) transactions by block height range, from the same blocks as xvm_blocks',
  ...XVM_STREAM,
  items: 'inputs',
  extract: xvmPages(inputRows),
  key: ['blockchain_id', 'tx_id', 'input_index'],
  knownFields: [...XVM_STREAM.knownFields, '_otherChain'],
  columns: [
    ...TX_PLACE,
    { name: 'input_index', type: 'integer', from: '_index', required: true, doc: 'position among the inputs, then the imported inputs' },
    { name: 'imported', type: 'boolean', from: 'imported', required: true, doc: 'an imported input (importedInputs of an import)' },
    { name: 'source_chain', type: 'varchar', derive: (i) => (i.imported ? i._otherChain : undefined), doc: 'imported inputs: the chain they come from' },
    { name: 'spent_tx_id', type: 'varchar', from: 'txID', required: true, doc: 'transaction of the output it spends' },
    { name: 'spent_output_index', type: 'bigint', from: 'outputIndex', required: true, doc: 'index of that output (xvm_outputs.output_index)' },
    { name: 'asset_id', type: 'varchar', from: 'assetID', required: true, doc: 'asset' },
    { name: 'fx_id', type: 'varchar', from: 'fxID', doc: 'feature extension' },
    { name: 'amount', type: 'amount', from: 'input.amount', doc: 'amount (uint64, the asset\'s smallest unit)' },
    { name: 'signature_indices', type: 'json', from: 'input.signatureIndices', doc: 'which of the output\'s addresses sign' },
  ],
};
