// The validator side of the staking world: primary-network validations (listValidators), L1
// validators (listL1Validators) and the metrics service's staking series. Primary validations are
// read off the staking world's own listings (a completed period is a VALIDATOR reward, the current
// or next one a pending VALIDATOR reward, delegations the delegators listing), so node ids, stakes,
// fees and delegations agree with the delegators and rewards tables. Subnet and L1 validations are
// added on the world's subnets, on the same node ids where there are enough.
import { ExactNumber } from '../json.js';
import { cb58Encode, encodeNodeId, isBlockchainId, nodeIdProblem, type Network } from '../ids.js';
import { badRequest } from './errors.js';
import { WORLD_NOW } from './evm.js';
import { Rng, hashKey, id32, labelBytes, toHex } from './hash.js';
import { fromArray, iterate, type Listing } from './listing.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import { nodeIdOf, poolAddress, stakingNetwork, statusAt, type Delegator, type StakingNetwork, type StakingWorld } from './staking.js';
import { buildSubnets, LAKESIDE_SUBNET_ID, PRIMARY_NETWORK_ID, type Subnet } from './subnets.js';
import type { World } from './world.js';
import { enumParam, intParam, networkParam, pageAt, single } from './params.js';

const DAY = 86_400;
const NANO = 1_000_000_000n;
/** A validator's weight (own stake and delegations) is at most 3M AVAX, delegations at most 4x its stake. */
const MAX_WEIGHT = 3_000_000n * NANO;
const MAX_CAPACITY = 720_000_000_000_000_000n;
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export const VALIDATION_STATUSES = ['completed', 'active', 'pending', 'removed'] as const;
export type ValidationStatus = (typeof VALIDATION_STATUSES)[number];
export const STAKING_METRICS = ['delegatorCount', 'delegatorWeight', 'validatorCount', 'validatorWeight'] as const;
export type StakingMetric = (typeof STAKING_METRICS)[number];

export interface BlsCredentials {
  publicKey: string;
  proofOfPossession: string;
}
export interface Rewards {
  validationRewardAmount: string;
  delegationRewardAmount: string;
  rewardAddresses?: string[];
  rewardTxHash?: string;
}
export interface Geolocation {
  city: string;
  country: string;
  countryCode: string;
  latitude: number;
  longitude: number;
}
interface DetailsBase {
  txHash: string;
  nodeId: string;
  subnetId: string;
  amountStaked: string;
  /** a percentage as text ("2.0000"); primary-network validations only */
  delegationFee?: string;
  startTimestamp: number;
  endTimestamp: number;
  blsCredentials?: BlsCredentials;
}
export interface CompletedValidator extends DetailsBase {
  delegatorCount: number;
  amountDelegated?: string;
  rewards: Rewards;
  validationStatus: 'completed';
}
export interface ActiveValidator extends DetailsBase {
  stakePercentage: number;
  delegatorCount: number;
  amountDelegated?: string;
  uptimePerformance: number;
  avalancheGoVersion?: string;
  delegationCapacity?: string;
  potentialRewards: Rewards;
  validationStatus: 'active';
  validatorHealth: { reachabilityPercent: number; benchedPChainRequestsPercent: number; benchedXChainRequestsPercent: number; benchedCChainRequestsPercent: number };
  geolocation: Geolocation | null;
}
export interface PendingValidator extends DetailsBase {
  validationStatus: 'pending';
}
export interface RemovedValidator extends DetailsBase {
  removeTxHash: string;
  removeTimestamp: number;
  validationStatus: 'removed';
}
export type ValidatorDetails = CompletedValidator | ActiveValidator | PendingValidator | RemovedValidator;

export interface L1Validator {
  validationId: string;
  validationIdHex: string;
  nodeId: string;
  subnetId: string;
  /** JSON numbers: an ExactNumber where a double would not hold them */
  weight: number | ExactNumber;
  remainingBalance: number | ExactNumber;
  creationTimestamp: number;
  blsCredentials: BlsCredentials;
  remainingBalanceOwner: { addresses: string[]; threshold: number };
  deactivationOwner: { addresses: string[]; threshold: number };
}

