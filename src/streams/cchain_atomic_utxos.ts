import type { StreamDecl } from '../decl/stream.js';
import { CCHAIN_ATOMIC_STREAM, XC_UTXO_COLUMNS, XC_UTXO_KNOWN, parentTx } from './primary_xc_reads.js';

type Item = Record<string, unknown>;

export const cchainAtomicUtxos: StreamDecl = {
  table: 'cchain_atomic_utxos',
  doc: 'UTXOs C-Chain atomic transactions take from (imports) or put into (exports) the shared memory, from the same listing as cchain_atomic_transactions',
  ...CCHAIN_ATOMIC_STREAM,
  explode: ['consumedUtxos', 'emittedUtxos'],
  key: ['network', 'tx_hash', 'utxo_id'],
  keyDoc: 'a transaction imports or exports a UTXO once',
  knownFields: XC_UTXO_KNOWN,
  columns: [
    ...parentTx('cchain_atomic_transactions'),
    {
      name: 'imported',
      type: 'boolean',
      derive: (u) => {
        const consumed = (u._parent as Item | undefined)?.consumedUtxos;
        return Array.isArray(consumed) && (consumed as Item[]).some((c) => c?.utxoId === u.utxoId);
      },
      doc: 'true: consumed by an ImportTx (from the source chain); false: emitted by an ExportTx (for the destination chain)',
    },
    ...XC_UTXO_COLUMNS,
  ],
};
