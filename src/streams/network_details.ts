// The primary network's staking totals (getNetworkDetails), one snapshot a run: the answer is one
// object, so its history is the snapshots chainlake keeps (sql/network_staking_daily.sql).
import type { StreamDecl } from '../decl/stream.js';
import { objectSnapshot } from './avax_supply.js';
import { ExactNumber } from '../json.js';
import { NETWORK_COLUMN } from './common.js';
import { SNAPSHOT_AT } from './validators.js';

/** A ratio as decimal text: digits, maybe a point and more digits. */
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

export const networkDetails: StreamDecl = {
  table: 'network_details',
  doc: 'snapshots of the primary network\'s staking: active validators and delegators, their stake in nAVAX, estimated annual rewards, the staking ratio and the stake per AvalancheGo version, one row per network per run',
  service: 'data',
  endpoint: '/v1/networks/{network}',
  items: 'details',
  extract: objectSnapshot,
  weight: 100,
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
  },
  partitions: (s) => {
    const network = String(s.network);
    return [{ id: network, path: { network }, query: {}, values: { network } }];
  },
  refresh: 'merge',
  mergeScope: 'partition',
  key: ['network', 'snapshot_at'],
  keyDoc: 'a snapshot per network per run: each run adds one; a run within the same second replaces it',
  // Amounts and the ratio are decimal strings; a JSON number in their place is kept as sent.
  exactNumbers: ['totalAmountStaked', 'estimatedAnnualStakingReward', 'amountStaked', 'stakingRatio'],
  knownFields: ['validatorDetails.stakingRatio'],
  columns: [
    NETWORK_COLUMN,
    SNAPSHOT_AT,
    { name: 'validator_count', type: 'integer', from: 'validatorDetails.validatorCount', required: true, doc: 'active primary-network validators' },
    { name: 'validator_amount_staked', type: 'amount', from: 'validatorDetails.totalAmountStaked', required: true, units: 9, doc: 'their own stake, in nAVAX' },
    { name: 'estimated_annual_staking_reward', type: 'amount', from: 'validatorDetails.estimatedAnnualStakingReward', required: true, units: 9, doc: 'the rewards the active validations and delegations would earn, in nAVAX, as the service estimates them' },
    {
      name: 'staking_ratio', type: 'varchar', required: true,
      derive: (item) => {
        const v = (item.validatorDetails as Record<string, unknown> | undefined)?.stakingRatio;
        const text = typeof v === 'string' ? v : v instanceof ExactNumber ? v.text : undefined;
        // Not a decimal: an object the column's string check rejects, naming what was sent.
        return text === undefined || DECIMAL.test(text) ? text : { 'not a decimal': text };
      },
      doc: 'active stake (validators\' and delegators\') over the current supply, as exact decimal text (CAST to DOUBLE or DECIMAL to compute)',
    },
    { name: 'delegator_count', type: 'integer', from: 'delegatorDetails.delegatorCount', required: true, doc: 'active primary-network delegations' },
    { name: 'delegator_amount_staked', type: 'amount', from: 'delegatorDetails.totalAmountStaked', required: true, units: 9, doc: 'their stake, in nAVAX' },
    {
      name: 'staking_by_version', type: 'json', from: 'validatorDetails.stakingDistributionByVersion', required: true,
      doc: 'per AvalancheGo version: [{version, amountStaked (nAVAX as text), validatorCount}]',
    },
  ],
};
