// Metric series of the metrics service. A point is a pure function of (seed, chain, metric,
// interval, period index); cumulative metrics use a closed form that never decreases.
// Series end with the period containing the world's now. In a world with a clock (`partial`),
// that newest period is still running: its value is the part of the final value gathered by the
// latest update (every UPDATE_SECONDS), so it changes as the clock moves through the period and
// becomes final when the next period starts. Without a clock the newest point is served final.
import { hashKey } from './hash.js';
import { CHAINS, WORLD_NOW } from './evm.js';
import type { Listing } from './listing.js';

export const METRICS = [
  'activeAddresses', 'activeSenders', 'cumulativeTxCount', 'cumulativeAddresses', 'cumulativeContracts',
  'cumulativeDeployers', 'contracts', 'deployers', 'gasUsed', 'txCount', 'avgGps', 'maxGps', 'avgTps', 'maxTps',
  'avgGasPrice', 'maxGasPrice', 'feesPaid',
] as const;
export type Metric = (typeof METRICS)[number];

export const TIME_INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type TimeInterval = (typeof TIME_INTERVALS)[number];

export const METRIC_CHAIN_IDS = [...CHAINS.map((c) => c.chainId), 'total', 'mainnet', 'testnet'] as const;

/** Fixed page size of the legacy avg_tps endpoint (it takes no pageSize). */
export const AVG_TPS_PAGE_SIZE = 100;

export interface MetricPoint {
  value: number;
  timestamp: number;
}

export interface MetricQuery {
  timeInterval?: TimeInterval;
  /** inclusive lower bound on point timestamps */
  startTimestamp?: number;
  /** inclusive upper bound on point timestamps */
  endTimestamp?: number;
}

export function dayOnly(metric: Metric): boolean {
  return /^(cumulative|max|avg)/.test(metric) || metric === 'contracts' || metric === 'deployers' || metric === 'feesPaid';
}

const HOUR = 3600;
/** The metrics service recomputes the running period this often. */
export const UPDATE_SECONDS = 15 * 60;
const DAY = 86_400;
const WEEK = 7 * DAY;
/** 1970-01-05T00:00:00Z, the first Monday of the epoch. */
const FIRST_MONDAY = 4 * DAY;

/** Index of the period containing t. */
export function periodIndex(interval: TimeInterval, t: number): number {
  switch (interval) {
    case 'hour':
      return Math.floor(t / HOUR);
    case 'day':
      return Math.floor(t / DAY);
    case 'week':
      return Math.floor((t - FIRST_MONDAY) / WEEK);
    case 'month': {
      const d = new Date(t * 1000);
      return d.getUTCFullYear() * 12 + d.getUTCMonth();
    }
  }
}

export function periodStart(interval: TimeInterval, idx: number): number {
  switch (interval) {
    case 'hour':
      return idx * HOUR;
    case 'day':
      return idx * DAY;
    case 'week':
      return FIRST_MONDAY + idx * WEEK;
    case 'month':
      return Date.UTC(Math.floor(idx / 12), idx % 12, 1) / 1000;
  }
}

function firstIndexAtOrAfter(interval: TimeInterval, t: number): number {
  const i = periodIndex(interval, t);
  return periodStart(interval, i) < t ? i + 1 : i;
}

const DAILY_TX: Record<string, number> = { '43114': 450_000, '43113': 60_000, '432204': 8_000 };

/**
 * The chains an aggregate series is made of, as production's are: `total` is every chain's,
 * `mainnet` and `testnet` their network's. An aggregate's point is made from its chains' points of
 * the same period (SeriesWorld.aggregate), so that it is never below a chain of it.
 */
const AGGREGATES: Record<string, readonly string[]> = {
  total: CHAINS.map((c) => c.chainId),
  mainnet: CHAINS.filter((c) => c.network === 'mainnet').map((c) => c.chainId),
  testnet: CHAINS.filter((c) => c.network === 'fuji').map((c) => c.chainId),
};

function since(chainId: string): number {
  const c = CHAINS.find((x) => x.chainId === chainId);
  return c ? c.metricsSince : Math.min(...CHAINS.map((x) => x.metricsSince));
}

export class SeriesWorld {
  /** @param partial serve the newest period as still running (a world with a clock) */
  constructor(readonly seed: number, readonly partial = false) {}