export interface ValidatorQuery {
  validationStatus?: ValidationStatus;
  /** substrings of node ids, as the service matches them */
  nodeIds?: readonly string[];
  subnetId?: string;
  minDelegationCapacity?: bigint;
  maxDelegationCapacity?: bigint;
  minTimeRemaining?: number;
  maxTimeRemaining?: number;
  minFeePercentage?: number;
  maxFeePercentage?: number;
  minUptimePerformance?: number;
  maxUptimePerformance?: number;
}

export interface L1Query {
  l1ValidationId?: string;
  includeInactiveL1Validators?: boolean;
  nodeId?: string;
  subnetId?: string;
}

export interface StakingPoint {
  value: number | ExactNumber;
  timestamp: number;
}

/** One validation: a staking period of a primary validator, or a subnet validator's. */
interface Validation {
  txHash: string;
  nodeId: string;
  subnetId: string;
  stake: bigint;
  start: number;
  end: number;
  feeBp?: number;
  owners?: string[];
  /** completed: what was paid; active or pending: the estimate */
  reward?: { amount: string; txHash?: string };
  /** delegations that started within the period */
  delegations: Delegator[];
  removeAt?: number;
  removeTxHash?: string;
  bls?: BlsCredentials;
}

interface L1Record {
  subnetId: string;
  j: number;
  nodeId: string;
  validationId: Uint8Array;
  weight: bigint;
  creation: number;
  balance: bigint;
  /** nAVAX a second the L1 validator pays while active */
  rate: bigint;
  owner: string;
  bls: BlsCredentials;
}

interface Span {
  start: number;
  end: number;
  weight: bigint;
}

const GEO: Geolocation[] = [
  { city: 'Frankfurt am Main', country: 'Germany', countryCode: 'DE', latitude: 50.1109, longitude: 8.6821 },
  { city: 'Ashburn', country: 'United States', countryCode: 'US', latitude: 39.0438, longitude: -77.4874 },
  { city: 'Singapore', country: 'Singapore', countryCode: 'SG', latitude: 1.3521, longitude: 103.8198 },
  { city: 'Helsinki', country: 'Finland', countryCode: 'FI', latitude: 60.1699, longitude: 24.9384 },
];

/** The P-Chain's height at WORLD_NOW; it grows a block every 2 seconds. */
const P_HEIGHT_AT_NOW = 21_834_512;
/** The staking series start a year before WORLD_NOW. */
const SERIES_FROM = Math.floor((WORLD_NOW - 365 * DAY) / DAY) * DAY;

function jsonNumber(n: bigint): number | ExactNumber {
  return n <= SAFE ? Number(n) : new ExactNumber(n.toString());
}

function bls(seed: number, ...parts: Array<string | number>): BlsCredentials {
  const r = Rng.of(seed, 'bls', ...parts);
  return { publicKey: '0x' + r.hex(48), proofOfPossession: '0x' + r.hex(96) };
}

export class ValidatorWorld {
  private readonly cache = new Map<string, unknown>();
  private readonly subnetsByNet = new Map<StakingNetwork, Subnet[]>();

  constructor(readonly seed: number, private readonly staking: StakingWorld) {}

  private memo<T>(key: string, build: () => T): T {
    if (this.cache.has(key)) return this.cache.get(key) as T;
    if (this.cache.size > 64) this.cache.clear();
    const v = build();
    this.cache.set(key, v);
    return v;
  }

  private subnets(net: StakingNetwork): Subnet[] {
    let s = this.subnetsByNet.get(net);
    if (!s) {
      s = buildSubnets(this.seed, net);
      this.subnetsByNet.set(net, s);
    }
    return s;
  }

