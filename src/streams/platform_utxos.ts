// The P-Chain UTXOs of addresses (getUtxosByAddresses), one snapshot a run: the listing is paged
// and every item is stamped with the time its first page was asked. The order options change only
// the order of the pages, not the rows a snapshot holds.
import type { OptionSpec, StreamConfig, StreamDecl } from '../decl/stream.js';
import { isBlockchainId } from '../ids.js';
import { NETWORK_COLUMN } from './common.js';
import { addressPartitions } from './platform_balances.js';
import { UTXO_COLUMNS } from './platform_reads.js';
import { SNAPSHOT_AT, snapshotListing } from './validators.js';

/** The most nAVAX there is (720M AVAX): a larger minimum is a mistake. */
const MAX_NAVAX = 720_000_000_000_000_000n;

function check(s: StreamConfig): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (s.assetId !== undefined && !isBlockchainId(s.assetId)) out.push(['assetId', `${JSON.stringify(s.assetId)} is not an asset id (cb58 of 32 bytes)`]);
  const m = s.minUtxoAmount;
  if (m !== undefined && (typeof m !== 'string' || !/^[0-9]+$/.test(m) || BigInt(m) > MAX_NAVAX)) {
    out.push(['minUtxoAmount', `${JSON.stringify(m)} is not an amount in nAVAX from 0 to ${MAX_NAVAX} (decimal digits, quoted)`]);
  }
  return out;
}

const FILTERS = ['assetId', 'minUtxoAmount', 'includeSpent', 'sortBy', 'sortOrder'] as const;

/** What the P- and X-Chain's UTXO snapshots share: the listing, its paging, its order options and its key. */
export const UTXO_SNAPSHOT = {
  service: 'data',
  endpoint: '/v1/networks/{network}/blockchains/{blockchainId}/utxos',
  items: 'utxos',
  extract: (x) => snapshotListing(x),
  weight: 100,
  pageSize: { min: 1, max: 100, default: 100 },
  refresh: 'merge',
  // Entries whose filters overlap list the same UTXO: one row per snapshot and address whichever listed it.
  mergeScope: 'table',
  key: ['network', 'snapshot_at', 'address', 'utxo_id'],
  keyDoc: 'a row is one UTXO of one listed address in one snapshot: each run adds a snapshot (a run within the same second replaces it)',
} satisfies Partial<StreamDecl>;

/** Options of both: the listing's spent and order options. */
export const UTXO_LISTING_OPTIONS: Record<string, OptionSpec> = {
  includeSpent: { kind: 'boolean', doc: 'spent UTXOs too (default false), with what spent them' },
  sortBy: { kind: 'enum', values: ['timestamp', 'amount'], doc: 'order of the pages: by creation time (default) or amount; the rows are the same' },
  sortOrder: { kind: 'enum', values: ['asc', 'desc'], doc: 'order of the pages; the rows are the same' },
};

export const platformUtxos: StreamDecl = {
  table: 'platform_utxos',
  doc: 'snapshots of the UTXOs of addresses on the P-Chain (unspent, or spent too), amounts in nAVAX, locktimes and staking fields typed, one row per UTXO and address per run',
  ...UTXO_SNAPSHOT,
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    addresses: { kind: 'primary_address[]', required: true, doc: 'owners (P-avax1..., or avax1...) whose UTXOs to snapshot; one partition each' },
    minUtxoAmount: { kind: 'string', doc: 'nAVAX as quoted digits: only UTXOs of at least this amount' },
    assetId: { kind: 'string', doc: 'only UTXOs of this asset (cb58; the P-Chain holds AVAX only)' },
    ...UTXO_LISTING_OPTIONS,
  },
  check,
  partitions: (s) => addressPartitions(s, Object.fromEntries(FILTERS.filter((k) => s[k] !== undefined).map((k) => [k, String(s[k])]))),
  // Locktimes are uint64 JSON numbers: parsed keeping their digits.
  exactNumbers: ['platformLocktime', 'stakeableLocktime'],
  knownFields: ['asset'],
  columns: [
    NETWORK_COLUMN,
    SNAPSHOT_AT,
    { name: 'address', type: 'varchar', partition: 'address', doc: 'the listed owner, as given in the pipeline' },
    { name: 'utxo_id', type: 'varchar', from: 'utxoId', required: true, doc: 'UTXO id (cb58)' },
    { name: 'tx_hash', type: 'varchar', from: 'txHash', required: true, doc: 'the transaction that created it (for a returned stake, the staking transaction)' },
    { name: 'output_index', type: 'bigint', from: 'outputIndex', required: true, doc: 'its index among the outputs of tx_hash' },
    { name: 'block_number', type: 'bigint', from: 'blockNumber', required: true, doc: 'height of the block that created it' },
    { name: 'block_timestamp', type: 'timestamptz', from: 'blockTimestamp', required: true, doc: 'time of that block (UTC)' },
    ...UTXO_COLUMNS,
    {
      name: 'spent', type: 'boolean',
      derive: (u) => u.consumingTxHash !== undefined || u.consumingBlockTimestamp !== undefined,
      doc: 'spent at the snapshot (listed with includeSpent only): it has a consuming transaction or time',
    },
    { name: 'consuming_tx_hash', type: 'varchar', from: 'consumingTxHash', doc: 'the transaction that spent it' },
    { name: 'consuming_block_number', type: 'bigint', from: 'consumingBlockNumber', doc: 'height of the block that spent it' },
    { name: 'consuming_block_timestamp', type: 'timestamptz', from: 'consumingBlockTimestamp', doc: 'when it was spent (UTC)' },
    { name: 'utxo_bytes', type: 'varchar', from: 'utxoBytes', doc: 'the UTXO\'s bytes, where sent' },
  ],
};
