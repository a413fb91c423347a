import type { StreamDecl } from '../decl/stream.js';
import { CURRENCIES, joinList, PRICE_KEYS, queryPartition, STAKING_COLUMNS } from './common.js';
import { rewardsOptions, rewardsCheck } from './pending_rewards.js';

export const historicalRewards: StreamDecl = {
  table: 'historical_rewards',
  doc: 'staking rewards paid on the primary network',
  service: 'data',
  endpoint: '/v1/networks/{network}/rewards',
  items: 'historicalRewards',
  weight: 100,
  // Prices are JSON numbers (Money.value): kept as sent.
  exactNumbers: PRICE_KEYS,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    ...rewardsOptions,
    currency: { kind: 'enum', values: CURRENCIES, doc: 'currency of historical prices (default usd)' },
  },
  check: rewardsCheck,
  partitions: (s) => [
    queryPartition(String(s.network), {
      addresses: joinList(s.addresses),
      nodeIds: joinList(s.nodeIds),
      currency: (s.currency as string | undefined) ?? 'usd',
    }),
  ],
  refresh: 'merge',
  mergeScope: 'table',
  key: ['network', 'utxo_id'],
  keyDoc: 'a reward is one UTXO (utxo_id = reward transaction + output index)',
  columns: [
    ...STAKING_COLUMNS,
    { name: 'utxo_id', type: 'varchar', from: 'utxoId', required: true, doc: 'reward UTXO' },
    { name: 'output_index', type: 'integer', from: 'outputIndex', required: true, doc: 'output index of the reward UTXO' },
    { name: 'reward_tx_hash', type: 'varchar', from: 'rewardTxHash', required: true, doc: 'transaction that paid the reward' },
    { name: 'reward_amount', type: 'amount', from: 'reward.amount', required: true, units: 'reward_denomination', doc: 'reward in the smallest unit of its asset' },
    { name: 'reward_asset_id', type: 'varchar', from: 'reward.assetId', required: true, doc: 'asset of the reward' },
    { name: 'reward_asset_name', type: 'varchar', from: 'reward.name', doc: 'asset name' },
    { name: 'reward_asset_symbol', type: 'varchar', from: 'reward.symbol', doc: 'asset symbol' },
    { name: 'reward_asset_type', type: 'varchar', from: 'reward.type', doc: 'secp256k1 or nft' },
    { name: 'reward_denomination', type: 'integer', from: 'reward.denomination', doc: 'decimals of the asset' },
    { name: 'reward_price_currency', type: 'varchar', from: 'reward.historicalPrice.currencyCode', doc: 'currency of reward_price' },
    { name: 'reward_price', type: 'varchar', from: 'reward.historicalPrice.value', doc: 'historical price of one unit (exact text as sent)' },
  ],
};
