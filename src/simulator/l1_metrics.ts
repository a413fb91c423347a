// The metrics service's L1 validator fee series, read off the L1 validators of the validator world
// (validators.ts): the same validation, node and subnet ids, and fees that agree with the balances
// the data service lists. A validation pays `rate` nAVAX a second from its creation until its
// balance is spent, so what it has paid by t is min(balance, rate * (t - creation)); a day's fee is
// what it paid within the day, a cumulative point what it had paid by the day's end. Points are
// daily (0:00 UTC), newest first, from the day the first validation of the scope was created to
// the day of the world's now; that day is still running, so its point grows as the clock moves.
//
// The endpoints take no network and no paging: the series are mainnet's, served whole in one
// answer. An id the world does not know has no points (an empty `results`), as for the staking
// series of an unknown subnet.
import { ExactNumber } from '../json.js';
import { isBlockchainId, nodeIdProblem } from '../ids.js';
import { badRequest } from './errors.js';
import { fromArray, iterate, type Listing } from './listing.js';
import { intParam } from './params.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import { validatorWorld } from './validators.js';

const DAY = 86_400;
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export const L1_TOTAL_METRICS = ['totalCumulativeFeesDaily', 'totalValidatorFeesDaily', 'totalPayingValidatorsDaily'] as const;
export const L1_VALIDATION_METRICS = ['validationCumulativeFeesDaily', 'validationFeesDaily'] as const;
export const L1_NODE_METRICS = ['perNodeCumulativeFeesPaid', 'perNodeDailyFeesPaid'] as const;
export const L1_SUBNET_METRICS = ['perSubnetDailyFeesPaid', 'perSubnetCumulativeFeesPaid', 'perSubnetPayingValidators'] as const;

export type L1Scope = 'all' | 'validation' | 'node' | 'subnet';
type Measure = 'daily' | 'cumulative' | 'paying';

/** What each metric sums over its scope's validations. */
const MEASURE: Record<string, Measure> = {
  totalCumulativeFeesDaily: 'cumulative', totalValidatorFeesDaily: 'daily', totalPayingValidatorsDaily: 'paying',
  validationCumulativeFeesDaily: 'cumulative', validationFeesDaily: 'daily',
  perNodeCumulativeFeesPaid: 'cumulative', perNodeDailyFeesPaid: 'daily',
  perSubnetDailyFeesPaid: 'daily', perSubnetCumulativeFeesPaid: 'cumulative', perSubnetPayingValidators: 'paying',
};

export interface L1MetricPoint {
  value: number | ExactNumber;
  timestamp: number;
}

export interface L1MetricRange {
  startTimestamp?: number;
  endTimestamp?: number;
}

function jsonNumber(n: bigint): number | ExactNumber {
  return n <= SAFE ? Number(n) : new ExactNumber(n.toString());
}

/**
 * A series as served at `at`: `id` names the validation, node or subnet (ignored for `all`).
 * Bounds as the staking series take them: points at or after startTimestamp, before endTimestamp.
 */
export function listL1Metric(ctx: Pick<RouteContext, 'world'>, scope: L1Scope, id: string, metric: string, q: L1MetricRange, at: number): Listing<L1MetricPoint> {
  const measure = MEASURE[metric]!;
  const fees = validatorWorld(ctx.world)
    .l1Fees('mainnet')
    .filter((v) => v.creation <= at)
    .filter((v) => scope === 'all' || (scope === 'validation' ? v.validationId : scope === 'node' ? v.nodeId : v.subnetId) === id);
  if (!fees.length) return fromArray([]);
  let lo = Math.floor(Math.min(...fees.map((v) => v.creation)) / DAY) * DAY;
  let hi = Math.floor(at / DAY) * DAY;
  if (q.startTimestamp !== undefined) lo = Math.max(lo, Math.ceil(q.startTimestamp / DAY) * DAY);
  if (q.endTimestamp !== undefined) hi = Math.min(hi, Math.floor((q.endTimestamp - 1) / DAY) * DAY);
  const paid = (v: (typeof fees)[number], t: number) => {
    const due = v.rate * BigInt(Math.max(0, t - v.creation));
    return due < v.balance ? due : v.balance;
  };
  return {
    length: hi >= lo ? (hi - lo) / DAY + 1 : 0,
    at: (k) => {
      const timestamp = hi - k * DAY;
      const end = Math.min(at, timestamp + DAY);
      let n = 0n;
      for (const v of fees) {
        const day = paid(v, end) - paid(v, timestamp);
        n += measure === 'cumulative' ? paid(v, end) : measure === 'daily' ? day : day > 0n ? 1n : 0n;
      }
      return { value: jsonNumber(n), timestamp };
    },
  };
}

// ---- routes (every 400 names its parameter) ----

function metricOf(raw: string, metrics: readonly string[]): string {
  if (!metrics.includes(raw)) throw badRequest(`metric must be one of: ${metrics.join(', ')}`);
  return raw;
}

function idOf(scope: L1Scope, raw: string): string {
  if (scope === 'node') {
    const problem = nodeIdProblem(raw);
    if (problem) throw badRequest(`nodeId: "${raw}" ${problem}`);
  } else if (!isBlockchainId(raw)) {
    throw badRequest(`${scope === 'validation' ? 'l1ValidationId' : 'subnetId'} must be an id (cb58 of 32 bytes), got "${raw}"`);
  }
  return raw;
}

function series(ctx: RouteContext, scope: L1Scope, id: string, metric: string): unknown {
  const startTimestamp = intParam(ctx.query, 'startTimestamp', 0, Number.MAX_SAFE_INTEGER);
  const endTimestamp = intParam(ctx.query, 'endTimestamp', 0, Number.MAX_SAFE_INTEGER);
  if (startTimestamp !== undefined && endTimestamp !== undefined && startTimestamp > endTimestamp) throw badRequest('startTimestamp must not be greater than endTimestamp');
  const range = { ...(startTimestamp !== undefined ? { startTimestamp } : {}), ...(endTimestamp !== undefined ? { endTimestamp } : {}) };
  const list = listL1Metric(ctx, scope, id, metric, range, ctx.world.now);
  return { results: [...iterate(list)] };
}

const scoped = (scope: Exclude<L1Scope, 'all'>, metrics: readonly string[]) => (ctx: RouteContext) => {
  const id = idOf(scope, ctx.params[0]!);
  return series(ctx, scope, id, metricOf(ctx.params[1]!, metrics));
};

export const L1_METRIC_ROUTES: RouteTable = [
  { pattern: ['v2', 'validators', 'metrics', null], route: { name: 'l1TotalMetrics', service: 'metrics', weight: WEIGHTS.l1TotalMetrics, handle: (ctx) => series(ctx, 'all', '', metricOf(ctx.params[0]!, L1_TOTAL_METRICS)) } },
  { pattern: ['v2', 'validation', null, 'metrics', null], route: { name: 'l1ValidationMetrics', service: 'metrics', weight: WEIGHTS.l1ValidationMetrics, handle: scoped('validation', L1_VALIDATION_METRICS) } },
  { pattern: ['v2', 'validator', null, 'metrics', null], route: { name: 'l1NodeMetrics', service: 'metrics', weight: WEIGHTS.l1NodeMetrics, handle: scoped('node', L1_NODE_METRICS) } },
  { pattern: ['v2', 'subnet', null, 'metrics', null], route: { name: 'l1SubnetMetrics', service: 'metrics', weight: WEIGHTS.l1SubnetMetrics, handle: scoped('subnet', L1_SUBNET_METRICS) } },
];
