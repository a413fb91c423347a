import type { Page } from '../decl/request.js';
import { RunError } from '../errors.js';
import type { Column, ExtractContext, OptionSpec, Partition, StreamConfig, StreamDecl } from '../decl/stream.js';
import { CHAIN_ID_COLUMN, CURRENCIES, joinList, PRICE_KEYS } from './common.js';
import { CHAIN_ID_OPTION, getJson, snapshotBlock, stamped } from './chain_reads.js';

export const BALANCE_OPTIONS: Record<string, OptionSpec> = {
  chainId: CHAIN_ID_OPTION,
  addresses: { kind: 'evm_address[]', required: true, doc: 'holders whose balances to snapshot; one partition each' },
  blockNumber: { kind: 'int', min: 0, doc: 'block of the snapshot; default the latest block at the time of the run' },
  currency: { kind: 'enum', values: CURRENCIES, doc: 'currency of price and balance_value (default usd)' },
};

/** One partition per holder; the query carries what the service filters and prices by. */
export function balancePartitions(s: StreamConfig): Partition[] {
  const chainId = String(s.chainId);
  return (s.addresses as string[]).map((address) => {
    const query: Record<string, string> = {};
    if (s.currency !== undefined) query.currency = String(s.currency);
    if (s.filterSpamTokens !== undefined) query.filterSpamTokens = String(s.filterSpamTokens);
    const only = joinList(s.contractAddresses);
    if (only) query.contractAddresses = only;
    return { id: `${chainId}/${address}`, path: { chainId, address }, query, values: { chainId, address } };
  });
}

/** Holder, block and time of the snapshot: the first columns of every balance table. */
export const SNAPSHOT_COLUMNS: Column[] = [
  CHAIN_ID_COLUMN,
  { name: 'address', type: 'evm_address', partition: 'address', doc: 'the holder, lowercased' },
  { name: 'block_number', type: 'bigint', from: '_snapshot.blockNumber', required: true, doc: 'block the balance is of' },
  { name: 'block_timestamp', type: 'timestamptz', from: '_snapshot.blockTimestamp', required: true, doc: 'time of that block (UTC)' },
  { name: 'snapshot_at', type: 'timestamptz', from: '_snapshot.takenAt', required: true, stamp: true, doc: 'when chainlake took the snapshot (UTC)' },
];

export const TOKEN_FIELDS: Column[] = [
  { name: 'token_name', type: 'varchar', from: 'name', doc: 'token name' },
  { name: 'token_symbol', type: 'varchar', from: 'symbol', doc: 'token symbol' },
  { name: 'token_decimals', type: 'integer', from: 'decimals', doc: 'token decimals' },
  { name: 'token_logo_uri', type: 'varchar', from: 'logoUri', doc: 'token logo' },
];

/** Balance and its value in the requested currency (absent where the service has no price). */
export const VALUE_COLUMNS: Column[] = [
  { name: 'balance', type: 'amount', from: 'balance', required: true, units: 'token_decimals', doc: 'balance in the smallest unit' },
  { name: 'price_currency', type: 'varchar', from: ['price.currencyCode', 'balanceValue.currencyCode'], doc: 'currency of price_value and balance_value' },
  { name: 'price_value', type: 'varchar', from: 'price.value', doc: 'price of one whole token (exact text as sent)' },
  { name: 'balance_value', type: 'varchar', from: 'balanceValue.value', doc: 'value of the balance (exact text as sent)' },
];

export const SNAPSHOT_KEY_DOC =
  'a row is a snapshot of one holder at one block: a run at a new block adds a snapshot, a run at the same block replaces it';

async function* nativePages(x: ExtractContext): AsyncGenerator<Page> {
  const snap = await snapshotBlock(x, x.partition.path.chainId!, x.config.blockNumber as number | undefined);
  const body = (await getJson(x, x.path, x.endpoint, { ...x.query, blockNumber: snap.blockNumber })) as Record<string, unknown> | null;
  if (!body || typeof body !== 'object' || !('nativeTokenBalance' in body)) throw new RunError(`${x.endpoint}: the answer has no nativeTokenBalance`);
  yield { items: stamped([body.nativeTokenBalance], snap) };
}

export const nativeBalances: StreamDecl = {
  table: 'native_balances',
  doc: 'native-token balance snapshots of addresses at a block (the block is pinned first with `GET /v1/chains/{chainId}/blocks[/{blockId}]`, 10 CU)',
  service: 'data',
  endpoint: '/v1/chains/{chainId}/addresses/{address}/balances:getNative',
  items: 'nativeTokenBalance',
  extract: nativePages,
  weight: 20,
  // Prices are JSON numbers (Money.value): kept as sent.
  exactNumbers: PRICE_KEYS,
  pageSize: { min: 0, max: 0, default: 0 },
  options: BALANCE_OPTIONS,
  partitions: balancePartitions,
  refresh: 'merge',
  mergeScope: 'partition',
  key: ['chain_id', 'address', 'block_number'],
  keyDoc: SNAPSHOT_KEY_DOC,
  knownFields: ['chainId'],
  columns: [...SNAPSHOT_COLUMNS, ...TOKEN_FIELDS, ...VALUE_COLUMNS],
};
