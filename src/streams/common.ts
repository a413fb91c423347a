// Pieces several declarations share: address-info objects, partition ids, option sets.
import type { Column, OptionSpec, Partition } from '../decl/stream.js';
import { isoTime } from '../text.js';

/** An address-info object (name, symbol, decimals, logoUri, address) flattened to `<side>_*`. */
export function addressColumns(side: string, path: string, required = true): Column[] {
  return [
    { name: `${side}_address`, type: 'evm_address', from: `${path}.address`, required, doc: `${side} address, lowercased` },
    { name: `${side}_name`, type: 'varchar', from: `${path}.name`, doc: `name the service knows for the ${side} address` },
    { name: `${side}_symbol`, type: 'varchar', from: `${path}.symbol`, doc: `symbol of the ${side} address when it is a token` },
    { name: `${side}_decimals`, type: 'integer', from: `${path}.decimals`, doc: `decimals of the ${side} address when it is a token` },
    { name: `${side}_logo_uri`, type: 'varchar', from: `${path}.logoUri`, doc: `logo of the ${side} address` },
  ];
}

export const CHAIN_ID_COLUMN: Column = { name: 'chain_id', type: 'varchar', partition: 'chainId', doc: 'chain id as given in the pipeline' };

export const BLOCK_COLUMNS: Column[] = [
  { name: 'block_number', type: 'bigint', from: 'blockNumber', required: true, doc: 'block number' },
  { name: 'block_timestamp', type: 'timestamptz', from: 'blockTimestamp', required: true, doc: 'block time (UTC)' },
  { name: 'block_hash', type: 'varchar', from: 'blockHash', doc: 'block hash' },
  { name: 'tx_hash', type: 'varchar', from: 'txHash', required: true, doc: 'transaction hash' },
];

/**
 * The time keys of a block-ranged table: each is resolved to the first block at or after it
 * (through the chain's blocks, once, remembered in the lake), and bounds the window as that block would.
 */
export const BLOCK_TIME_OPTIONS: Record<string, OptionSpec> = {
  startTimestamp: { kind: 'unix_seconds', doc: 'the range starts at the first block at or after it (inclusive), instead of startBlock; the block is found once and remembered in the lake' },
  endTimestamp: { kind: 'unix_seconds', doc: 'the range ends before the first block at or after it (exclusive), instead of endBlock; after the chain\'s head: the run fetches to the head and a later run goes on' },
};

export const BLOCK_RANGE_OPTIONS: Record<string, OptionSpec> = {
  startBlock: { kind: 'int', min: 0, doc: 'first block (inclusive); default genesis; later runs resume at the high-water mark, and a start moved below the blocks the lake fetched is refused (--full-refresh fetches from it)' },
  endBlock: { kind: 'int', min: 1, doc: "block where the range ends (exclusive); default the chain's head when the run begins; one above the head: the run fetches to the head and a later run goes on" },
  ...BLOCK_TIME_OPTIONS,
};

export const BLOCK_CURSOR = {
  column: 'block_number',
  start: 'startBlock',
  end: 'endBlock',
  startOption: 'startBlock',
  endOption: 'endBlock',
  time: 'block_timestamp',
} as const;

/** startTimestamp must be below endTimestamp where both are given (Unix seconds). */
export function timeRangeCheck(s: Record<string, unknown>): Array<[string, string]> {
  const a = s.startTimestamp as number | undefined;
  const b = s.endTimestamp as number | undefined;
  // As the user wrote them (a date, a date-time): the times, not the seconds they were read as.
  const time = (t: number) => isoTime(t) ?? String(t);
  return a !== undefined && b !== undefined && a >= b ? [['endTimestamp', `startTimestamp ${time(a)} must be before endTimestamp ${time(b)} (the end is excluded)`]] : [];
}

/** The entry's startTimestamp and endTimestamp, those it gives, as query parameters. */
export function timeRangeQuery(s: Record<string, unknown>): Record<string, string> {
  const query: Record<string, string> = {};
  if (s.startTimestamp !== undefined) query.startTimestamp = String(s.startTimestamp);
  if (s.endTimestamp !== undefined) query.endTimestamp = String(s.endTimestamp);
  return query;
}

/** A range's bounds: a block or a time on each side, not both; each below its end. */
export function blockRangeCheck(s: Record<string, unknown>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [block, time] of [['startBlock', 'startTimestamp'], ['endBlock', 'endTimestamp']] as const)
    if (s[block] !== undefined && s[time] !== undefined) out.push([time, `give ${block} or ${time}, not both`]);
  const a = s.startBlock as number | undefined;
  const b = s.endBlock as number | undefined;
  if (a !== undefined && b !== undefined && a >= b) out.push(['endBlock', `startBlock ${a} must be below endBlock ${b} (endBlock is exclusive)`]);
  return [...out, ...timeRangeCheck(s)];
}

/**
 * The key of a price's number: a Money object's `value`, a JSON number (docs/services.md, Data
 * service). The streams that land prices parse those numbers exactly.
 */
export const PRICE_KEYS: readonly string[] = ['value'];

export const CURRENCIES = ['usd', 'eur', 'aud', 'cad', 'chf', 'clp', 'cny', 'czk', 'dkk', 'gbp', 'hkd', 'huf', 'jpy', 'nzd'] as const;

/** Query-shaped partitions (rewards, delegators) are named by their query, so that state survives reordering keys. */
export function queryPartition(network: string, query: Record<string, string | undefined>): Partition {
  const q: Record<string, string> = {};
  for (const k of Object.keys(query).sort()) if (query[k]) q[k] = query[k]!;
  const id = [network, ...Object.entries(q).map(([k, v]) => `${k}=${v}`)].join('/');
  return { id, path: { network }, query: q, values: { network } };
}

export function joinList(v: unknown): string | undefined {
  return Array.isArray(v) && v.length ? v.join(',') : undefined;
}

export const NETWORK_COLUMN: Column = { name: 'network', type: 'varchar', partition: 'network', doc: 'mainnet, fuji or testnet' };

/** network, tx_hash, node_id: how every staking record starts. */
export function stakingIds(txDoc: string): Column[] {
  return [
    NETWORK_COLUMN,
    { name: 'tx_hash', type: 'varchar', from: 'txHash', required: true, doc: txDoc },
    { name: 'node_id', type: 'varchar', from: 'nodeId', required: true, doc: 'validator NodeID' },
  ];
}

export const STAKING_COLUMNS: Column[] = [
  ...stakingIds('staking transaction'),
  { name: 'reward_type', type: 'varchar', from: 'rewardType', required: true, doc: 'VALIDATOR, DELEGATOR or VALIDATOR_FEE' },
  { name: 'addresses', type: 'varchar[]', from: 'addresses', required: true, doc: 'reward addresses' },
  { name: 'amount_staked', type: 'amount', from: 'amountStaked', required: true, units: 9, doc: 'stake in nAVAX' },
  { name: 'start_timestamp', type: 'timestamptz', from: 'startTimestamp', required: true, doc: 'staking start' },
  { name: 'end_timestamp', type: 'timestamptz', from: 'endTimestamp', required: true, doc: 'staking end' },
];
