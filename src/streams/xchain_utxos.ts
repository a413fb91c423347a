// The X-Chain UTXOs of addresses (getUtxosByAddresses on x-chain), one snapshot a run, as
// platform_utxos has the P-Chain's: the listing is paged and every item stamped with the time its
// first page was asked. The X-Chain answers the Utxo shape (that of xchain_outputs), not the
// P-Chain's, so this is its own declaration over the same partitions.
import type { StreamConfig, StreamDecl } from '../decl/stream.js';
import { isBlockchainId } from '../ids.js';
import { NETWORK_COLUMN } from './common.js';
import { addressPartitions } from './platform_balances.js';
import { XC_UTXO_COLUMNS, XC_UTXO_KNOWN } from './primary_xc_reads.js';
import { UTXO_LISTING_OPTIONS, UTXO_SNAPSHOT } from './platform_utxos.js';
import { SNAPSHOT_AT } from './validators.js';

const FILTERS = ['assetId', 'includeSpent', 'sortBy', 'sortOrder'] as const;

export const xchainUtxos: StreamDecl = {
  table: 'xchain_utxos',
  doc: 'snapshots of the UTXOs of addresses on the X-Chain (unspent, or spent too), amounts exact in each asset\'s smallest unit, one row per UTXO and address per run',
  ...UTXO_SNAPSHOT,
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    addresses: { kind: 'primary_address[]', required: true, doc: 'owners (X-avax1..., or avax1...) whose UTXOs to snapshot; one partition each' },
    assetId: { kind: 'string', doc: 'only UTXOs of this asset (cb58)' },
    ...UTXO_LISTING_OPTIONS,
  },
  check: (s: StreamConfig) => (s.assetId !== undefined && !isBlockchainId(s.assetId) ? [['assetId', `${JSON.stringify(s.assetId)} is not an asset id (cb58 of 32 bytes)`]] : []),
  partitions: (s) => addressPartitions(s, Object.fromEntries(FILTERS.filter((k) => s[k] !== undefined).map((k) => [k, String(s[k])])), 'x-chain'),
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
