// The primary-network side of the world: validators, their delegators, historical and pending
// rewards. Rewards are derived from the validation periods and delegations, so the three
// listings agree with each other (a completed delegation yields a DELEGATOR reward to the
// delegator and a VALIDATOR_FEE reward to the validator's owner, sharing txHash and rewardTxHash).
import { cb58Encode, encodeNodeId, encodePrimaryAddress, type Network } from '../ids.js';
import { Rng, hashKey, id32, labelBytes, labelled } from './hash.js';
import { WORLD_NOW, type Money } from './evm.js';
import { fromArray, mapListing, type Listing } from './listing.js';

export type StakingNetwork = 'mainnet' | 'fuji';
export type SortOrder = 'asc' | 'desc';
export type DelegationStatus = 'completed' | 'active' | 'pending';
export type RewardType = 'VALIDATOR' | 'DELEGATOR' | 'VALIDATOR_FEE';

export const CURRENCIES = ['usd', 'eur', 'aud', 'cad', 'chf', 'clp', 'cny', 'czk', 'dkk', 'gbp', 'hkd', 'huf', 'jpy', 'nzd'] as const;
export type Currency = (typeof CURRENCIES)[number];

/** Units of the currency per USD; fixed so prices are deterministic. */
const PER_USD: Record<Currency, number> = {
  usd: 1, eur: 0.92, aud: 1.52, cad: 1.37, chf: 0.88, clp: 940, cny: 7.2, czk: 23.1, dkk: 6.87, gbp: 0.79,
  hkd: 7.8, huf: 355, jpy: 151, nzd: 1.66,
};

/** A USD amount in another currency, rounded to `digits` decimals. */
export function fromUsd(usd: number, currency: Currency, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(usd * PER_USD[currency] * f) / f;
}

export const AVAX_ASSET_ID: Record<StakingNetwork, string> = {
  mainnet: 'FvwEAhmxKfeiG8SnEvq42hc6whRyY3EFYAvebMqDNDGCgxN5Z',
  fuji: 'U8iRqJoiJm8xZHAacmvYyZVwqQx6uDNtQeP3CQ6fcgQk3JqnK',
};

const SHAPE: Record<StakingNetwork, { validators: number; pool: number }> = {
  mainnet: { validators: 6, pool: 16 },
  fuji: { validators: 3, pool: 8 },
};

const DAY = 86_400;
const YEAR = 365 * DAY;
const NANO = 1_000_000_000n;

export interface AssetAmount {
  assetId: string;
  name: string;
  symbol: string;
  denomination: number;
  type: 'secp256k1' | 'nft';
  amount: string;
}

/** Fields historical and pending rewards share. */
interface StakingRecord {
  addresses: string[];
  txHash: string;
  amountStaked: string;
  nodeId: string;
  startTimestamp: number;
  endTimestamp: number;
  rewardType: RewardType;
}

export interface HistoricalReward extends StakingRecord {
  utxoId: string;
  outputIndex: number;
  reward: AssetAmount & { historicalPrice?: Money };
  rewardTxHash: string;
}

export interface PendingReward extends StakingRecord {
  progress: number;
  estimatedReward: AssetAmount;
}

interface DelegatorBase {
  txHash: string;
  nodeId: string;
  rewardAddresses: string[];
  amountDelegated: string;
  delegationFee: string;
  startTimestamp: number;
  endTimestamp: number;
}
export interface CompletedDelegator extends DelegatorBase {
  grossReward: string;
  netReward: string;
  delegationStatus: 'completed';
}
export interface ActiveDelegator extends DelegatorBase {
  estimatedGrossReward: string;
  estimatedNetReward: string;
  delegationStatus: 'active';
}
export interface PendingDelegator extends DelegatorBase {
  estimatedGrossReward: string;
  estimatedNetReward: string;
  delegationStatus: 'pending';
}
export type Delegator = CompletedDelegator | ActiveDelegator | PendingDelegator;

export interface ValidatorInfo {
  nodeId: string;
  /** owner addresses, bare bech32 (avax1… / fuji1…) */
  rewardAddresses: string[];
  /** share of its delegators' rewards the validator keeps, in basis points */
  delegationFeeBp: number;
}

export interface RewardQuery {
  /** any accepted form (P-…, X-…, bare); matched on the bech32 body */
  addresses?: readonly string[];
  nodeIds?: readonly string[];
  sortOrder?: SortOrder;
  currency?: Currency;
}

