// The data service's account of a key's own use (getApiUsageMetrics, getApiLogs): what the
// simulator really served each key, request by request, and the usage series made from it. The
// server records every keyed request a route answered (or the limiter refused) with its status,
// its compute units and its time on the server clock; the two routes (usage_routes.ts) answer from
// that record as production does (docs/services.md, Usage of the API key). Nothing served holds
// the key: a key is known by an id, an alias and an organization the simulator gives it.
import { fromArray, type Listing } from './listing.js';
import { uuidOf } from './tokens.js';

export const USAGE_INTERVALS = ['minute', 'hourly', 'daily', 'weekly', 'monthly'] as const;
export type UsageInterval = (typeof USAGE_INTERVALS)[number];
export const USAGE_GROUP_BY = ['requestPath', 'responseCode', 'chainId', 'apiKeyId', 'requestType'] as const;
export type UsageGroupBy = (typeof USAGE_GROUP_BY)[number];
/** What `aggregateDuration` says of each interval (the OpenAPI gives the field no values). */
const AGGREGATE_DURATION: Record<UsageInterval, string> = { minute: '1m', hourly: '1h', daily: '1d', weekly: '1w', monthly: '1M' };
/** The region every answer comes from (the OpenAPI gives no values). */
export const HOST_REGION = 'us-east-1';

export const DAY = 86_400;

/** Who a key is, as the service shows it: never the key itself. */
export interface Caller {
  apiKeyId: string;
  apiKeyAlias: string;
  orgId: string;
}

/** One request the simulator answered for a key. */
export interface ServedRequest {
  /** The key's own count of requests before this one. */
  n: number;
  /** Arrival on the server clock, ms. */
  at: number;
  path: string;
  chainId?: string;
  status: number;
  cu: number;
  durationMs: number;
  ipAddress: string;
  host: string;
  userAgent: string;
}

export interface LogEntry {
  orgId: string;
  logId: string;
  eventTimestamp: number;
  apiKeyId: string;
  apiKeyAlias: string;
  hostRegion: string;
  requestType: 'data';
  requestPath: string;
  apiCreditsConsumed: number;
  requestDurationMsecs: number;
  responseCode: number;
  chainId?: string;
  metadata: { ipAddress: string; host: string; userAgent: string };
}

export interface UsageValue {
  groupedBy: UsageGroupBy | 'None';
  groupValue?: string | number;
  totalRequests: number;
  requestsPerSecond: number;
  successRatePercent: number;
  medianResponseTimeMsecs: number;
  invalidRequests: number;
  apiCreditsUsed: number;
  apiCreditsWasted: number;
}

export interface UsageMetrics {
  aggregateDuration: string;
  orgId: string;
  metrics: Array<{ timestamp: number; values: UsageValue[] }>;
}

/** The filters and time range both routes take. */
export interface UsageFilter {
  /** Unix seconds, rounded down to the day; none: from the first request kept. */
  startDay?: number;
  /** Unix seconds, rounded down to the day, which is included; none: up to now. */
  endDay?: number;
  chainId?: string;
  responseCode?: number;
  requestType?: 'data' | 'rpc';
  apiKeyId?: string;
  requestPath?: string;
}

/** The requests kept per key: the oldest go first past this (production keeps a retention period). */
export const KEPT_REQUESTS = 100_000;

interface KeyRecord {
  caller: Caller;
  requests: ServedRequest[];
  /** Requests recorded for the key, those dropped included. */
  count: number;
}

export class UsageLog {
  private readonly byKey = new Map<string, KeyRecord>();
  private readonly started: number;

  /** `keys`: the keys the simulator accepts, numbered in that order; otherwise keys are numbered as they come. */
  constructor(private readonly seed: number, now: () => number, private readonly keys?: readonly string[], private readonly kept = KEPT_REQUESTS) {
    // Log ids of two simulator runs with the same seed must differ: the start time is part of them.
    this.started = now();
  }

  /** The key's identity (made on its first request). */
  caller(apiKey: string): Caller {
    return this.record(apiKey).caller;
  }

  private record(apiKey: string): KeyRecord {
    let r = this.byKey.get(apiKey);
    if (!r) {
      const listed = this.keys?.indexOf(apiKey) ?? -1;
      const index = listed >= 0 ? listed : (this.keys?.length ?? 0) + this.byKey.size;
      const caller = {
        apiKeyId: uuidOf('chainlake-sim', 'apiKeyId', String(this.seed), String(index)),
        apiKeyAlias: `simulator key ${index + 1}`,
        orgId: uuidOf('chainlake-sim', 'orgId', String(this.seed), String(index)),
      };
      r = { caller, requests: [], count: 0 };
      this.byKey.set(apiKey, r);
    }
    return r;
  }

  served(apiKey: string, req: Omit<ServedRequest, 'n'>): void {
    const r = this.record(apiKey);
    r.requests.push({ ...req, n: r.count++ });
    // Dropped a tenth at a time, so that recording stays O(1) on average.
    if (r.requests.length > this.kept) r.requests.splice(0, Math.max(1, Math.floor(this.kept / 10)));
  }

  /** How many requests the key has made so far: where a listing of its logs is frozen. */
  countOf(caller: Caller): number {
    return this.byCaller(caller)?.count ?? 0;
  }

  /** The requests kept for a key, oldest first (tests compare the lake with them). */
  requestsOf(caller: Caller): readonly ServedRequest[] {
    return this.byCaller(caller)?.requests ?? [];
  }

