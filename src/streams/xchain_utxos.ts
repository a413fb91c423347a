// The X-Chain UTXOs of addresses (getUtxosByAddresses on x-chain), one snapshot a run, as
// platform_utxos has the P-Chain's: the listing is paged and every item stamped with the time its
// first page was asked. The X-Chain answers the Utxo shape (that of xchain_outputs), not the
// P-Chain's, so this is its own declaration over the same partitions.
import type { StreamConfig, StreamDecl } from '../decl/stream.js';
import { isBlockchainId } from '../ids.js';
import { NETWORK_COLUMN } from './common.js';
import { addressPartitions } from './platform_balances.js';
import { XC_UTXO_COLUMNS, XC_UTXO_KNOWN } from './primary_xc_reads.js';
import { SNAPSHOT_AT, snapshotListing } from './validators.js';

const FILTERS = ['assetId', 'includeSpent', 'sortBy', 'sortOrder'] as const;

export const xchainUtxos: StreamDecl = {
  table: 'xchain_utxos',
  doc: 'snapshots of the UTXOs of addresses on the X-Chain (unspent, or spent too), amounts exact in each asset\'s smallest unit, one row per UTXO and address per run',
  service: 'data',
  endpoint: '/v1/networks/{network}/blockchains/{blockchainId}/utxos',
  items: 'utxos',
  extract: (x) => snapshotListing(x),
  weight: 100,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    addresses: { kind: 'primary_address[]', required: true, doc: 'owners (X-avax1..., or avax1...) whose UTXOs to snapshot; one partition each' },
    includeSpent: { kind: 'boolean', doc: 'spent UTXOs too (default false), with what spent them' },
    assetId: { kind: 'string', doc: 'only UTXOs of this asset (cb58)' },
    sortBy: { kind: 'enum', values: ['timestamp', 'amount'], doc: 'order of the pages: by creation time (default) or amount; the rows are the same' },
    sortOrder: { kind: 'enum', values: ['asc', 'desc'], doc: 'order of the pages; the rows are the same' },
  },
  check: (s: StreamConfig) => (s.assetId !== undefined && !isBlockchainId(s.assetId) ? [['assetId', `${JSON.stringify(s.assetId)} is not an asset id (cb58 of 32 bytes)`]] : []),
  partitions: (s) => addressPartitions(s, Object.fromEntries(FILTERS.filter((k) => s[k] !== undefined).map((k) => [k, String(s[k])])), 'x-chain'),
  refresh: 'merge',
  // Entries whose filters overlap list the same UTXO: one row per snapshot and address whichever listed it.
  mergeScope: 'table',
  key: ['network', 'snapshot_at', 'address', 'utxo_id'],
  keyDoc: 'a row is one UTXO of one listed address in one snapshot: each run adds a snapshot (a run within the same second replaces it)',
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