  /** Every validation listed at `at`: the primary validators' periods, then the subnets'. */
  validations(network: Network, at: number): Validation[] {
    const net = stakingNetwork(network);
    return this.memo(`validations:${net}:${at}`, () => [...this.primary(network, at), ...this.subnetValidations(net)].filter((v) => v.start - 14 * DAY <= at || v.end <= at));
  }

  private primary(network: Network, at: number): Validation[] {
    const out: Validation[] = [];
    for (const [v, info] of this.staking.validators(stakingNetwork(network)).entries()) {
      const q = { nodeIds: [info.nodeId] };
      const delegations = [...iterate(this.staking.listDelegators(network, q, at))];
      const within = (start: number, end: number) => delegations.filter((d) => d.startTimestamp >= start && d.startTimestamp < end);
      const base = { nodeId: info.nodeId, subnetId: PRIMARY_NETWORK_ID, feeBp: info.delegationFeeBp, owners: info.rewardAddresses.map((a) => 'P-' + a) };
      const withBls = v % 2 === 0;
      for (const r of iterate(this.staking.listRewards(network, { ...q, sortOrder: 'asc' }, at))) {
        if (r.rewardType !== 'VALIDATOR') continue;
        out.push({
          ...base, txHash: r.txHash, stake: BigInt(r.amountStaked), start: r.startTimestamp, end: r.endTimestamp,
          reward: { amount: r.reward.amount, txHash: r.rewardTxHash }, delegations: within(r.startTimestamp, r.endTimestamp),
          ...(withBls ? { bls: bls(this.seed, r.txHash) } : {}),
        });
      }
      for (const r of iterate(this.staking.listPendingRewards(network, { ...q, sortOrder: 'asc' }, at))) {
        if (r.rewardType !== 'VALIDATOR') continue;
        out.push({
          ...base, txHash: r.txHash, stake: BigInt(r.amountStaked), start: r.startTimestamp, end: r.endTimestamp,
          // The current period counts every delegation still running when it began.
          reward: { amount: r.estimatedReward.amount }, delegations: delegations.filter((d) => d.endTimestamp > r.startTimestamp),
          ...(withBls ? { bls: bls(this.seed, r.txHash) } : {}),
        });
      }
    }
    return out;
  }

  /**
   * Permissioned validations of the first two subnets (not L1s) older than a month, on the primary
   * validators' node ids: one removed, one completed, one active and one pending at WORLD_NOW.
   */
  private subnetValidations(net: StakingNetwork): Validation[] {
    return this.memo(`subnet-validations:${net}`, () => {
      const picked = this.subnets(net).filter((s) => s.subnetId !== PRIMARY_NETWORK_ID && !s.isL1 && s.createBlockTimestamp < WORLD_NOW - 30 * DAY).slice(0, 2);
      const nodes = this.staking.validators(net).map((v) => v.nodeId);
      const out: Validation[] = [];
      picked.forEach((s, i) => {
        const base = Math.max(s.createBlockTimestamp + DAY, WORLD_NOW - 320 * DAY);
        const schedule = [
          { start: base, end: WORLD_NOW + 200 * DAY, removeAt: WORLD_NOW - 10 * DAY },
          { start: base, end: base + Math.floor((WORLD_NOW - 2 * DAY - base) / 2) },
          { start: WORLD_NOW - 5 * DAY, end: WORLD_NOW + 300 * DAY },
          { start: WORLD_NOW + 2 * DAY, end: WORLD_NOW + 200 * DAY },
        ];
        schedule.forEach((t, k) => {
          const r = Rng.of(this.seed, 'subnet-validation', net, i, k);
          out.push({
            txHash: id32(r), nodeId: nodes[(i + k) % nodes.length]!, subnetId: s.subnetId,
            stake: BigInt(r.range(1, 200)), start: t.start, end: t.end, delegations: [],
            ...(t.removeAt !== undefined ? { removeAt: t.removeAt, removeTxHash: id32(r) } : {}),
          });
        });
      });
      return out;
    });
  }

