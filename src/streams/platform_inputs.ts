import type { StreamDecl } from '../decl/stream.js';
import { PARENT_TX, PLATFORM_TX_STREAM, UTXO_COLUMNS } from './platform_reads.js';

export const platformInputs: StreamDecl = {
  table: 'platform_inputs',
  doc: 'UTXOs consumed by platform-chain (P-Chain) transactions, from the same listing as platform_transactions',
  ...PLATFORM_TX_STREAM,
  explode: 'consumedUtxos',
  key: ['network', 'tx_hash', 'utxo_id'],
  keyDoc: 'a transaction consumes a UTXO once',
  // The consuming transaction, block and time again: those of the row's transaction.
  knownFields: ['asset', 'consumingTxHash', 'consumingBlockNumber', 'consumingBlockTimestamp'],
  columns: [
    ...PARENT_TX,
    { name: 'spent_tx_hash', type: 'varchar', from: 'txHash', required: true, doc: 'the transaction that created it' },
    { name: 'spent_output_index', type: 'bigint', from: 'outputIndex', required: true, doc: 'its index among that transaction\'s outputs' },
    { name: 'created_block_number', type: 'bigint', from: 'blockNumber', doc: 'height of the block that created it' },
    { name: 'created_block_timestamp', type: 'timestamptz', from: 'blockTimestamp', doc: 'time it was created (UTC)' },
    ...UTXO_COLUMNS,
  ],
};
