// A key's use of the RPC endpoints the data service's provider runs (`/v1/subnetRpcUsageMetrics`,
// `/v1/primaryNetworkRpcUsageMetrics`). The simulator runs no such RPC gateway, so the traffic is
// made up, per key: each hour of the last RPC_DAYS days holds, per RPC method, a count of requests
// that is a pure function of (seed, key, chain or network, hour, method). Every interval and every
// grouping adds up those same hourly counts, so a day is the sum of its hours and a grouped series
// sums to the ungrouped one.
import { isEvmChainId, type Network } from '../ids.js';
import { badRequest, HttpError } from './errors.js';
import { Rng } from './hash.js';
import { enumParam, intParam, networkParam, single } from './params.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import { intervalStart, type UsageInterval } from './usage.js';

const HOUR = 3600;
/** How far back the made-up traffic goes. */
export const RPC_DAYS = 14;
export const RPC_INTERVALS = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export const SUBNET_RPC_GROUP_BY = ['rpcMethod', 'responseCode', 'rlBypassToken'] as const;
export const PRIMARY_RPC_GROUP_BY = ['rpcMethod', 'requestPath', 'responseCode', 'country', 'continent', 'userAgent'] as const;
type GroupBy = (typeof SUBNET_RPC_GROUP_BY)[number] | (typeof PRIMARY_RPC_GROUP_BY)[number];

/** Methods and what a request of each costs (CU). */
const METHODS: Record<string, number> = { eth_blockNumber: 1, eth_call: 2, eth_getBalance: 1, eth_getLogs: 10 };

interface Cell {
  method: string;
  ok: number;
  invalid: number;
  medianMs: number;
}

export interface RpcValue {
  totalRequests: number;
  apiCreditsUsed: number;
  requestsPerSecond: number;
  successRatePercent: number;
  medianResponseTimeMsecs: number;
  invalidRequests: number;
  apiCreditsWasted: number;
  groupedBy: GroupBy | 'None';
  groupValue?: string | number;
}

/** The requests of one hour of a key's traffic on one scope (a chain id, or a network), per method. */
function hourCells(seed: number, apiKeyId: string, scope: string, hour: number): Cell[] {
  return Object.keys(METHODS).map((method) => {
    const r = Rng.of(seed, 'rpc', apiKeyId, scope, hour, method);
    const total = r.int(120);
    const invalid = Math.floor(total * r.float() * 0.05);
    return { method, ok: total - invalid, invalid, medianMs: 5 + r.int(200) };
  });
}

/** The one value the made-up traffic has for a field that is not per method. */
function fixedValue(by: GroupBy): string {
  switch (by) {
    case 'requestPath': return '/ext/bc/C/rpc';
    case 'country': return 'DE';
    case 'continent': return 'EU';
    case 'userAgent': return 'chainlake-sim-client/1.0';
    default: return 'none';
  }
}

function value(cells: Cell[], seconds: number, groupBy: GroupBy | undefined, groupValue: string | number | undefined): RpcValue {
  const total = cells.reduce((a, c) => a + c.ok + c.invalid, 0);
  const invalid = cells.reduce((a, c) => a + c.invalid, 0);
  const medians = cells.map((c) => c.medianMs).sort((a, b) => a - b);
  const m = medians.length >> 1;
  return {
    totalRequests: total,
    apiCreditsUsed: cells.reduce((a, c) => a + (c.ok + c.invalid) * METHODS[c.method]!, 0),
    requestsPerSecond: total / seconds,
    successRatePercent: total === 0 ? 100 : (100 * (total - invalid)) / total,
    medianResponseTimeMsecs: medians.length === 0 ? 0 : medians.length % 2 ? medians[m]! : (medians[m - 1]! + medians[m]!) / 2,
    invalidRequests: invalid,
    apiCreditsWasted: cells.reduce((a, c) => a + c.invalid * METHODS[c.method]!, 0),
    groupedBy: groupBy ?? 'None',
    ...(groupValue !== undefined ? { groupValue } : {}),
  };
}

export interface RpcQuery {
  timeInterval: UsageInterval;
  startTimestamp?: number;
  endTimestamp?: number;
  groupBy?: GroupBy;
  rpcMethod?: string;
}

/**
 * The key's RPC usage on a scope at `now`: a point per interval holding traffic, oldest first, a
 * value per group. A cell split by response code gives its valid requests as 200, the others as 400.
 */