  private status(v: Validation, at: number): ValidationStatus {
    if (v.removeAt !== undefined && at >= v.removeAt) return 'removed';
    return statusAt(v.start, v.end, at);
  }

  private capacity(v: Validation, at: number): bigint | undefined {
    if (v.subnetId !== PRIMARY_NETWORK_ID || this.status(v, at) !== 'active') return undefined;
    const room = v.stake * 4n < MAX_WEIGHT - v.stake ? v.stake * 4n : MAX_WEIGHT - v.stake;
    const left = room - this.delegated(v, at);
    return left > 0n ? left : 0n;
  }

  private activeDelegations(v: Validation, at: number): Delegator[] {
    return v.delegations.filter((d) => statusAt(d.startTimestamp, d.endTimestamp, at) === 'active');
  }

  private delegated(v: Validation, at: number): bigint {
    return this.activeDelegations(v, at).reduce((s, d) => s + BigInt(d.amountDelegated), 0n);
  }

  /** Percent, 4 decimals, changing by the hour. */
  private uptime(v: Validation, at: number): number {
    const h = hashKey(this.seed, 'uptime', v.txHash, Math.floor(at / 3600));
    return h % 7 === 0 ? 100 : (850_000 + ((h >>> 3) % 150_000)) / 10_000;
  }

  private details(v: Validation, at: number, activeStake: Map<string, bigint>): ValidatorDetails {
    const status = this.status(v, at);
    const base: DetailsBase = {
      txHash: v.txHash, nodeId: v.nodeId, subnetId: v.subnetId, amountStaked: v.stake.toString(),
      ...(v.feeBp !== undefined ? { delegationFee: (v.feeBp / 100).toFixed(4) } : {}),
      startTimestamp: v.start, endTimestamp: v.end, ...(v.bls ? { blsCredentials: v.bls } : {}),
    };
    const primary = v.subnetId === PRIMARY_NETWORK_ID;
    const fees = (ds: Delegator[]) => ds.reduce((s, d) => s + BigInt(d.delegationFee), 0n).toString();
    if (status === 'removed') return { ...base, removeTxHash: v.removeTxHash!, removeTimestamp: v.removeAt!, validationStatus: 'removed' };
    if (status === 'pending') return { ...base, validationStatus: 'pending' };
    if (status === 'completed') {
      const amount = v.delegations.reduce((s, d) => s + BigInt(d.amountDelegated), 0n);
      return {
        ...base, delegatorCount: v.delegations.length, ...(primary ? { amountDelegated: amount.toString() } : {}),
        rewards: primary
          ? { validationRewardAmount: v.reward!.amount, delegationRewardAmount: fees(v.delegations), rewardAddresses: v.owners!, rewardTxHash: v.reward!.txHash! }
          : { validationRewardAmount: '0', delegationRewardAmount: '0' },
        validationStatus: 'completed',
      };
    }
    const active = this.activeDelegations(v, at);
    const total = activeStake.get(v.subnetId)!;
    const h = hashKey(this.seed, 'health', v.nodeId, Math.floor(at / 3600));
    const capacity = this.capacity(v, at);
    return {
      ...base,
      stakePercentage: Number((v.stake * 100_000_000n) / total) / 1_000_000,
      delegatorCount: active.length,
      ...(primary ? { amountDelegated: this.delegated(v, at).toString() } : {}),
      uptimePerformance: this.uptime(v, at),
      avalancheGoVersion: `avalanchego/1.13.${hashKey(this.seed, 'version', v.nodeId) % 3}`,
      ...(capacity !== undefined ? { delegationCapacity: capacity.toString() } : {}),
      potentialRewards: primary
        ? { validationRewardAmount: v.reward!.amount, delegationRewardAmount: fees(active), rewardAddresses: v.owners! }
        : { validationRewardAmount: '0', delegationRewardAmount: '0' },
      validationStatus: 'active',
      validatorHealth: {
        reachabilityPercent: [100, 100, 99.5, 97.25][h % 4]!, benchedPChainRequestsPercent: [0, 0, 0.5][h % 3]!,
        benchedXChainRequestsPercent: [0, 1.25][h % 2]!, benchedCChainRequestsPercent: [0, 0, 0, 2.5][(h >>> 4) % 4]!,
      },
      geolocation: hashKey(this.seed, 'geo', v.nodeId) % 4 === 3 ? null : GEO[hashKey(this.seed, 'city', v.nodeId) % GEO.length]!,
    };
  }

