import type { StreamDecl } from '../decl/stream.js';
import { XCHAIN_TX_STREAM, XC_UTXO_COLUMNS, XC_UTXO_KNOWN, parentTx } from './primary_xc_reads.js';

export const xchainOutputs: StreamDecl = {
  table: 'xchain_outputs',
  doc: 'UTXOs emitted by X-Chain transactions (exported ones included), from the same listing as xchain_transactions',
  ...XCHAIN_TX_STREAM,
  explode: 'emittedUtxos',
  key: ['network', 'tx_hash', 'utxo_id'],
  keyDoc: 'a transaction emits a UTXO once',
  knownFields: XC_UTXO_KNOWN,
  columns: [...parentTx('xchain_transactions'), ...XC_UTXO_COLUMNS],
};