export interface DelegatorQuery {
  nodeIds?: readonly string[];
  rewardAddresses?: readonly string[];
  delegationStatus?: DelegationStatus;
  sortOrder?: SortOrder;
}

interface Period {
  /** listed as a pending reward from here (the previous period's end) */
  listedFrom: number;
  start: number;
  end: number;
  txHash: string;
  stake: bigint;
  aprBp: bigint;
}

interface Validator {
  net: StakingNetwork;
  v: number;
  nodeId: string;
  owners: string[];
  feeBp: bigint;
  periods: Period[];
  since: number;
  /** delegations registered by WORLD_NOW; later ones come one every `interval` from WORLD_NOW + `phase` */
  delegatorCount: number;
  completed: number;
  active: number;
  phase: number;
  interval: number;
}

interface Delegation {
  v: number;
  j: number;
  /** listed (as pending) from here on */
  listedFrom: number;
  txHash: string;
  rewardTxHash: string;
  addresses: string[];
  amount: bigint;
  start: number;
  end: number;
  gross: bigint;
  fee: bigint;
}

type RewardKey = { kind: 'V' | 'D' | 'F'; v: number; n: number; ts: number };

export function stakingNetwork(n: Network): StakingNetwork {
  return n === 'mainnet' ? 'mainnet' : 'fuji';
}

export function nodeIdOf(network: StakingNetwork, v: number): string {
  return labelled(`node:${network}:${v}`, 20, encodeNodeId);
}

/** Owner pool address i in bare bech32 form. */
export function poolAddress(network: StakingNetwork, i: number): string {
  return labelled(`paddr:${network}:${i}`, 20, (bytes) => encodePrimaryAddress(network, bytes, ''));
}

/** bech32 body without a chain prefix, lower case: the form addresses are compared in. */
export function addressBody(s: string): string {
  return (/^[PXC]-/.test(s) ? s.slice(2) : s).toLowerCase();
}

function cb58Hash(seed: number, ...parts: Array<string | number>): string {
  return id32(Rng.of(seed, 'cb58', ...parts));
}

function rewardFor(stake: bigint, aprBp: bigint, seconds: number): bigint {
  return (stake * aprBp * BigInt(Math.max(0, seconds))) / (10_000n * BigInt(YEAR));
}

/** Status of a delegation at time t: pending before start, active until end, then completed. */
export function statusAt(start: number, end: number, t: number): DelegationStatus {
  return t < start ? 'pending' : t < end ? 'active' : 'completed';
}

/**
 * The delegation every network's validator 0 receives after WORLD_NOW, at fixed times and with
 * seed-independent hashes: listed from WORLD_NOW + 6 h (pending), active from WORLD_NOW + 1 day,
 * completed at WORLD_NOW + 3 days. Its delegator is owner-pool address 1.
 */
export const DEMO_DELEGATION_TIMES = { listedFrom: WORLD_NOW + 6 * 3600, start: WORLD_NOW + DAY, end: WORLD_NOW + 3 * DAY } as const;

export function demoDelegationTxHash(network: StakingNetwork): string {
  return cb58Encode(labelBytes(`delegation:${network}:demo`, 32));
}

/** One reward address from the delegator pool, or (15%) two different ones. Draws in a fixed order. */
function delegatorAddresses(r: Rng, net: StakingNetwork, pool: number): string[] {
  const a = r.int(pool);
  return r.chance(0.15) ? [poolAddress(net, a), poolAddress(net, (a + 1 + r.int(pool - 1)) % pool)] : [poolAddress(net, a)];
}

/** A delegated stake (25 to 500,000 AVAX, nAVAX exact) and its gross reward over [start, end). */
function stakeAndReward(r: Rng, start: number, end: number): { amount: bigint; gross: bigint } {
  const amount = BigInt(r.range(25, 500_000)) * NANO + r.bigBelow(NANO);
  return { amount, gross: rewardFor(amount, BigInt(r.range(650, 800)), end - start) };
}

export class StakingWorld {
  private readonly validatorsByNet = new Map<StakingNetwork, Validator[]>();
  /** Delegations are pure functions of (network, validator, index); kept once made. */
  private readonly delegations = new Map<string, Delegation>();
  /** Filtered, sorted keys per query: small (hundreds), and the items themselves stay on demand. */
  private readonly cache = new Map<string, unknown[]>();