  /** What listValidators serves at `at`: newest start first. */
  listValidators(network: Network, q: ValidatorQuery, at = WORLD_NOW): Listing<ValidatorDetails> {
    const key = JSON.stringify(['validators', stakingNetwork(network), at, q], (_, x) => (typeof x === 'bigint' ? x.toString() : x));
    return fromArray(this.memo(key, () => {
      const all = this.validations(network, at);
      const activeStake = new Map<string, bigint>();
      for (const v of all) if (this.status(v, at) === 'active') activeStake.set(v.subnetId, (activeStake.get(v.subnetId) ?? 0n) + v.stake);
      const within = (x: number | bigint | undefined, lo: number | bigint | undefined, hi: number | bigint | undefined) =>
        (lo === undefined && hi === undefined) || (x !== undefined && (lo === undefined || x >= lo) && (hi === undefined || x <= hi));
      return all
        .filter((v) => {
          const status = this.status(v, at);
          if (q.validationStatus && status !== q.validationStatus) return false;
          if (q.subnetId && v.subnetId !== q.subnetId) return false;
          if (q.nodeIds && !q.nodeIds.some((n) => v.nodeId.includes(n))) return false;
          if (!within(this.capacity(v, at), q.minDelegationCapacity, q.maxDelegationCapacity)) return false;
          if (!within(v.feeBp === undefined ? undefined : v.feeBp / 100, q.minFeePercentage, q.maxFeePercentage)) return false;
          if (!within(status === 'active' ? this.uptime(v, at) : undefined, q.minUptimePerformance, q.maxUptimePerformance)) return false;
          return within(Math.max(0, v.end - at), q.minTimeRemaining, q.maxTimeRemaining);
        })
        .sort((a, b) => b.start - a.start || (a.txHash < b.txHash ? -1 : 1))
        .map((v) => this.details(v, at, activeStake));
    }));
  }

  private l1Records(net: StakingNetwork): L1Record[] {
    return this.memo(`l1:${net}`, () => {
      const nodes = this.staking.validators(net).map((v) => v.nodeId);
      const out: L1Record[] = [];
      this.subnets(net).filter((s) => s.isL1).forEach((s, i) => {
        for (let j = 0; j < 4; j++) {
          const r = Rng.of(this.seed, 'l1-validator', s.subnetId, j);
          const creation = s.createBlockTimestamp + (j + 1) * DAY + r.int(DAY);
          // Lakeside's j = 1 pays so much that the fees it has paid pass 2^53 (from about 46 days
          // before WORLD_NOW) while its balance stays past 10^16 for weeks after: the L1 fee series
          // then carry numbers a double cannot hold.
          const rate = s.subnetId === LAKESIDE_SUBNET_ID && j === 1 ? 160_000_000n : BigInt(r.range(300, 700));
          const life = BigInt(WORLD_NOW - creation);
          // j = 1 holds more than a double can: 20M AVAX. j = 2 runs dry a day after WORLD_NOW, j = 3 ten days before.
          const balance = j === 1 ? 20_000_000n * NANO + r.bigBelow(NANO) : j === 2 ? rate * (life + BigInt(DAY)) : j === 3 ? rate * (life - 10n * BigInt(DAY)) : rate * (life + BigInt(r.range(30, 400) * DAY));
          out.push({
            subnetId: s.subnetId, j, nodeId: j < 2 ? nodes[(i + j) % nodes.length]! : encodeNodeId(labelBytes(`l1node:${s.subnetId}:${j}`, 20)),
            validationId: labelBytes(`l1-validation:${s.subnetId}:${j}`, 32),
            // The first L1's first validator weighs 2^53 + 1: a weight a double cannot hold.
            weight: i === 0 && j === 0 ? 9_007_199_254_740_993n : BigInt(r.range(20, 1000)),
            creation, balance, rate, owner: 'P-' + poolAddress(net, (i + j) % 8), bls: bls(this.seed, 'l1', s.subnetId, j),
          });
        }
      });
      return out.sort((a, b) => b.creation - a.creation || a.j - b.j);
    });
  }

