import type { OptionSpec, StreamConfig, StreamDecl } from '../decl/stream.js';
import { joinList, queryPartition, STAKING_COLUMNS } from './common.js';

export const rewardsOptions: Record<string, OptionSpec> = {
  network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
  addresses: { kind: 'primary_address[]', doc: 'P-/X-chain reward addresses (avax1..., P-avax1...)' },
  nodeIds: { kind: 'node_id[]', doc: 'validator node ids (NodeID-...)' },
};

export function rewardsCheck(s: StreamConfig): Array<[string, string]> {
  return s.addresses || s.nodeIds ? [] : [['addresses', 'one of addresses and nodeIds is required']];
}

export const pendingRewards: StreamDecl = {
  table: 'pending_rewards',
  doc: 'staking rewards not yet paid (estimates)',
  service: 'data',
  endpoint: '/v1/networks/{network}/rewards:listPending',
  items: 'pendingRewards',
  weight: 100,
  pageSize: { min: 1, max: 100, default: 100 },
  options: rewardsOptions,
  check: rewardsCheck,
  partitions: (s) => [queryPartition(String(s.network), { addresses: joinList(s.addresses), nodeIds: joinList(s.nodeIds) })],
  // Pending means not paid yet: a reward paid since is no longer listed, and must leave the table.
  refresh: 'replace',
  mergeScope: 'table',
  key: ['network', 'tx_hash', 'reward_type'],
  // Not landed: the asset's name and type (secp256k1), the same for every pending reward.
  knownFields: ['estimatedReward.name', 'estimatedReward.type'],
  columns: [
    ...STAKING_COLUMNS,
    { name: 'progress', type: 'double', from: 'progress', required: true, doc: 'share of the staking period elapsed' },
    { name: 'estimated_reward_amount', type: 'amount', from: 'estimatedReward.amount', required: true, units: 'estimated_reward_denomination', doc: 'estimated reward, smallest unit' },
    { name: 'estimated_reward_asset_id', type: 'varchar', from: 'estimatedReward.assetId', doc: 'asset of the reward' },
    { name: 'estimated_reward_symbol', type: 'varchar', from: 'estimatedReward.symbol', doc: 'asset symbol' },
    { name: 'estimated_reward_denomination', type: 'integer', from: 'estimatedReward.denomination', doc: 'decimals of the asset' },
  ],
};