  constructor(readonly seed: number) {
    for (const net of ['mainnet', 'fuji'] as const) {
      const { validators, pool } = SHAPE[net];
      this.validatorsByNet.set(net, Array.from({ length: validators }, (_, v) => this.makeValidator(net, v, pool)));
    }
  }

  private makeValidator(net: StakingNetwork, v: number, pool: number): Validator {
    const r = Rng.of(this.seed, 'validator', net, v);
    const owners = [poolAddress(net, v)];
    if (v % 3 === 2) owners.push(poolAddress(net, pool - 1 - v));
    const since = WORLD_NOW - r.range(420, 720) * DAY;
    const periods: Period[] = [];
    let t = since;
    for (let k = 0; ; k++) {
      const end = t + r.range(60, 365) * DAY;
      periods.push({
        listedFrom: k === 0 ? t : periods[k - 1]!.end,
        start: t, end, txHash: cb58Hash(this.seed, 'validation', net, v, k),
        stake: BigInt(r.range(2_000, 1_000_000)) * NANO + r.bigBelow(NANO), aprBp: BigInt(r.range(650, 800)),
      });
      if (end > WORLD_NOW) break;
      t = end + r.int(3) * DAY + r.int(DAY);
    }
    const delegatorCount = r.range(20, 60);
    const pending = 1 + r.int(3);
    const active = r.range(3, 8);
    const feeBp = BigInt(r.range(200, 1_000));
    // After WORLD_NOW: a new delegation every 2..6 days (validator 0: the first at +6 h, see DEMO_DELEGATION_TIMES).
    const f = Rng.of(this.seed, 'future-delegations', net, v);
    const interval = f.range(2 * DAY, 6 * DAY);
    const phase = v === 0 ? DEMO_DELEGATION_TIMES.listedFrom - WORLD_NOW : f.range(3600, interval);
    return {
      net, v, nodeId: nodeIdOf(net, v), owners, feeBp, periods, since,
      delegatorCount, completed: delegatorCount - active - pending, active, phase, interval,
    };
  }

  /** The validator's periods, extended (deterministically) until one ends after t. */
  private periodsUntil(val: Validator, t: number): readonly Period[] {
    const periods = val.periods;
    for (let k = periods.length; periods[k - 1]!.end <= t; k++) {
      const r = Rng.of(this.seed, 'validator-period', val.net, val.v, k);
      const prevEnd = periods[k - 1]!.end;
      const start = prevEnd + r.int(3) * DAY + r.int(DAY);
      periods.push({
        listedFrom: prevEnd, start, end: start + r.range(60, 365) * DAY, txHash: cb58Hash(this.seed, 'validation', val.net, val.v, k),
        stake: BigInt(r.range(2_000, 1_000_000)) * NANO + r.bigBelow(NANO), aprBp: BigInt(r.range(650, 800)),
      });
    }
    return periods;
  }

  /** Number of delegations (registered ones, whatever their status) of a validator at t. */
  private delegationCount(val: Validator, t: number): number {
    const since = t - WORLD_NOW - val.phase;
    return val.delegatorCount + (since < 0 ? 0 : Math.floor(since / val.interval) + 1);
  }

  validators(net: StakingNetwork): readonly ValidatorInfo[] {
    return this.validatorsByNet.get(net)!.map((x) => ({ nodeId: x.nodeId, rewardAddresses: [...x.owners], delegationFeeBp: Number(x.feeBp) }));
  }

  private delegation(net: StakingNetwork, val: Validator, j: number): Delegation {
    const memo = `${net}:${val.v}:${j}`;
    let d = this.delegations.get(memo);
    if (!d) {
      d = j < val.delegatorCount ? this.initialDelegation(net, val, j) : this.laterDelegation(net, val, j);
      this.delegations.set(memo, d);
    }
    return d;
  }