  private remaining(v: L1Record, at: number): bigint {
    const left = v.balance - v.rate * BigInt(Math.max(0, at - v.creation));
    return left > 0n ? left : 0n;
  }

  /** The L1 validations of a network and what they pay: the metrics service's L1 fee series read them. */
  l1Fees(network: Network): Array<{ validationId: string; nodeId: string; subnetId: string; creation: number; balance: bigint; rate: bigint }> {
    return this.l1Records(stakingNetwork(network)).map((v) => ({
      validationId: cb58Encode(v.validationId), nodeId: v.nodeId, subnetId: v.subnetId, creation: v.creation, balance: v.balance, rate: v.rate,
    }));
  }

  /** The P-Chain height the balances are computed at. */
  pChainHeight(at = WORLD_NOW): number {
    return P_HEIGHT_AT_NOW + Math.floor((at - WORLD_NOW) / 2);
  }

  /** What listL1Validators serves at `at`: newest first; active ones only unless asked. */
  listL1Validators(network: Network, q: L1Query, at = WORLD_NOW): Listing<L1Validator> {
    const net = stakingNetwork(network);
    const items = this.l1Records(net)
      .filter((v) => v.creation <= at)
      .filter((v) => q.includeInactiveL1Validators || this.remaining(v, at) > 0n)
      .filter((v) => (!q.nodeId || v.nodeId === q.nodeId) && (!q.subnetId || v.subnetId === q.subnetId) && (!q.l1ValidationId || cb58Encode(v.validationId) === q.l1ValidationId))
      .map((v): L1Validator => ({
        validationId: cb58Encode(v.validationId), validationIdHex: '0x' + toHex(v.validationId), nodeId: v.nodeId, subnetId: v.subnetId,
        weight: jsonNumber(v.weight), remainingBalance: jsonNumber(this.remaining(v, at)), creationTimestamp: v.creation, blsCredentials: v.bls,
        remainingBalanceOwner: { addresses: [v.owner], threshold: 1 }, deactivationOwner: { addresses: [v.owner], threshold: 1 },
      }));
    return fromArray(items);
  }

  /** Validator and delegator spans of a subnet (known at `at`): a validation counts while active. */
  private spans(network: Network, subnetId: string, at: number): { validators: Span[]; delegators: Span[] } {
    const net = stakingNetwork(network);
    return this.memo(`spans:${net}:${subnetId}:${at}`, () => {
      const validators: Span[] = this.validations(network, at)
        .filter((v) => v.subnetId === subnetId)
        .map((v) => ({ start: v.start, end: v.removeAt ?? v.end, weight: v.stake }));
      for (const v of this.l1Records(net)) {
        if (v.subnetId === subnetId && v.creation <= at) validators.push({ start: v.creation, end: v.creation + Number((v.balance + v.rate - 1n) / v.rate), weight: v.weight });
      }
      const delegators: Span[] = subnetId !== PRIMARY_NETWORK_ID ? [] : [...iterate(this.staking.listDelegators(network, {}, at))].map((d) => ({ start: d.startTimestamp, end: d.endTimestamp, weight: BigInt(d.amountDelegated) }));
      return { validators, delegators };
    });
  }

