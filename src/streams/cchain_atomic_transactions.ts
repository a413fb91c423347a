import type { StreamDecl } from '../decl/stream.js';
import { utxoOwners } from './platform_reads.js';
import { CCHAIN_ATOMIC_STREAM, avaxIn, txColumns } from './primary_xc_reads.js';

type Item = Record<string, unknown>;

/** The EVM side of an atomic transaction: an export's inputs (accounts debited), an import's outputs (accounts credited). */
const evmSide = (t: Item): unknown => t.evmInputs ?? t.evmOutputs;

/** The accounts of the EVM side, lowercased, once each, sorted; a malformed list is given back for the row to be rejected. */
function evmAddresses(t: Item): unknown {
  const list = evmSide(t);
  if (!Array.isArray(list)) return list;
  const out = new Set<string>();
  for (const e of list as Item[]) {
    const a = e?.fromAddress ?? e?.toAddress;
    if (typeof a !== 'string') return a;
    out.add(a.toLowerCase());
  }
  return [...out].sort();
}

const count = (v: unknown) => (Array.isArray(v) ? v.length : undefined);

export const cchainAtomicTransactions: StreamDecl = {
  table: 'cchain_atomic_transactions',
  doc: 'atomic transactions of the C-Chain (imports into and exports out of its EVM accounts) by address, by time',
  ...CCHAIN_ATOMIC_STREAM,
  key: ['network', 'tx_hash'],
  keyDoc: 'network included, as fuji and testnet name the same network',
  knownFields: ['consumedUtxos', 'emittedUtxos', 'amountUnlocked', 'amountCreated', 'evmInputs', 'evmOutputs'],
  columns: [
    ...txColumns('cchain_atomic_transactions'),
    { name: 'evm_addresses', type: 'varchar[]', derive: evmAddresses, doc: 'the C-Chain accounts it debits (ExportTx) or credits (ImportTx), lowercased' },
    {
      name: 'evm_avax',
      type: 'amount',
      derive: (t) => {
        const side = evmSide(t);
        return Array.isArray(side) ? avaxIn((side as Item[]).map((e) => e?.asset), 'evm asset') : side;
      },
      doc: 'nAVAX those accounts are debited or credited (9 decimals, not the EVM\'s 18)',
    },
    { name: 'evm_transfers', type: 'json', derive: evmSide, doc: 'the EVM side whole: evmInputs ({fromAddress, asset, credentials}) or evmOutputs ({toAddress, asset})' },
    { name: 'addresses', type: 'varchar[]', derive: utxoOwners, doc: 'owners of the UTXOs it imports or exports, once each, sorted (bech32 as sent)' },
    { name: 'utxo_count', type: 'integer', derive: (t) => count(t.consumedUtxos ?? t.emittedUtxos), doc: 'UTXOs it imports or exports (rows of cchain_atomic_utxos)' },
  ],
};
