import type { StreamDecl } from '../decl/stream.js';
import { PARENT_TX, PLATFORM_TX_STREAM, UTXO_COLUMNS } from './platform_reads.js';

export const platformOutputs: StreamDecl = {
  table: 'platform_outputs',
  doc: 'UTXOs emitted by platform-chain (P-Chain) transactions, from the same listing as platform_transactions',
  ...PLATFORM_TX_STREAM,
  explode: 'emittedUtxos',
  key: ['network', 'tx_hash', 'utxo_id'],
  keyDoc: 'by UTXO id, not output index: a RewardValidatorTx emits the returned stake under the staking transaction\'s numbering',
  // The block and time it was created in again: those of the row's transaction.
  knownFields: ['asset', 'blockNumber', 'blockTimestamp'],
  columns: [
    ...PARENT_TX,
    { name: 'output_index', type: 'bigint', from: 'outputIndex', required: true, doc: 'index among the outputs of utxo_tx_hash' },
    { name: 'utxo_tx_hash', type: 'varchar', from: 'txHash', required: true, doc: 'the transaction that created it: tx_hash, but the staking transaction for a returned stake' },
    ...UTXO_COLUMNS,
    { name: 'consuming_tx_hash', type: 'varchar', from: 'consumingTxHash', doc: 'the transaction that spent it, if spent when listed' },
    { name: 'consuming_block_timestamp', type: 'timestamptz', from: 'consumingBlockTimestamp', doc: 'when it was spent (UTC)' },
  ],
};