export function rpcUsage(seed: number, apiKeyId: string, scope: string, q: RpcQuery, now: number): Array<{ timestamp: number; values: RpcValue[] }> {
  const first = Math.floor((now - RPC_DAYS * 86_400) / HOUR);
  const last = Math.floor(now / HOUR);
  const points = new Map<number, Map<string, { value: string | number | undefined; cells: Cell[] }>>();
  for (let h = first; h <= last; h++) {
    const t = h * HOUR;
    if (q.startTimestamp !== undefined && t < q.startTimestamp) continue;
    if (q.endTimestamp !== undefined && t >= q.endTimestamp) continue;
    const start = intervalStart(t, q.timeInterval);
    const groups = points.get(start) ?? new Map();
    points.set(start, groups);
    for (const c of hourCells(seed, apiKeyId, scope, h)) {
      if (q.rpcMethod !== undefined && c.method !== q.rpcMethod) continue;
      const parts: Array<[string | number | undefined, Cell]> =
        q.groupBy === 'responseCode' ? [[200, { ...c, invalid: 0 }], [400, { ...c, ok: 0 }]]
          : q.groupBy === 'rpcMethod' ? [[c.method, c]]
            : q.groupBy === undefined ? [[undefined, c]] : [[fixedValue(q.groupBy), c]];
      for (const [v, cell] of parts) {
        const key = JSON.stringify(v ?? null);
        const g = groups.get(key) ?? { value: v, cells: [] };
        groups.set(key, g);
        g.cells.push(cell);
      }
    }
  }
  return [...points].sort(([a], [b]) => a - b).map(([timestamp, groups]) => ({
    timestamp,
    values: [...groups.values()].map((g) => value(g.cells, Math.max(1, Math.min(now + 1, nextStart(timestamp, q.timeInterval)) - timestamp), q.groupBy, g.value)),
  }));
}

function nextStart(t: number, interval: UsageInterval): number {
  if (interval === 'hourly') return t + HOUR;
  if (interval === 'daily') return t + 86_400;
  if (interval === 'weekly') return t + 7 * 86_400;
  const d = new Date(t * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
}

const AGGREGATE: Record<string, string> = { hourly: '1h', daily: '1d', weekly: '7d', monthly: '1M' };

function query(ctx: RouteContext, groupBys: readonly GroupBy[]): RpcQuery {
  const q = ctx.query;
  const start = intParam(q, 'startTimestamp', 0);
  const end = intParam(q, 'endTimestamp', 0);
  if (start !== undefined && end !== undefined && start > end) throw badRequest('startTimestamp must not be after endTimestamp');
  const groupBy = enumParam(q, 'groupBy', groupBys);
  const rpcMethod = single(q, 'rpcMethod');
  return {
    timeInterval: enumParam(q, 'timeInterval', RPC_INTERVALS) ?? 'daily',
    ...(start !== undefined ? { startTimestamp: start } : {}), ...(end !== undefined ? { endTimestamp: end } : {}),
    ...(groupBy !== undefined ? { groupBy } : {}), ...(rpcMethod !== undefined ? { rpcMethod } : {}),
  };
}

function callerId(ctx: RouteContext): string {
  if (!ctx.caller) throw new HttpError(401, 'An API key is required (x-glacier-api-key)');
  return ctx.caller.apiKeyId;
}

function subnetRpc(ctx: RouteContext): unknown {
  const key = callerId(ctx);
  const chainId = single(ctx.query, 'chainId');
  if (chainId === undefined) throw badRequest('chainId is required');
  if (!isEvmChainId(chainId)) throw badRequest(`chainId must be an EVM chain id, got "${chainId}"`);
  const q = query(ctx, SUBNET_RPC_GROUP_BY);
  return { aggregateDuration: AGGREGATE[q.timeInterval], metrics: rpcUsage(ctx.world.seed, key, chainId, q, ctx.world.now), chainId };
}

function primaryRpc(ctx: RouteContext): unknown {
  const key = callerId(ctx);
  const raw = single(ctx.query, 'network');
  if (raw === undefined) throw badRequest('network is required');
  const network: Network = networkParam(raw);
  const q = query(ctx, PRIMARY_RPC_GROUP_BY);
  const named = network === 'mainnet' ? 'mainnet' : 'testnet';
  return { aggregateDuration: AGGREGATE[q.timeInterval], metrics: rpcUsage(ctx.world.seed, key, named, q, ctx.world.now), network: named };
}

export const RPC_USAGE_ROUTES: RouteTable = [
  { pattern: ['v1', 'subnetRpcUsageMetrics'], route: { name: 'subnetRpcUsage', service: 'data', weight: WEIGHTS.subnetRpcUsage, handle: subnetRpc } },
  { pattern: ['v1', 'primaryNetworkRpcUsageMetrics'], route: { name: 'primaryRpcUsage', service: 'data', weight: WEIGHTS.primaryRpcUsage, handle: primaryRpc } },
];
