import type { StreamDecl } from '../decl/stream.js';
import { joinList, queryPartition, stakingIds } from './common.js';

export const DELEGATION_STATUSES = ['completed', 'active', 'pending'] as const;

export const delegators: StreamDecl = {
  table: 'delegators',
  doc: 'delegations to validators of the primary network',
  service: 'data',
  endpoint: '/v1/networks/{network}/delegators',
  items: 'delegators',
  weight: 20,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    nodeIds: { kind: 'node_id[]', doc: 'validators whose delegations to list' },
    rewardAddresses: { kind: 'primary_address[]', doc: 'reward addresses of the delegators' },
    delegationStatus: { kind: 'enum', values: DELEGATION_STATUSES, doc: 'only delegations in this status' },
  },
  partitions: (s) => [
    queryPartition(String(s.network), {
      nodeIds: joinList(s.nodeIds),
      rewardAddresses: joinList(s.rewardAddresses),
      delegationStatus: s.delegationStatus as string | undefined,
    }),
  ],
  refresh: 'merge',
  knownFields: ['estimatedGrossReward', 'estimatedNetReward'],
  mergeScope: 'table',
  key: ['network', 'tx_hash'],
  columns: [
    ...stakingIds('delegation transaction'),
    { name: 'delegation_status', type: 'varchar', from: 'delegationStatus', required: true, doc: 'completed, active or pending' },
    { name: 'reward_addresses', type: 'varchar[]', from: 'rewardAddresses', required: true, doc: 'reward addresses' },
    { name: 'amount_delegated', type: 'amount', from: 'amountDelegated', required: true, units: 9, doc: 'stake in nAVAX' },
    { name: 'delegation_fee', type: 'amount', from: 'delegationFee', required: true, units: 9, doc: 'fee in nAVAX' },
    // Completed delegations carry grossReward/netReward; active and pending ones the estimates.
    { name: 'gross_reward', type: 'amount', from: ['grossReward', 'estimatedGrossReward'], units: 9, doc: 'gross reward in nAVAX (estimate unless completed)' },
    { name: 'net_reward', type: 'amount', from: ['netReward', 'estimatedNetReward'], units: 9, doc: 'net reward in nAVAX (estimate unless completed)' },
    {
      name: 'reward_is_estimate',
      type: 'boolean',
      derive: (d) => d.estimatedGrossReward !== undefined || d.estimatedNetReward !== undefined,
      doc: 'true where the service sent estimatedGrossReward/estimatedNetReward',
    },
    { name: 'start_timestamp', type: 'timestamptz', from: 'startTimestamp', required: true, doc: 'delegation start' },
    { name: 'end_timestamp', type: 'timestamptz', from: 'endTimestamp', required: true, doc: 'delegation end' },
  ],
};
