// The X-Chain's transactions and the C-Chain's atomic transactions as the data service lists them:
// the P-Chain's listing (platform_reads.ts) with `blockchainId` x-chain or c-chain, which answers
// other shapes (docs/services.md, Data service, X- and C-Chain transactions). As there, each table
// is its own stream over the listing, one partition an address, resumed by time.
import type { Column, StreamConfig, StreamDecl } from '../decl/stream.js';
import { NETWORK_COLUMN } from './common.js';
import { AVAX_ASSET_IDS, chainTxPartitions, TX_TIME_CURSOR, TX_TIME_OPTIONS, txTypesCheck } from './platform_reads.js';

type Item = Record<string, unknown>;

/** txType of an X-Chain transaction (the OpenAPI's XChainTransactionType). */
export const X_TX_TYPES = ['BaseTx', 'CreateAssetTx', 'OperationTx', 'ImportTx', 'ExportTx', 'UNKNOWN'] as const;
/** txType of a C-Chain atomic transaction. */
export const C_TX_TYPES = ['ImportTx', 'ExportTx'] as const;

/**
 * The nAVAX among a list of asset amounts (`amountUnlocked`: [{assetId, amount, ...}]), summed
 * exactly; other assets are left to the list's JSON column. Undefined where the list holds no AVAX;
 * an amount that is not digits is given back as is, so that the row is rejected with it.
 */
export function avaxAmong(field: string): (t: Item) => unknown {
  return (t) => avaxIn(t[field], field);
}

/** The nAVAX among a list of asset amounts, as avaxAmong; `field` names the list in a reject's reason. */
export function avaxIn(list: unknown, field: string): unknown {
  if (!Array.isArray(list)) return list;
  let total: bigint | undefined;
  for (const e of list as Item[]) {
    if (e === null || typeof e !== 'object') return { [field]: e };
    if (!AVAX_ASSET_IDS.includes(e.assetId as string)) continue;
    if (typeof e.amount !== 'string' || !/^[0-9]+$/.test(e.amount)) return e.amount;
    total = (total ?? 0n) + BigInt(e.amount);
  }
  return total?.toString();
}

/** The assets a list of asset amounts names, once each, in order. */
export function assetIds(field: string): (t: Item) => unknown {
  return (t) => {
    const list = t[field];
    if (!Array.isArray(list)) return list;
    return [...new Set((list as Item[]).map((e) => e?.assetId))];
  };
}

/** uint64 JSON numbers of a UTXO: its locktime. */
const EXACT_KEYS: readonly string[] = ['locktime'];

const LISTING = {
  service: 'data',
  endpoint: '/v1/networks/{network}/blockchains/{blockchainId}/transactions',
  items: 'transactions',
  weight: 100,
  pageSize: { min: 1, max: 100, default: 100, note: 'a page may hold fewer: the service ends it once its transactions hold many UTXOs' },
  refresh: 'merge',
  // Two addresses' partitions list the same transaction.
  mergeScope: 'table',
  timeCursor: TX_TIME_CURSOR,
  exactNumbers: EXACT_KEYS,
} satisfies Partial<StreamDecl>;

/** What the X-Chain's three streams share. */
export const XCHAIN_TX_STREAM = {
  ...LISTING,
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    addresses: { kind: 'primary_address[]', required: true, doc: 'X-Chain addresses (X- or bare bech32) whose transactions to list; one partition each' },
    txTypes: { kind: 'string[]', doc: `only transactions of these types (${X_TX_TYPES.join(', ')})` },
    ...TX_TIME_OPTIONS,
  },
  check: (s: StreamConfig) => txTypesCheck(s, X_TX_TYPES, 'an X-Chain'),
  partitions: (s: StreamConfig) => chainTxPartitions(s, 'x-chain', [{ option: 'addresses', query: 'addresses', name: 'address' }]),
} satisfies Partial<StreamDecl>;

/** What the C-Chain's two atomic streams share. */
export const CCHAIN_ATOMIC_STREAM = {
  ...LISTING,
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    addresses: { kind: 'primary_address[]', doc: 'bech32 addresses (the X-/P-Chain side) whose atomic transactions to list; one partition each' },
    evmAddresses: { kind: 'evm_address[]', doc: 'C-Chain accounts (0x) whose atomic transactions to list; one partition each' },
    txTypes: { kind: 'string[]', doc: `only transactions of these types (${C_TX_TYPES.join(', ')})` },
    ...TX_TIME_OPTIONS,
  },
  check: (s: StreamConfig): Array<[string, string]> => {
    const out: Array<[string, string]> = [];
    // The service filters by type and time only within an address's transactions.
    if (!(s.addresses as unknown[] | undefined)?.length && !(s.evmAddresses as unknown[] | undefined)?.length) {
      out.push(['addresses', 'give addresses or evmAddresses (or both): the service lists atomic transactions by time only per address']);
    }
    return [...out, ...txTypesCheck(s, C_TX_TYPES, 'a C-Chain atomic')];
  },
  partitions: (s: StreamConfig) =>
    chainTxPartitions(s, 'c-chain', [
      { option: 'addresses', query: 'addresses', name: 'address' },
      { option: 'evmAddresses', query: 'addresses', name: 'address' },
    ]),
} satisfies Partial<StreamDecl>;

