import type { Page } from '../decl/request.js';
import type { Column, ExtractContext, StreamConfig, StreamDecl } from '../decl/stream.js';
import { isBlockchainId } from '../ids.js';
import { stamped } from './chain_reads.js';
import { joinList, NETWORK_COLUMN, queryPartition } from './common.js';

/** listValidators' validationStatus values (its ValidationStatusType). */
export const VALIDATION_STATUSES = ['completed', 'active', 'pending', 'removed'] as const;

/** The service's bound on the delegation-capacity filters, in nAVAX (past 2^53: given as text). */
const MAX_CAPACITY = 720_000_000_000_000_000n;
const MAX_SECONDS = 2_147_483_647;

/**
 * Every page of one listing, each item stamped with the time the listing began: the snapshot's
 * time. Items are yielded without the body as sent, so the raw pages keep the stamp (a rebuild
 * lands the same snapshot_at).
 */
export async function* snapshotListing(x: ExtractContext, extra: (page: Page) => Record<string, unknown> = () => ({})): AsyncGenerator<Page> {
  const takenAt = Math.floor(Date.now() / 1000);
  for await (const page of x.paginate()) yield { token: page.token, next: page.next, items: stamped(page.items, { takenAt, ...extra(page) }) };
}

export const SNAPSHOT_AT: Column = { name: 'snapshot_at', type: 'timestamptz', from: '_snapshot.takenAt', required: true, stamp: true, doc: 'when chainlake took the snapshot (UTC): the start of the listing' };

export const SNAPSHOT_KEY_DOC = 'a row is one validation in one snapshot: each run adds a snapshot (a run within the same second replaces it)';

/** A cb58 id option (subnetId, l1ValidationId) checked here: the option kinds have lists of ids only. */
export function idCheck(s: StreamConfig, ...names: string[]): Array<[string, string]> {
  return names.filter((n) => s[n] !== undefined && !isBlockchainId(s[n])).map((n) => [n, `${JSON.stringify(s[n])} is not an id (cb58 of 32 bytes)`]);
}

function rangeCheck(s: StreamConfig, lo: string, hi: string, min: number, max: number): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const k of [lo, hi]) {
    const v = s[k] as number | undefined;
    if (v !== undefined && (v < min || v > max)) out.push([k, `${v} is out of bounds (${min} to ${max})`]);
  }
  const a = s[lo] as number | undefined;
  const b = s[hi] as number | undefined;
  if (a !== undefined && b !== undefined && a > b) out.push([hi, `${lo} ${a} must not be above ${hi} ${b}`]);
  return out;
}

function capacityCheck(s: StreamConfig): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const got: bigint[] = [];
  for (const k of ['minDelegationCapacity', 'maxDelegationCapacity']) {
    const v = s[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !/^[0-9]+$/.test(v) || BigInt(v) > MAX_CAPACITY) out.push([k, `${JSON.stringify(v)} is not an amount in nAVAX from 0 to ${MAX_CAPACITY} (decimal digits, quoted)`]);
    else got.push(BigInt(v));
  }
  if (got.length === 2 && out.length === 0 && got[0]! > got[1]!) out.push(['maxDelegationCapacity', 'minDelegationCapacity must not be above maxDelegationCapacity']);
  return out;
}

const FILTERS = [
  'validationStatus', 'nodeIds', 'subnetId', 'minDelegationCapacity', 'maxDelegationCapacity', 'minTimeRemaining', 'maxTimeRemaining',
  'minFeePercentage', 'maxFeePercentage', 'minUptimePerformance', 'maxUptimePerformance',
] as const;

/** Which `rewards` object an item has: a completed validation's, or an active one's estimate. */
const reward = (field: string): string[] => [`rewards.${field}`, `potentialRewards.${field}`];