  /** The delegations registered by WORLD_NOW (completed, active and pending then). */
  private initialDelegation(net: StakingNetwork, val: Validator, j: number): Delegation {
    const r = Rng.of(this.seed, 'delegation', net, val.v, j);
    const pool = SHAPE[net].pool;
    let start: number;
    let end: number;
    if (j < val.completed) {
      const lo = val.since + 14 * DAY;
      // One delegation per network ended within the last day: its rewards have no historicalPrice yet.
      end = val.v === 0 && j === 0 ? WORLD_NOW - 3 * 3600 : lo + r.int(WORLD_NOW - 3600 - lo);
      start = end - r.range(14 * DAY, Math.max(14 * DAY, Math.min(YEAR, end - val.since)));
    } else if (j < val.completed + val.active) {
      start = WORLD_NOW - r.range(3600, Math.min(300 * DAY, WORLD_NOW - val.since));
      end = Math.max(WORLD_NOW + r.range(DAY, 200 * DAY), start + 14 * DAY + r.int(DAY));
    } else {
      start = WORLD_NOW + r.range(3600, 14 * DAY);
      end = start + r.range(14 * DAY, YEAR);
    }
    const addresses = j === 0 ? [poolAddress(net, (val.v + 1) % SHAPE[net].validators)] : delegatorAddresses(r, net, pool);
    const { amount, gross } = stakeAndReward(r, start, end);
    return {
      // Registered two weeks before it starts (pending ones start within two weeks of WORLD_NOW).
      v: val.v, j, listedFrom: start - 14 * DAY, txHash: cb58Hash(this.seed, 'delegation', net, val.v, j),
      rewardTxHash: cb58Hash(this.seed, 'reward', net, val.v, j), addresses, amount, start, end, gross,
      fee: (gross * val.feeBp) / 10_000n,
    };
  }

  /** Delegation registered after WORLD_NOW: the n-th one lists at WORLD_NOW + phase + n * interval. */
  private laterDelegation(net: StakingNetwork, val: Validator, j: number): Delegation {
    const n = j - val.delegatorCount;
    const r = Rng.of(this.seed, 'later-delegation', net, val.v, n);
    const pool = SHAPE[net].pool;
    const demo = val.v === 0 && n === 0;
    const listedFrom = WORLD_NOW + val.phase + n * val.interval;
    const start = demo ? DEMO_DELEGATION_TIMES.start : listedFrom + r.range(3600, 5 * DAY);
    const end = demo ? DEMO_DELEGATION_TIMES.end : start + r.range(14 * DAY, 90 * DAY);
    const addresses = demo ? [poolAddress(net, 1)] : delegatorAddresses(r, net, pool);
    const { amount, gross } = stakeAndReward(r, start, end);
    return {
      v: val.v, j, listedFrom,
      txHash: demo ? demoDelegationTxHash(net) : cb58Hash(this.seed, 'delegation', net, val.v, j),
      rewardTxHash: demo ? cb58Encode(labelBytes(`reward:${net}:demo`, 32)) : cb58Hash(this.seed, 'reward', net, val.v, j),
      addresses, amount, start, end, gross, fee: (gross * val.feeBp) / 10_000n,
    };
  }

  private price(ts: number, currency: Currency): number {
    const days = ts / DAY;
    const usd = 28 + 9 * Math.sin(days / 47) + 4 * Math.sin(days / 11) + (hashKey(this.seed, 'price', Math.floor(days)) % 100) / 100;
    return fromUsd(usd, currency);
  }

  private asset(net: StakingNetwork, amount: bigint): AssetAmount {
    return { assetId: AVAX_ASSET_ID[net], name: 'Avalanche', symbol: 'AVAX', denomination: 9, type: 'secp256k1', amount: amount.toString() };
  }

  /** With both nodeIds and addresses given, an item must match both. */
  private nodeWanted(val: Validator, nodeIds: readonly string[] | undefined): boolean {
    return !nodeIds || nodeIds.includes(val.nodeId);
  }

  private keys<T>(key: string, build: () => T[]): T[] {
    let hit = this.cache.get(key) as T[] | undefined;
    if (!hit) {
      if (this.cache.size > 256) this.cache.clear();
      hit = build();
      this.cache.set(key, hit);
    }
    return hit;
  }

