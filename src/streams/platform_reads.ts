// The platform chain (P-Chain) as the data service lists it: its transactions by address or by L1
// validation, and their consumed and emitted UTXOs. Transactions, inputs and outputs are each
// their own stream over the same listing (a stream lands one table): each pages it and makes its
// rows of it, so a pipeline lists only the tables it wants (each costs the listing's requests) and
// each resumes on its own, from the newest transaction time it has committed.
import { DEFAULT_CHUNKS, type Column, type OptionSpec, type Partition, type StreamConfig, type StreamDecl } from '../decl/stream.js';
import { NETWORK_COLUMN, timeRangeCheck, timeRangeQuery } from './common.js';

type Item = Record<string, unknown>;

/** txType of a platform-chain transaction, as the service names them (docs/services.md, Data service). */
export const PLATFORM_TX_TYPES = [
  'AddValidatorTx', 'AddSubnetValidatorTx', 'AddDelegatorTx', 'CreateChainTx', 'CreateSubnetTx', 'ImportTx', 'ExportTx', 'AdvanceTimeTx',
  'RewardValidatorTx', 'RemoveSubnetValidatorTx', 'TransformSubnetTx', 'AddPermissionlessValidatorTx', 'AddPermissionlessDelegatorTx', 'BaseTx',
  'TransferSubnetOwnershipTx', 'ConvertSubnetToL1Tx', 'RegisterL1ValidatorTx', 'SetL1ValidatorWeightTx', 'DisableL1ValidatorTx',
  'IncreaseL1ValidatorBalanceTx', 'UNKNOWN',
] as const;

/** AVAX on mainnet and on fuji/testnet: the only asset the platform chain holds. */
export const AVAX_ASSET_IDS: readonly string[] = ['FvwEAhmxKfeiG8SnEvq42hc6whRyY3EFYAvebMqDNDGCgxN5Z', 'U8iRqJoiJm8xZHAacmvYyZVwqQx6uDNtQeP3CQ6fcgQk3JqnK'];

/**
 * The nAVAX of a list of asset amounts (`amountBurned`: [{assetId, amount, ...}]), summed exactly;
 * undefined for an empty list. An entry of another asset, or an amount that is not digits, is
 * given back as is, so that the row is rejected with it in the reason rather than miscounted.
 */
export function avaxOf(field: string): (t: Item) => unknown {
  return (t) => {
    const list = t[field];
    if (!Array.isArray(list)) return list;
    if (list.length === 0) return undefined;
    let total = 0n;
    for (const e of list as Item[]) {
      if (e === null || typeof e !== 'object' || !AVAX_ASSET_IDS.includes(e.assetId as string)) return { [field]: e };
      if (typeof e.amount !== 'string' || !/^[0-9]+$/.test(e.amount)) return e.amount;
      total += BigInt(e.amount);
    }
    return total.toString();
  };
}

/**
 * JSON numbers that may pass 2^53: an L1 validator's weight and balances (uint64 nAVAX) and the
 * UTXOs' locktimes (uint64).
 */
const EXACT_KEYS: readonly string[] = ['weight', 'remainingBalance', 'balanceChange', 'platformLocktime', 'stakeableLocktime', 'locktime'];

/** The shortest time range a primary-network transactions listing is cut into (a backfill's ranges fetched at once). */
const TX_RANGE_SECONDS = 7 * 86_400;

/** The time range of a primary-network transactions stream's entry, and how many of its ranges are fetched at once. */
export const TX_TIME_OPTIONS: Record<string, OptionSpec> = {
  startTimestamp: { kind: 'unix_seconds', doc: 'transactions at or after it (inclusive; the first run; later runs start from the newest committed one)' },
  endTimestamp: { kind: 'unix_seconds', doc: 'transactions before it (exclusive): one at or after it is never committed' },
  chunks: {
    kind: 'int',
    min: 1,
    doc: `time ranges fetched at once, at most, when more than a week and more than a page are to be fetched (a backfill from startTimestamp): ranges of equal length, a week or more each (default ${DEFAULT_CHUNKS}; 1: one listing, page after page)`,
  },
};