export const validators: StreamDecl = {
  table: 'validators',
  doc: 'snapshots of the validations of the primary network and its subnets (completed, active, pending, removed), one row per validation per run',
  service: 'data',
  endpoint: '/v1/networks/{network}/validators',
  items: 'validators',
  extract: (x) => snapshotListing(x),
  weight: 20,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    validationStatus: { kind: 'enum', values: VALIDATION_STATUSES, doc: 'only validations in this status (default all)' },
    nodeIds: { kind: 'node_id[]', doc: 'only these validators (the service matches substrings of node ids)' },
    subnetId: { kind: 'string', doc: 'only validations of this subnet (cb58; the primary network is 11111111111111111111111111111111LpoYY)' },
    minDelegationCapacity: { kind: 'string', doc: 'nAVAX as quoted digits, 0 to 720000000000000000: only active primary validators with at least this room for delegations' },
    maxDelegationCapacity: { kind: 'string', doc: 'nAVAX as quoted digits: at most this room for delegations' },
    minTimeRemaining: { kind: 'int', min: 0, doc: 'seconds, up to 2147483647: at least this long until the validation ends' },
    maxTimeRemaining: { kind: 'int', min: 0, doc: 'seconds, up to 2147483647: at most this long until the validation ends' },
    minFeePercentage: { kind: 'number', min: 2, doc: 'percent, 2 to 100 (leaves out subnet validations, which have no fee)' },
    maxFeePercentage: { kind: 'number', min: 2, doc: 'percent, 2 to 100 (leaves out subnet validations)' },
    minUptimePerformance: { kind: 'number', min: 0, doc: 'percent, 0 to 100 (active validations only then)' },
    maxUptimePerformance: { kind: 'number', min: 0, doc: 'percent, 0 to 100 (active validations only then)' },
  },
  check: (s) => [
    ...idCheck(s, 'subnetId'),
    ...capacityCheck(s),
    ...rangeCheck(s, 'minTimeRemaining', 'maxTimeRemaining', 0, MAX_SECONDS),
    ...rangeCheck(s, 'minFeePercentage', 'maxFeePercentage', 2, 100),
    ...rangeCheck(s, 'minUptimePerformance', 'maxUptimePerformance', 0, 100),
  ],
  partitions: (s) => [
    queryPartition(String(s.network), Object.fromEntries(FILTERS.map((k) => [k, Array.isArray(s[k]) ? joinList(s[k]) : s[k] === undefined ? undefined : String(s[k])]))),
  ],
  refresh: 'merge',
  // Entries whose filters overlap list the same validation: one row per snapshot whichever listed it.
  mergeScope: 'table',
  key: ['network', 'snapshot_at', 'tx_hash'],
  keyDoc: SNAPSHOT_KEY_DOC,
  columns: [
    NETWORK_COLUMN,
    SNAPSHOT_AT,
    { name: 'tx_hash', type: 'varchar', from: 'txHash', required: true, doc: 'the transaction that added the validator' },
    { name: 'node_id', type: 'varchar', from: 'nodeId', required: true, doc: 'validator NodeID' },
    { name: 'subnet_id', type: 'varchar', from: 'subnetId', required: true, doc: 'subnet validated (11111111111111111111111111111111LpoYY: the primary network)' },
    { name: 'validation_status', type: 'varchar', from: 'validationStatus', required: true, doc: 'completed, active, pending or removed, at the snapshot' },
    { name: 'amount_staked', type: 'amount', from: 'amountStaked', required: true, units: 9, doc: "the validator's own stake in nAVAX (a permissioned subnet validator's weight)" },
    { name: 'delegation_fee_percent', type: 'varchar', from: 'delegationFee', doc: "share of delegators' rewards the validator keeps, percent, exact text as sent (\"2.0000\"); primary network only" },
    { name: 'start_timestamp', type: 'timestamptz', from: 'startTimestamp', required: true, doc: 'validation start' },
    { name: 'end_timestamp', type: 'timestamptz', from: 'endTimestamp', required: true, doc: 'validation end' },
    { name: 'bls_public_key', type: 'varchar', from: 'blsCredentials.publicKey', doc: 'BLS public key (hex); permissionless validators only' },
    { name: 'bls_proof_of_possession', type: 'varchar', from: 'blsCredentials.proofOfPossession', doc: 'BLS proof of possession (hex)' },
    { name: 'delegator_count', type: 'integer', from: 'delegatorCount', doc: 'delegations: of the period (completed), running at the snapshot (active)' },
    { name: 'amount_delegated', type: 'amount', from: 'amountDelegated', units: 9, doc: 'stake delegated to the validator, nAVAX' },
    { name: 'delegation_capacity', type: 'amount', from: 'delegationCapacity', units: 9, doc: 'stake that can still be delegated, nAVAX (active only)' },
    { name: 'stake_percentage', type: 'double', from: 'stakePercentage', doc: "the stake's share of the total active stake, percent (active only; a JSON number)" },
    { name: 'uptime_performance', type: 'double', from: 'uptimePerformance', doc: "uptime the service's node observed, percent (active only; a JSON number)" },
    { name: 'avalanche_go_version', type: 'varchar', from: 'avalancheGoVersion', doc: 'AvalancheGo version the validator runs (active only)' },
    { name: 'validation_reward_amount', type: 'amount', from: reward('validationRewardAmount'), units: 9, doc: "the validator's own reward, nAVAX: paid (completed) or potential (active)" },
    { name: 'delegation_reward_amount', type: 'amount', from: reward('delegationRewardAmount'), units: 9, doc: 'fees from delegations, nAVAX: paid (completed) or potential (active)' },
    { name: 'reward_addresses', type: 'varchar[]', from: reward('rewardAddresses'), doc: 'addresses the rewards go to' },
    { name: 'reward_tx_hash', type: 'varchar', from: 'rewards.rewardTxHash', doc: 'transaction that paid the reward (completed only)' },
    {
      name: 'rewards_are_potential',
      type: 'boolean',
      derive: (v) => (v.potentialRewards !== undefined ? true : v.rewards !== undefined ? false : null),
      doc: 'true where the rewards are potentialRewards (an active validation), false where paid, NULL where neither was sent',
    },
    { name: 'reachability_percent', type: 'double', from: 'validatorHealth.reachabilityPercent', doc: 'requests answered in the last polling, percent (active only)' },
    { name: 'benched_p_chain_requests_percent', type: 'double', from: 'validatorHealth.benchedPChainRequestsPercent', doc: 'P-Chain requests benched in the last polling, percent' },
    { name: 'benched_x_chain_requests_percent', type: 'double', from: 'validatorHealth.benchedXChainRequestsPercent', doc: 'X-Chain requests benched, percent' },
    { name: 'benched_c_chain_requests_percent', type: 'double', from: 'validatorHealth.benchedCChainRequestsPercent', doc: 'C-Chain requests benched, percent' },
    { name: 'geo_city', type: 'varchar', from: 'geolocation.city', doc: "the node's city (active only, where known)" },
    { name: 'geo_country', type: 'varchar', from: 'geolocation.country', doc: "the node's country" },
    { name: 'geo_country_code', type: 'varchar', from: 'geolocation.countryCode', doc: 'its ISO code' },
    { name: 'geo_latitude', type: 'double', from: 'geolocation.latitude', doc: 'latitude' },
    { name: 'geo_longitude', type: 'double', from: 'geolocation.longitude', doc: 'longitude' },
    { name: 'remove_tx_hash', type: 'varchar', from: 'removeTxHash', doc: 'transaction that removed a permissioned subnet validator (removed only)' },
    { name: 'remove_timestamp', type: 'timestamptz', from: 'removeTimestamp', doc: 'when it was removed (removed only)' },
  ],
};
