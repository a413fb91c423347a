import type { StreamDecl } from '../decl/stream.js';
import { XCHAIN_TX_STREAM, XC_UTXO_COLUMNS, XC_UTXO_KNOWN, parentTx } from './primary_xc_reads.js';

export const xchainInputs: StreamDecl = {
  table: 'xchain_inputs',
  doc: 'UTXOs consumed by X-Chain transactions (imported ones included), from the same listing as xchain_transactions',
  ...XCHAIN_TX_STREAM,
  explode: 'consumedUtxos',
  key: ['network', 'tx_hash', 'utxo_id'],
  keyDoc: 'a transaction consumes a UTXO once',
  knownFields: XC_UTXO_KNOWN,
  columns: [...parentTx('xchain_transactions'), ...XC_UTXO_COLUMNS],
};
