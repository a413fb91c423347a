// The X-Chain UTXOs of addresses (getUtxosByAddresses on x-chain), one snapshot a run, as
// platform_utxos has the P-Chain's: the listing is paged and every item stamped with the time its
// first page was asked. The X-Chain answers the Utxo shape (that of xchain_outputs), not the
// P-Chain's, so this is its own declaration over the same partitions. The C-Chain (c-chain) answers
// the same shape for the UTXOs in its atomic memory (what other chains exported to it), so one
// declaration over the chain serves both.
import type { StreamConfig, StreamDecl } from '../decl/stream.js';
import { isBlockchainId } from '../ids.js';
import { NETWORK_COLUMN } from './common.js';
import { addressPartitions } from './platform_balances.js';
import { XC_UTXO_COLUMNS, XC_UTXO_KNOWN } from './primary_xc_reads.js';
import { UTXO_LISTING_OPTIONS, UTXO_SNAPSHOT } from './platform_utxos.js';
import { SNAPSHOT_AT } from './validators.js';

const FILTERS = ['assetId', 'includeSpent', 'sortBy', 'sortOrder'] as const;

interface UtxoChain {
  blockchainId: 'x-chain' | 'c-chain';
  table: string;
  doc: string;
  addresses: string;
}

/** The UTXOs of one chain in the Utxo shape: the X-Chain's, or the C-Chain's in atomic memory. */
function utxoStream(c: UtxoChain): StreamDecl {
  return {
    table: c.table,
    doc: c.doc,
    ...UTXO_SNAPSHOT,
    options: {
      network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
      addresses: { kind: 'primary_address[]', required: true, doc: `owners (${c.addresses}) whose UTXOs to snapshot; one partition each` },
      assetId: { kind: 'string', doc: 'only UTXOs of this asset (cb58)' },
      ...UTXO_LISTING_OPTIONS,
    },
    check: (s: StreamConfig) => (s.assetId !== undefined && !isBlockchainId(s.assetId) ? [['assetId', `${JSON.stringify(s.assetId)} is not an asset id (cb58 of 32 bytes)`]] : []),
    partitions: (s) => addressPartitions(s, Object.fromEntries(FILTERS.filter((k) => s[k] !== undefined).map((k) => [k, String(s[k])])), c.blockchainId),
    // A locktime is a uint64 JSON number: parsed keeping its digits.
    exactNumbers: ['locktime'],
    knownFields: XC_UTXO_KNOWN,
    columns: [
      NETWORK_COLUMN,
      SNAPSHOT_AT,
      { name: 'address', type: 'varchar', partition: 'address', doc: 'the listed owner, as given in the pipeline' },
      { name: 'utxo_id', type: 'varchar', from: 'utxoId', required: true, doc: 'UTXO id (cb58)' },
      ...XC_UTXO_COLUMNS,
      {
        name: 'spent', type: 'boolean',
        derive: (u) => u.consumingTxHash !== undefined || u.consumingTxTimestamp !== undefined,
        doc: 'spent at the snapshot (listed with includeSpent only): it has a consuming transaction or time',
      },
    ],
  };
}

export const xchainUtxos = utxoStream({
  blockchainId: 'x-chain',
  table: 'xchain_utxos',
  doc: 'snapshots of the UTXOs of addresses on the X-Chain (unspent, or spent too), amounts exact in each asset\'s smallest unit, one row per UTXO and address per run',
  addresses: 'X-avax1..., or avax1...',
});

// issue 40, the C-Chain's side of the primary network
export const cchainUtxos = utxoStream({
  blockchainId: 'c-chain',
  table: 'cchain_utxos',
  doc: 'snapshots of the UTXOs of addresses in the C-Chain\'s atomic memory (exported to it, not yet imported; or imported too), amounts exact, one row per UTXO and address per run',
  addresses: 'bech32 avax1..., or P-/X-avax1...: the owners atomic transactions name',
});