  /**
   * Historical rewards are those of periods and delegations ended by t; pending ones those
   * listed by t and not yet ended (a validation period is listed from the previous one's end,
   * so it may not have started yet; a delegation only while active).
   */
  private rewardKeys(net: StakingNetwork, q: RewardQuery, pending: boolean, t: number): RewardKey[] {
    const want = q.addresses && new Set(q.addresses.map(addressBody));
    const hits = (addresses: string[]) => !want || addresses.some((a) => want.has(addressBody(a)));
    const cacheKey = JSON.stringify([pending ? 'pending' : 'rewards', net, [...(want ?? [])].sort(), [...(q.nodeIds ?? [])].sort(), t]);
    const keys = this.keys(cacheKey, () => {
      const out: RewardKey[] = [];
      for (const val of this.validatorsByNet.get(net)!) {
        if (!this.nodeWanted(val, q.nodeIds)) continue;
        this.periodsUntil(val, t).forEach((p, k) => {
          const wanted = pending ? p.listedFrom <= t && t < p.end : p.end <= t;
          if (wanted && hits(val.owners)) out.push({ kind: 'V', v: val.v, n: k, ts: pending ? p.start : p.end });
        });
        const count = this.delegationCount(val, t);
        for (let j = 0; j < count; j++) {
          const d = this.delegation(net, val, j);
          if (statusAt(d.start, d.end, t) !== (pending ? 'active' : 'completed')) continue;
          const ts = pending ? d.start : d.end;
          if (hits(d.addresses)) out.push({ kind: 'D', v: val.v, n: j, ts });
          if (hits(val.owners)) out.push({ kind: 'F', v: val.v, n: j, ts });
        }
      }
      return out.sort(compareKeys);
    });
    return keys;
  }

  listRewards(network: Network, q: RewardQuery, at = WORLD_NOW): Listing<HistoricalReward> {
    const net = stakingNetwork(network);
    const keys = this.rewardKeys(net, q, false, at);
    const currency = q.currency ?? 'usd';
    return mapListing(ordered(keys, q.sortOrder), (key) => this.historicalReward(net, key, currency, at));
  }

  listPendingRewards(network: Network, q: RewardQuery, at = WORLD_NOW): Listing<PendingReward> {
    const net = stakingNetwork(network);
    const keys = this.rewardKeys(net, q, true, at);
    return mapListing(ordered(keys, q.sortOrder), (key) => this.pendingReward(net, key, at));
  }

  listDelegators(network: Network, q: DelegatorQuery, at = WORLD_NOW): Listing<Delegator> {
    const net = stakingNetwork(network);
    const want = q.rewardAddresses && new Set(q.rewardAddresses.map(addressBody));
    const cacheKey = JSON.stringify(['delegators', net, [...(want ?? [])].sort(), [...(q.nodeIds ?? [])].sort(), q.delegationStatus ?? '', at]);
    const keys = this.keys(cacheKey, () => {
      const out: Array<{ v: number; j: number; ts: number }> = [];
      for (const val of this.validatorsByNet.get(net)!) {
        if (!this.nodeWanted(val, q.nodeIds)) continue;
        const count = this.delegationCount(val, at);
        for (let j = 0; j < count; j++) {
          const d = this.delegation(net, val, j);
          if (d.listedFrom > at) continue;
          if (q.delegationStatus && statusAt(d.start, d.end, at) !== q.delegationStatus) continue;
          if (want && !d.addresses.some((a) => want.has(addressBody(a)))) continue;
          out.push({ v: val.v, j, ts: d.start });
        }
      }
      return out.sort((a, b) => a.ts - b.ts || a.v - b.v || a.j - b.j);
    });
    return mapListing(ordered(keys, q.sortOrder), ({ v, j }) => this.delegator(net, v, j, at));
  }

  private validator(net: StakingNetwork, v: number): Validator {
    return this.validatorsByNet.get(net)![v]!;
  }