/** Where a primary-network transactions listing resumes: its newest committed transaction; a long range is cut (TX_TIME_OPTIONS.chunks). */
export const TX_TIME_CURSOR: NonNullable<StreamDecl['timeCursor']> = { column: 'block_timestamp', start: 'startTimestamp', startOption: 'startTimestamp', end: 'endTimestamp', endOption: 'endTimestamp', span: TX_RANGE_SECONDS };

/** Each of the entry's txTypes is one of `types` (`what`: "a platform-chain" and the like), and its time range is one. */
export function txTypesCheck(s: StreamConfig, types: readonly string[], what: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  ((s.txTypes as string[] | undefined) ?? []).forEach((t, i) => {
    if (!types.includes(t)) out.push([`txTypes[${i}]`, `${JSON.stringify(t)} is not ${what} transaction type (${types.join(', ')})`]);
  });
  return [...out, ...timeRangeCheck(s)];
}

/**
 * The partitions of a primary-network transactions stream: one per id listed under each option,
 * sent under its query name (an address under `addresses`, an L1 validation under
 * `l1ValidationId`; `inPath`: in the path instead, an asset's id), with the entry's types and times.
 */
export function chainTxPartitions(
  s: StreamConfig, blockchainId: string, lists: ReadonlyArray<{ option: string; query: string; name: string; inPath?: true }>,
): Partition[] {
  const network = String(s.network);
  const types = (s.txTypes as string[] | undefined)?.slice().sort().join(',');
  const query: Record<string, string> = { ...(types ? { txTypes: types } : {}), ...timeRangeQuery(s) };
  const suffix = types ? `/txTypes=${types}` : '';
  return lists.flatMap(({ option, query: name, name: idName, inPath }) =>
    ((s[option] as string[] | undefined) ?? []).map((v): Partition => ({
      id: `${network}/${idName}=${v}${suffix}`,
      // An id the path names (an asset's listing) is a column of its rows too.
      path: inPath ? { network, blockchainId, [name]: v } : { network, blockchainId },
      query: inPath ? query : { [name]: v, ...query },
      values: inPath ? { network, [name]: v } : { network },
    })),
  );
}

/** One partition per address and per L1 validation, its id named by it (staking_transactions: per address). */
export const partitionsOf = (s: StreamConfig): Partition[] =>
  chainTxPartitions(s, 'p-chain', [
    { option: 'addresses', query: 'addresses', name: 'address' },
    { option: 'l1ValidationIds', query: 'l1ValidationId', name: 'l1ValidationId' },
  ]);

/**
 * The owners a transaction's UTXOs name, consumed and emitted, once each and sorted; a malformed
 * list is given back for the row to be rejected.
 */
export function utxoOwners(t: Item): unknown {
  const out = new Set<string>();
  for (const field of ['consumedUtxos', 'emittedUtxos']) {
    const list = t[field];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return list;
    for (const u of list as Item[]) {
      const a = u?.addresses;
      if (!Array.isArray(a) || !a.every((x) => typeof x === 'string')) return a;
      for (const x of a as string[]) out.add(x);
    }
  }
  return [...out].sort();
}