/** The columns of a transaction row that both chains' listings have. */
export function txColumns(table: string): Column[] {
  return [
    NETWORK_COLUMN,
    { name: 'tx_hash', type: 'varchar', from: 'txHash', required: true, doc: 'transaction id (cb58)' },
    { name: 'tx_type', type: 'varchar', from: 'txType', required: true, doc: 'its type, as sent' },
    { name: 'block_number', type: 'bigint', from: 'blockHeight', doc: 'height of its block' },
    { name: 'block_hash', type: 'varchar', from: 'blockHash', doc: 'its block' },
    { name: 'block_timestamp', type: 'timestamptz', from: 'timestamp', required: true, doc: `time it was accepted (UTC): its block's; the cursor of ${table}` },
    { name: 'memo', type: 'varchar', from: 'memo', doc: 'memo (hex; empty when none)' },
    { name: 'source_chain', type: 'varchar', from: 'sourceChain', doc: 'imports: the chain the funds come from' },
    { name: 'destination_chain', type: 'varchar', from: 'destinationChain', doc: 'exports: the chain the funds go to' },
    { name: 'avax_unlocked', type: 'amount', derive: avaxAmong('amountUnlocked'), units: 9, doc: 'nAVAX its inputs unlock' },
    { name: 'avax_created', type: 'amount', derive: avaxAmong('amountCreated'), units: 9, doc: 'nAVAX its outputs create (the difference with avax_unlocked is the fee)' },
    { name: 'asset_ids_unlocked', type: 'varchar[]', derive: assetIds('amountUnlocked'), doc: 'assets its inputs unlock, AVAX included' },
    { name: 'amount_unlocked', type: 'json', from: 'amountUnlocked', doc: 'per asset: {assetId, name, symbol, denomination, type, amount} (amount exact, as text)' },
    { name: 'amount_created', type: 'json', from: 'amountCreated', doc: 'per asset, as amount_unlocked' },
  ];
}

/** The transaction a UTXO row belongs to (its item, under `_parent.` after explode). */
export function parentTx(table: string): Column[] {
  return [
    NETWORK_COLUMN,
    { name: 'tx_hash', type: 'varchar', from: '_parent.txHash', required: true, doc: `the transaction (${table}.tx_hash)` },
    { name: 'tx_type', type: 'varchar', from: '_parent.txType', doc: 'its type' },
    { name: 'block_number', type: 'bigint', from: '_parent.blockHeight', doc: 'height of its block' },
    { name: 'block_timestamp', type: 'timestamptz', from: '_parent.timestamp', required: true, doc: 'time it was accepted (UTC)' },
    { name: 'utxo_id', type: 'varchar', from: 'utxoId', required: true, doc: 'UTXO id (cb58)' },
  ];
}

/**
 * A UTXO of the X- and C-Chain listings (the OpenAPI's Utxo, not the P-Chain's): `creationTxHash`
 * and `outputIndex` (a string) name the output, `timestamp` its creation. `asset` is read in part:
 * its type is in asset_type, its name left out.
 */
export const XC_UTXO_COLUMNS: Column[] = [
  { name: 'creation_tx_hash', type: 'varchar', from: 'creationTxHash', required: true, doc: 'the transaction that created it' },
  { name: 'output_index', type: 'bigint', from: 'outputIndex', required: true, doc: 'its index among that transaction\'s outputs (sent as text)' },
  { name: 'amount', type: 'amount', from: 'asset.amount', required: true, units: 'asset_denomination', doc: 'amount in the asset\'s smallest unit (uint64)' },
  { name: 'asset_id', type: 'varchar', from: 'asset.assetId', required: true, doc: 'asset' },
  { name: 'asset_symbol', type: 'varchar', from: 'asset.symbol', doc: 'asset symbol' },
  { name: 'asset_denomination', type: 'integer', from: 'asset.denomination', doc: 'decimals of the asset' },
  { name: 'asset_type', type: 'varchar', from: 'asset.type', doc: 'secp256k1 or nft' },
  { name: 'addresses', type: 'varchar[]', from: 'addresses', required: true, doc: 'owners (bech32, as sent)' },
  { name: 'threshold', type: 'integer', from: 'threshold', doc: 'signatures of the owners needed to spend it' },
  { name: 'locktime', type: 'ubigint', from: 'locktime', doc: 'Unix time before which it cannot be spent (uint64)' },
  { name: 'utxo_type', type: 'varchar', from: 'utxoType', doc: 'type of output, as sent' },
  { name: 'created_timestamp', type: 'timestamptz', from: 'timestamp', doc: 'when it was created (UTC)' },
  { name: 'created_on_chain_id', type: 'varchar', from: 'createdOnChainId', doc: 'chain it was created on' },
  { name: 'consumed_on_chain_id', type: 'varchar', from: 'consumedOnChainId', doc: 'chain it is spent on (an export\'s outputs: the destination)' },
  { name: 'consuming_tx_hash', type: 'varchar', from: 'consumingTxHash', doc: 'the transaction that spent it, if spent when listed' },
  { name: 'consuming_tx_timestamp', type: 'timestamptz', from: 'consumingTxTimestamp', doc: 'when it was spent (UTC)' },
  { name: 'group_id', type: 'integer', from: 'groupId', doc: 'NFT mint outputs: the minting set' },
  { name: 'payload', type: 'varchar', from: 'payload', doc: 'NFT outputs: the payload (hex)' },
  { name: 'credentials', type: 'json', from: 'credentials', doc: 'inputs: the signatures and public keys that spent it' },
];

/** Fields of a UTXO read by no column: the asset's name (a property of asset_id), its bytes. */
export const XC_UTXO_KNOWN = ['asset.name', 'utxoBytes'];