  /**
   * A staking metric of a subnet: one point a day (0:00 UTC), newest first, its value the state
   * at that instant. A subnet the world does not know has no points.
   */
  listStakingMetric(network: Network, metric: StakingMetric, subnetId: string, q: { startTimestamp?: number; endTimestamp?: number }, at = WORLD_NOW): Listing<StakingPoint> {
    let lo = SERIES_FROM;
    let hi = Math.floor(at / DAY) * DAY;
    if (q.startTimestamp !== undefined) lo = Math.max(lo, Math.ceil(q.startTimestamp / DAY) * DAY);
    if (q.endTimestamp !== undefined) hi = Math.min(hi, Math.floor((q.endTimestamp - 1) / DAY) * DAY);
    const known = subnetId === PRIMARY_NETWORK_ID || this.subnets(stakingNetwork(network)).some((s) => s.subnetId === subnetId);
    const length = known && hi >= lo ? (hi - lo) / DAY + 1 : 0;
    const s = this.spans(network, subnetId, at);
    const list = metric.startsWith('validator') ? s.validators : s.delegators;
    const weight = metric.endsWith('Weight');
    return {
      length,
      at: (k) => {
        const timestamp = hi - k * DAY;
        let n = 0n;
        for (const x of list) if (x.start <= timestamp && timestamp < x.end) n += weight ? x.weight : 1n;
        return { value: jsonNumber(n), timestamp };
      },
    };
  }
}

const WORLDS = new WeakMap<StakingWorld, ValidatorWorld>();

/** The validator world of a world (its views at other times share it). */
export function validatorWorld(world: World): ValidatorWorld {
  let v = WORLDS.get(world.staking);
  if (!v) {
    v = new ValidatorWorld(world.seed, world.staking);
    WORLDS.set(world.staking, v);
  }
  return v;
}

// ---- routes (every 400 names its parameter, as routes.ts does) ----

function numberParam(q: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const raw = single(q, name);
  if (raw === undefined) return undefined;
  if (!/^-?\d+(\.\d+)?$/.test(raw)) throw badRequest(`${name} must be a number, got "${raw}"`);
  const n = Number(raw);
  if (n < min) throw badRequest(`${name} must not be less than ${min}`);
  if (n > max) throw badRequest(`${name} must not be greater than ${max}`);
  return n;
}

function nanoParam(q: URLSearchParams, name: string): bigint | undefined {
  const raw = single(q, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || BigInt(raw) > MAX_CAPACITY) throw badRequest(`${name} must be an amount in nAVAX between 0 and ${MAX_CAPACITY}, got "${raw}"`);
  return BigInt(raw);
}

function idParam(q: URLSearchParams, name: string): string | undefined {
  const raw = single(q, name);
  if (raw !== undefined && !isBlockchainId(raw)) throw badRequest(`${name} must be an id (cb58 of 32 bytes), got "${raw}"`);
  return raw;
}

function validators(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const q = ctx.query;
  const pageSize = intParam(q, 'pageSize', 1, 100, 10)!;
  const nodeIds = single(q, 'nodeIds')?.split(',').map((s) => s.trim());
  if (nodeIds?.some((s) => s === '')) throw badRequest('nodeIds must be a comma-separated list without empty entries');
  const query: ValidatorQuery = {
    validationStatus: enumParam(q, 'validationStatus', VALIDATION_STATUSES), nodeIds, subnetId: idParam(q, 'subnetId'),
    minDelegationCapacity: nanoParam(q, 'minDelegationCapacity'), maxDelegationCapacity: nanoParam(q, 'maxDelegationCapacity'),
    minTimeRemaining: numberParam(q, 'minTimeRemaining', 0, 2147483647), maxTimeRemaining: numberParam(q, 'maxTimeRemaining', 0, 2147483647),
    minFeePercentage: numberParam(q, 'minFeePercentage', 2, 100), maxFeePercentage: numberParam(q, 'maxFeePercentage', 2, 100),
    minUptimePerformance: numberParam(q, 'minUptimePerformance', 0, 100), maxUptimePerformance: numberParam(q, 'maxUptimePerformance', 0, 100),
  };
  enumParam(q, 'sortOrder', ['asc', 'desc'] as const);
  enumParam(q, 'sortBy', ['blockIndex', 'delegationCapacity', 'timeRemaining', 'delegationFee', 'uptimePerformance'] as const);
  const key = JSON.stringify(['validators', network, query], (_, x) => (typeof x === 'bigint' ? x.toString() : x));
  const { items, nextPageToken } = pageAt(ctx, key, pageSize, 'data', (at) => validatorWorld(ctx.world).listValidators(network, query, at));
  return nextPageToken === undefined ? { validators: items } : { nextPageToken, validators: items };
}