  /** Points newest first, as served at `at` (Unix seconds). */
  listMetric(chainId: string, metric: Metric, q: MetricQuery = {}, at = WORLD_NOW): Listing<MetricPoint> {
    const interval = q.timeInterval ?? 'day';
    let lo = firstIndexAtOrAfter(interval, since(chainId));
    const current = periodIndex(interval, at);
    let hi = current;
    if (q.startTimestamp !== undefined) lo = Math.max(lo, firstIndexAtOrAfter(interval, q.startTimestamp));
    // Points before endTimestamp, as production serves them (docs/services.md, Metrics service).
    if (q.endTimestamp !== undefined) hi = Math.min(hi, periodIndex(interval, q.endTimestamp - 1));
    const length = Math.max(0, hi - lo + 1);
    return {
      length,
      at: (k) => {
        const idx = hi - k;
        const timestamp = periodStart(interval, idx);
        const value = this.partial && idx === current
          ? this.runningValue(chainId, metric, interval, idx, timestamp, at)
          : this.value(chainId, metric, interval, idx, timestamp);
        return { value, timestamp };
      },
    };
  }

  listAvgTps(chainId: string, at = WORLD_NOW): Listing<MetricPoint> {
    return this.listMetric(chainId, 'avgTps', { timeInterval: 'day' }, at);
  }

  /** When the legacy avg_tps data was last refreshed. */
  avgTpsLastRun(at = WORLD_NOW): number {
    return at - 317;
  }

  /** Value of the running period idx at time `at`, from the updates made so far. */
  private runningValue(chainId: string, metric: Metric, interval: TimeInterval, idx: number, ts: number, at: number): number {
    const final = this.value(chainId, metric, interval, idx, ts);
    const length = periodStart(interval, idx + 1) - ts;
    const slot = Math.floor((at - ts) / UPDATE_SECONDS);
    const done = Math.min(1, (slot * UPDATE_SECONDS) / length);
    const digits = metric === 'avgTps' || metric === 'maxTps' ? 4 : metric === 'avgGps' || metric === 'maxGps' ? 2 : 0;
    if (metric.startsWith('cumulative')) {
      const before = this.value(chainId, metric, 'day', idx - 1, ts - DAY);
      return round(before + (final - before) * done, 0);
    }
    if (metric.startsWith('avg')) {
      // An average over part of the period: near the final value, closer as the period fills.
      const wobble = hashKey(this.seed, 'running', chainId, metric, interval, idx, slot) / 0x1_0000_0000 - 0.5;
      return round(final * (1 + 0.4 * wobble * (1 - done)), digits);
    }
    if (metric.startsWith('max')) return round(final * (0.6 + 0.4 * done), digits);
    return round(final * done, 0);
  }

  private noise(chainId: string, metric: string, interval: TimeInterval, idx: number, spread = 0.3): number {
    return 1 - spread / 2 + (spread * hashKey(this.seed, 'metric', chainId, metric, interval, idx)) / 0x1_0000_0000;
  }