  private byCaller(caller: Caller): KeyRecord | undefined {
    for (const r of this.byKey.values()) if (r.caller.apiKeyId === caller.apiKeyId) return r;
    return undefined;
  }

  private matching(caller: Caller, f: UsageFilter, upTo = Infinity): ServedRequest[] {
    const lo = f.startDay === undefined ? -Infinity : f.startDay * 1000;
    const hi = f.endDay === undefined ? Infinity : (f.endDay + DAY) * 1000;
    return this.requestsOf(caller).filter((s) =>
      s.n < upTo && s.at >= lo && s.at < hi
      && (f.chainId === undefined || s.chainId === f.chainId)
      && (f.responseCode === undefined || s.status === f.responseCode)
      && (f.requestType === undefined || f.requestType === 'data')
      && (f.apiKeyId === undefined || f.apiKeyId === caller.apiKeyId)
      && (f.requestPath === undefined || s.path === f.requestPath));
  }

  /** The key's log entries, newest first, of the requests made before its `upTo`-th. */
  logs(caller: Caller, f: UsageFilter, upTo: number): Listing<LogEntry> {
    return fromArray(this.matching(caller, f, upTo).reverse().map((s) => logEntry(caller, this.seed, this.started, s)));
  }

  /** The usage series: a point per interval with requests, a value per group. */
  metrics(caller: Caller, f: UsageFilter, interval: UsageInterval, groupBy?: UsageGroupBy): UsageMetrics {
    const points = new Map<number, Map<string, { value: string | number | undefined; reqs: ServedRequest[] }>>();
    for (const s of this.matching(caller, f)) {
      const t = intervalStart(Math.floor(s.at / 1000), interval);
      const groups = points.get(t) ?? new Map();
      points.set(t, groups);
      const value = groupBy === undefined ? undefined : groupValueOf(caller, s, groupBy);
      const key = JSON.stringify(value ?? null);
      const g = groups.get(key) ?? { value, reqs: [] };
      groups.set(key, g);
      g.reqs.push(s);
    }
    const metrics = [...points].sort(([a], [b]) => a - b).map(([timestamp, groups]) => ({
      timestamp,
      values: [...groups.values()].map((g) => usageValue(g.reqs, groupBy, g.value, intervalSeconds(timestamp, interval))),
    }));
    return { aggregateDuration: AGGREGATE_DURATION[interval], orgId: caller.orgId, metrics };
  }
}

function logEntry(caller: Caller, seed: number, started: number, s: ServedRequest): LogEntry {
  return {
    orgId: caller.orgId,
    logId: uuidOf('chainlake-sim', 'logId', String(seed), String(started), caller.apiKeyId, String(s.n)),
    // Unix seconds, as every timestamp the data service sends (docs/services.md, Usage of the API key).
    eventTimestamp: Math.floor(s.at / 1000),
    apiKeyId: caller.apiKeyId,
    apiKeyAlias: caller.apiKeyAlias,
    hostRegion: HOST_REGION,
    requestType: 'data',
    requestPath: s.path,
    apiCreditsConsumed: s.cu,
    requestDurationMsecs: s.durationMs,
    responseCode: s.status,
    ...(s.chainId !== undefined ? { chainId: s.chainId } : {}),
    metadata: { ipAddress: s.ipAddress, host: s.host, userAgent: s.userAgent },
  };
}

function groupValueOf(caller: Caller, s: ServedRequest, by: UsageGroupBy): string | number | undefined {
  switch (by) {
    case 'requestPath': return s.path;
    case 'responseCode': return s.status;
    case 'chainId': return s.chainId;
    case 'apiKeyId': return caller.apiKeyId;
    case 'requestType': return 'data';
  }
}

/** A 4xx but a 429 is the client's mistake: counted invalid, its CU wasted. A 429 costs nothing. */
export const isInvalid = (status: number) => status >= 400 && status < 500 && status !== 429;

function usageValue(reqs: ServedRequest[], groupBy: UsageGroupBy | undefined, value: string | number | undefined, seconds: number): UsageValue {
  const invalid = reqs.filter((s) => isInvalid(s.status));
  const ok = reqs.filter((s) => s.status >= 200 && s.status < 300).length;
  return {
    groupedBy: groupBy ?? 'None',
    ...(value !== undefined ? { groupValue: value } : {}),
    totalRequests: reqs.length,
    requestsPerSecond: reqs.length / seconds,
    successRatePercent: (100 * ok) / reqs.length,
    medianResponseTimeMsecs: median(reqs.map((s) => s.durationMs)),
    invalidRequests: invalid.length,
    apiCreditsUsed: reqs.reduce((n, s) => n + s.cu, 0),
    apiCreditsWasted: invalid.reduce((n, s) => n + s.cu, 0),
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The start of the interval holding t (Unix seconds, UTC): weeks start on Monday, months on the 1st. */
export function intervalStart(t: number, interval: UsageInterval): number {
  switch (interval) {
    case 'minute': return t - (t % 60);
    case 'hourly': return t - (t % 3600);
    case 'daily': return t - (t % DAY);
    // 1970-01-05 was a Monday.
    case 'weekly': return t - ((t - 4 * DAY) % (7 * DAY) + 7 * DAY) % (7 * DAY);
    case 'monthly': {
      const d = new Date(t * 1000);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
    }
  }
}

function intervalSeconds(start: number, interval: UsageInterval): number {
  switch (interval) {
    case 'minute': return 60;
    case 'hourly': return 3600;
    case 'daily': return DAY;
    case 'weekly': return 7 * DAY;
    case 'monthly': {
      const d = new Date(start * 1000);
      return (Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000) - start;
    }
  }
}