  private historicalReward(net: StakingNetwork, key: RewardKey, currency: Currency, t: number): HistoricalReward {
    const val = this.validator(net, key.v);
    let out: Omit<HistoricalReward, 'reward'> & { amount: bigint };
    if (key.kind === 'V') {
      const p = val.periods[key.n]!;
      out = {
        addresses: [...val.owners], txHash: p.txHash, amountStaked: p.stake.toString(), nodeId: val.nodeId,
        startTimestamp: p.start, endTimestamp: p.end, rewardType: 'VALIDATOR',
        utxoId: cb58Hash(this.seed, 'utxo', net, key.v, 'V', key.n), outputIndex: 0,
        rewardTxHash: cb58Hash(this.seed, 'validator-reward', net, key.v, key.n), amount: rewardFor(p.stake, p.aprBp, p.end - p.start),
      };
    } else {
      const d = this.delegation(net, val, key.n);
      const fee = key.kind === 'F';
      out = {
        addresses: fee ? [...val.owners] : [...d.addresses], txHash: d.txHash, amountStaked: d.amount.toString(), nodeId: val.nodeId,
        startTimestamp: d.start, endTimestamp: d.end, rewardType: fee ? 'VALIDATOR_FEE' : 'DELEGATOR',
        utxoId: cb58Hash(this.seed, 'utxo', net, key.v, key.kind, key.n), outputIndex: fee ? 1 : 0,
        rewardTxHash: d.rewardTxHash, amount: fee ? d.fee : d.gross - d.fee,
      };
    }
    const reward: HistoricalReward['reward'] = this.asset(net, out.amount);
    // Production gives a price only for rewards older than 24 hours.
    if (out.endTimestamp < t - DAY) reward.historicalPrice = { currencyCode: currency, value: this.price(out.endTimestamp, currency) };
    return {
      addresses: out.addresses, txHash: out.txHash, amountStaked: out.amountStaked, nodeId: out.nodeId,
      startTimestamp: out.startTimestamp, endTimestamp: out.endTimestamp, rewardType: out.rewardType,
      utxoId: out.utxoId, outputIndex: out.outputIndex, reward, rewardTxHash: out.rewardTxHash,
    };
  }

  private pendingReward(net: StakingNetwork, key: RewardKey, t: number): PendingReward {
    const val = this.validator(net, key.v);
    let start: number;
    let end: number;
    let base: Pick<PendingReward, 'addresses' | 'txHash' | 'amountStaked' | 'rewardType'>;
    let amount: bigint;
    if (key.kind === 'V') {
      const p = val.periods[key.n]!;
      ({ start, end } = p);
      base = { addresses: [...val.owners], txHash: p.txHash, amountStaked: p.stake.toString(), rewardType: 'VALIDATOR' };
      amount = rewardFor(p.stake, p.aprBp, end - start);
    } else {
      const d = this.delegation(net, val, key.n);
      ({ start, end } = d);
      const fee = key.kind === 'F';
      base = {
        addresses: fee ? [...val.owners] : [...d.addresses], txHash: d.txHash, amountStaked: d.amount.toString(),
        rewardType: fee ? 'VALIDATOR_FEE' : 'DELEGATOR',
      };
      amount = fee ? d.fee : d.gross - d.fee;
    }
    // Negative for a validation period listed before it starts, as the WORLD_NOW world always had.
    const progress = Math.round(((t - start) / (end - start)) * 10_000) / 100;
    return {
      addresses: base.addresses, txHash: base.txHash, amountStaked: base.amountStaked, nodeId: val.nodeId,
      startTimestamp: start, endTimestamp: end, rewardType: base.rewardType, progress,
      estimatedReward: this.asset(net, amount),
    };
  }

  private delegator(net: StakingNetwork, v: number, j: number, t: number): Delegator {
    const val = this.validator(net, v);
    const d = this.delegation(net, val, j);
    const base: DelegatorBase = {
      txHash: d.txHash, nodeId: val.nodeId, rewardAddresses: d.addresses.map((a) => 'P-' + a), amountDelegated: d.amount.toString(),
      delegationFee: d.fee.toString(), startTimestamp: d.start, endTimestamp: d.end,
    };
    const gross = d.gross.toString();
    const net_ = (d.gross - d.fee).toString();
    const status = statusAt(d.start, d.end, t);
    if (status === 'completed') return { ...base, grossReward: gross, netReward: net_, delegationStatus: 'completed' };
    if (status === 'active') return { ...base, estimatedGrossReward: gross, estimatedNetReward: net_, delegationStatus: 'active' };
    return { ...base, estimatedGrossReward: gross, estimatedNetReward: net_, delegationStatus: 'pending' };
  }
}

const KIND_ORDER = { V: 0, D: 1, F: 2 } as const;

function compareKeys(a: RewardKey, b: RewardKey): number {
  return a.ts - b.ts || a.v - b.v || a.n - b.n || KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
}

/** Keys are held ascending; desc (the default) serves them reversed. */
function ordered<T>(ascending: readonly T[], order: SortOrder = 'desc'): Listing<T> {
  if (order === 'asc') return fromArray(ascending);
  return { length: ascending.length, at: (k) => ascending[ascending.length - 1 - k]! };
}