  private value(chainId: string, metric: Metric, interval: TimeInterval, idx: number, ts: number): number {
    const members = AGGREGATES[chainId];
    if (members) return this.aggregate(members, metric, interval, idx, ts);
    const start = since(chainId);
    const ageDays = Math.max(0, (ts - start) / DAY);
    const base = DAILY_TX[chainId]! * (0.8 + (hashKey(this.seed, 'level', chainId) % 400) / 1000);
    const trend = 1 + 0.6 * (ageDays / 730) + 0.25 * Math.sin(ageDays / 7.2);
    const txPerDay = base * trend * this.noise(chainId, 'txCount', 'day', periodIndex('day', ts));
    const span = interval === 'hour' ? 1 / 24 : interval === 'day' ? 1 : interval === 'week' ? 7 : monthDays(ts);
    // Distinct-address counts grow slower than the period length.
    const distinct = interval === 'hour' ? 1 / 10 : interval === 'day' ? 1 : interval === 'week' ? 3 : 8;
    const n = (m: string) => this.noise(chainId, m, interval, idx);
    const gasPerTx = 140_000 * this.noise(chainId, 'gasPerTx', 'day', periodIndex('day', ts), 0.2);
    const gasPrice = 2.5e10 * this.noise(chainId, 'gasPrice', 'day', periodIndex('day', ts), 0.9);
    const sparse = chainId === '432204' && hashKey(this.seed, 'quiet', chainId, metric, idx) % 10 === 0;
    switch (metric) {
      case 'txCount':
        return Math.round(txPerDay * span * n(metric));
      case 'gasUsed':
        return Math.round(txPerDay * gasPerTx * span * n(metric));
      case 'activeAddresses':
        return Math.round(txPerDay * 0.18 * distinct * n(metric));
      case 'activeSenders':
        return Math.round(txPerDay * 0.12 * distinct * n(metric));
      case 'contracts':
        return sparse ? 0 : Math.round(txPerDay * 0.004 * n(metric));
      case 'deployers':
        return sparse ? 0 : Math.round(txPerDay * 0.0008 * n(metric));
      case 'avgTps':
        return round(txPerDay / DAY, 4);
      case 'maxTps':
        return round((txPerDay / DAY) * (4 + 8 * (n(metric) - 0.85) / 0.3), 4);
      case 'avgGps':
        return round((txPerDay * gasPerTx) / DAY, 2);
      case 'maxGps':
        return round(((txPerDay * gasPerTx) / DAY) * (4 + 8 * (n(metric) - 0.85) / 0.3), 2);
      case 'avgGasPrice':
        return Math.round(gasPrice);
      case 'maxGasPrice':
        return Math.round(gasPrice * (3 + 37 * (n(metric) - 0.85) / 0.3));
      case 'feesPaid':
        // Wei: past 2^53 and printed by JSON in exponent form, as production does for big doubles.
        return Math.round(txPerDay * gasPerTx * gasPrice);
      case 'cumulativeTxCount':
        return this.cumulative(chainId, metric, ageDays, base);
      case 'cumulativeAddresses':
        return this.cumulative(chainId, metric, ageDays, base * 0.05);
      case 'cumulativeContracts':
        return this.cumulative(chainId, metric, ageDays, base * 0.004);
      case 'cumulativeDeployers':
        return this.cumulative(chainId, metric, ageDays, base * 0.0006);
    }
  }

  /**
   * An aggregate's point from its chains' points of the period (those whose series has begun):
   * counts, amounts and rates per second add up; distinct addresses and peaks lie between the
   * largest chain's and the sum (an address active on two chains is one); a gas price is the
   * chains' average weighted by their transactions, its peak the highest.
   */
  private aggregate(members: readonly string[], metric: Metric, interval: TimeInterval, idx: number, ts: number): number {
    const live = members.filter((c) => firstIndexAtOrAfter(interval, since(c)) <= idx);
    const values = live.map((c) => this.value(c, metric, interval, idx, ts));
    const sum = values.reduce((a, b) => a + b, 0);
    const top = Math.max(0, ...values);
    switch (metric) {
      case 'activeAddresses':
      case 'activeSenders':
        return Math.round(top + (sum - top) / 2);
      case 'maxTps':
        return round(top + (sum - top) / 2, 4);
      case 'maxGps':
        return round(top + (sum - top) / 2, 2);
      case 'avgTps':
        return round(sum, 4);
      case 'avgGps':
        return round(sum, 2);
      case 'maxGasPrice':
        return top;
      case 'avgGasPrice': {
        const txs = live.map((c) => this.value(c, 'txCount', interval, idx, ts));
        const all = txs.reduce((a, b) => a + b, 0);
        return all === 0 ? 0 : Math.round(values.reduce((a, v, i) => a + v * txs[i]!, 0) / all);
      }
      default:
        return sum;
    }
  }

  /** C(d) = C0 + A(d+1) + B(d+1)(d+2)/2 + J(d) with 0 <= J < A: strictly increasing in d. */
  private cumulative(chainId: string, metric: string, ageDays: number, perDay: number): number {
    const d = Math.round(ageDays);
    const a = Math.max(1, Math.round(perDay));
    const b = Math.max(0, Math.round(perDay / 1000));
    const c0 = a * 400;
    const jitter = hashKey(this.seed, 'cumulative', chainId, metric, d) % a;
    return c0 + a * (d + 1) + (b * (d + 1) * (d + 2)) / 2 + jitter;
  }
}

function monthDays(ts: number): number {
  const d = new Date(ts * 1000);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