/** What the three streams of the listing share. */
export const PLATFORM_TX_STREAM = {
  service: 'data',
  endpoint: '/v1/networks/{network}/blockchains/{blockchainId}/transactions',
  items: 'transactions',
  weight: 100,
  pageSize: { min: 1, max: 100, default: 100, note: 'a page may hold fewer: the service ends it once its transactions hold many UTXOs' },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    addresses: { kind: 'primary_address[]', doc: 'P-Chain addresses whose transactions to list; one partition each' },
    l1ValidationIds: { kind: 'cb58_id[]', doc: 'L1 validation ids whose transactions to list; one partition each' },
    txTypes: { kind: 'string[]', doc: `only transactions of these types (${PLATFORM_TX_TYPES.join(', ')})` },
    ...TX_TIME_OPTIONS,
  },
  check: (s: StreamConfig): Array<[string, string]> => {
    const out: Array<[string, string]> = [];
    // The service filters by type and time only within an address's (or a validation's) transactions.
    if (!(s.addresses as unknown[] | undefined)?.length && !(s.l1ValidationIds as unknown[] | undefined)?.length) {
      out.push(['addresses', 'give addresses or l1ValidationIds (or both): the service lists the chain by time only per address or L1 validation']);
    }
    return [...out, ...txTypesCheck(s, PLATFORM_TX_TYPES, 'a platform-chain')];
  },
  partitions: partitionsOf,
  refresh: 'merge',
  // An address's partition and another's (or an L1 validation's) list the same transaction.
  mergeScope: 'table',
  timeCursor: TX_TIME_CURSOR,
  exactNumbers: EXACT_KEYS,
} satisfies Partial<StreamDecl>;

/** The transaction a UTXO row belongs to (its item, under `_parent.` after explode). */
export const PARENT_TX: Column[] = [
  NETWORK_COLUMN,
  { name: 'tx_hash', type: 'varchar', from: '_parent.txHash', required: true, doc: 'the transaction (platform_transactions.tx_hash)' },
  { name: 'tx_type', type: 'varchar', from: '_parent.txType', doc: 'its type' },
  { name: 'block_number', type: 'bigint', from: '_parent.blockNumber', doc: 'height of its block' },
  { name: 'block_timestamp', type: 'timestamptz', from: '_parent.blockTimestamp', required: true, doc: 'time of its block (UTC)' },
  { name: 'utxo_id', type: 'varchar', from: 'utxoId', required: true, doc: 'UTXO id (cb58)' },
];

/** A UTXO's own fields, consumed or emitted. `asset` is read whole: its name, decimals and type are AVAX's. */
export const UTXO_COLUMNS: Column[] = [
  // `amount` and `assetId` beside `asset` are deprecated copies.
  { name: 'amount', type: 'amount', from: ['asset.amount', 'amount'], required: true, units: 9, doc: 'amount in nAVAX' },
  { name: 'asset_id', type: 'varchar', from: ['asset.assetId', 'assetId'], required: true, doc: 'asset (AVAX)' },
  { name: 'asset_symbol', type: 'varchar', from: 'asset.symbol', doc: 'asset symbol' },
  { name: 'addresses', type: 'varchar[]', from: 'addresses', required: true, doc: 'owners (bech32, as sent)' },
  { name: 'threshold', type: 'integer', from: 'threshold', doc: 'signatures of the owners needed to spend it' },
  { name: 'utxo_type', type: 'varchar', from: 'utxoType', doc: 'STAKE or TRANSFER' },
  { name: 'staked', type: 'boolean', from: 'staked', doc: 'locked in a stake' },
  { name: 'platform_locktime', type: 'ubigint', from: 'platformLocktime', doc: 'Unix time before which it cannot be spent (uint64)' },
  { name: 'stakeable_locktime', type: 'ubigint', from: 'stakeableLocktime', doc: 'Unix time before which it may only be staked (uint64)' },
  { name: 'utxo_start_timestamp', type: 'timestamptz', from: 'utxoStartTimestamp', doc: 'staked: when the stake was locked' },
  { name: 'utxo_end_timestamp', type: 'timestamptz', from: 'utxoEndTimestamp', doc: 'staked: when the stake unlocks' },
  { name: 'reward_type', type: 'varchar', from: 'rewardType', doc: 'a reward: VALIDATOR, DELEGATOR or VALIDATOR_FEE' },
  { name: 'created_on_chain_id', type: 'varchar', from: 'createdOnChainId', doc: 'chain it was created on (an import\'s inputs: the X- or C-Chain)' },
  { name: 'consumed_on_chain_id', type: 'varchar', from: 'consumedOnChainId', doc: 'chain it is spent on (an export\'s outputs: the X- or C-Chain)' },
];