function l1Validators(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const q = ctx.query;
  const pageSize = intParam(q, 'pageSize', 1, 100, 10)!;
  const nodeId = single(q, 'nodeId');
  const problem = nodeId === undefined ? null : nodeIdProblem(nodeId);
  if (problem) throw badRequest(`nodeId: "${nodeId}" ${problem}`);
  const inactive = single(q, 'includeInactiveL1Validators');
  if (inactive !== undefined && inactive !== 'true' && inactive !== 'false') throw badRequest(`includeInactiveL1Validators must be true or false, got "${inactive}"`);
  const query: L1Query = {
    l1ValidationId: idParam(q, 'l1ValidationId'), includeInactiveL1Validators: inactive === 'true', nodeId, subnetId: idParam(q, 'subnetId'),
  };
  const key = JSON.stringify(['l1Validators', network, query]);
  let height = 0;
  const { items, nextPageToken } = pageAt(ctx, key, pageSize, 'data', (at) => {
    const w = validatorWorld(ctx.world);
    height = w.pChainHeight(at);
    return w.listL1Validators(network, query, at);
  });
  const body = { validators: items, blockHeight: String(height) };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}

function stakingMetrics(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const metric = ctx.params[1]!;
  if (!(STAKING_METRICS as readonly string[]).includes(metric)) throw badRequest(`metric must be one of: ${STAKING_METRICS.join(', ')}`);
  const q = ctx.query;
  const subnetId = idParam(q, 'subnetId') ?? PRIMARY_NETWORK_ID;
  const startTimestamp = intParam(q, 'startTimestamp', 0, Number.MAX_SAFE_INTEGER);
  const endTimestamp = intParam(q, 'endTimestamp', 0, Number.MAX_SAFE_INTEGER);
  if (startTimestamp !== undefined && endTimestamp !== undefined && startTimestamp > endTimestamp) throw badRequest('startTimestamp must not be greater than endTimestamp');
  const pageSize = intParam(q, 'pageSize', 1, 2160, 100)!;
  const range = { ...(startTimestamp !== undefined ? { startTimestamp } : {}), ...(endTimestamp !== undefined ? { endTimestamp } : {}) };
  const key = JSON.stringify(['stakingMetrics', network, metric, subnetId, range]);
  const { items, nextPageToken } = pageAt(ctx, key, pageSize, 'metrics', (at) => validatorWorld(ctx.world).listStakingMetric(network, metric as StakingMetric, subnetId, range, at));
  return nextPageToken === undefined ? { results: items } : { results: items, nextPageToken };
}

export const VALIDATOR_ROUTES: RouteTable = [
  { pattern: ['v1', 'networks', null, 'validators'], route: { name: 'validators', service: 'data', weight: WEIGHTS.validators, handle: validators } },
  { pattern: ['v1', 'networks', null, 'l1Validators'], route: { name: 'l1Validators', service: 'data', weight: WEIGHTS.l1Validators, handle: l1Validators } },
  { pattern: ['v2', 'networks', null, 'metrics', null], route: { name: 'stakingMetrics', service: 'metrics', weight: WEIGHTS.stakingMetrics, handle: stakingMetrics } },
];
