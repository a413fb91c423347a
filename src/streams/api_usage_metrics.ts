import type { Column, OptionSpec, Partition, StreamConfig, StreamDecl } from '../decl/stream.js';
import { timeRangeCheck, timeRangeQuery } from './common.js';

export const USAGE_INTERVALS = ['minute', 'hourly', 'daily', 'weekly', 'monthly'] as const;
export const USAGE_GROUP_BY = ['requestPath', 'responseCode', 'chainId', 'apiKeyId', 'requestType'] as const;

/** The filters both usage endpoints take, in the order a partition names them. */
const FILTERS = ['chainId', 'responseCode', 'requestType', 'requestPath', 'apiKeyId'] as const;

/** The time range and filters of the usage series and of the logs (docs/services.md, Usage of the API key). */
export const USAGE_OPTIONS: Record<string, OptionSpec> = {
  startTimestamp: { kind: 'unix_seconds', doc: 'the service rounds it down to its UTC day; the first run (later runs start from the newest committed time); default the service\'s' },
  endTimestamp: { kind: 'unix_seconds', doc: 'points before it (exclusive; the service rounds it down to its UTC day); default now' },
  chainId: { kind: 'string', doc: 'only requests for this chain id' },
  responseCode: { kind: 'int', min: 100, doc: 'only requests answered with this HTTP status' },
  requestType: { kind: 'enum', values: ['data', 'rpc'], doc: 'only data or rpc requests' },
  requestPath: { kind: 'string', doc: 'only requests of this path (/v1/chains/43114/blocks)' },
  apiKeyId: { kind: 'string', doc: 'only requests of this API key id (as the service shows it: never the key)' },
};

export function usageCheck(s: StreamConfig): Array<[string, string]> {
  const out = timeRangeCheck(s);
  const code = s.responseCode as number | undefined;
  if (code !== undefined && code > 599) out.push(['responseCode', `${code} is not an HTTP status (100 to 599)`]);
  return out;
}

/**
 * One partition per entry, named by its query. `filters` (the entry's filters as a query string,
 * '' for none) is a column of every row and part of the key, so two entries that differ only in a
 * filter keep their rows apart.
 */
export function usagePartition(prefix: string, s: StreamConfig, own: Record<string, string>): Partition {
  const filters = new URLSearchParams();
  for (const f of FILTERS) if (s[f] !== undefined) filters.set(f, String(s[f]));
  const query: Record<string, string> = { ...own, ...Object.fromEntries(filters), ...timeRangeQuery(s) };
  const named = [...Object.entries(own), ...filters].map(([k, v]) => `${k}=${v}`);
  return { id: [prefix, ...named].join('/'), path: {}, query, values: { ...own, filters: filters.toString() } };
}

export const FILTERS_COLUMN: Column = { name: 'filters', type: 'varchar', partition: 'filters', doc: 'the entry\'s filters as a query string (chainId=43114&responseCode=200), \'\' for none' };

export const apiUsageMetrics: StreamDecl = {
  table: 'api_usage_metrics',
  doc: 'the data service\'s usage of the pipeline\'s API key: requests, compute units, success rate and latency per time interval and group',
  service: 'data',
  endpoint: '/v1/apiUsageMetrics',
  items: 'metrics',
  explode: 'values',
  weight: 200,
  needsApiKey: true,
  // The endpoint takes no page size: one answer holds the whole range.
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    timeInterval: { kind: 'enum', values: USAGE_INTERVALS, doc: 'minute, hourly, daily (default), weekly or monthly' },
    groupBy: { kind: 'enum', values: USAGE_GROUP_BY, doc: 'a value per requestPath, responseCode, chainId, apiKeyId or requestType in each interval; default one value (groupedBy None)' },
    ...USAGE_OPTIONS,
  },
  check: usageCheck,
  partitions: (s) => {
    const own: Record<string, string> = { timeInterval: (s.timeInterval as string | undefined) ?? 'daily' };
    if (s.groupBy !== undefined) own.groupBy = String(s.groupBy);
    return [usagePartition('usage', s, own)];
  },
  refresh: 'merge',
  mergeScope: 'partition',
  // The running interval's point grows until it ends: each run fetches again from the newest one.
  timeCursor: { column: 'timestamp', start: 'startTimestamp', startOption: 'startTimestamp', endOption: 'endTimestamp' },
  key: ['time_interval', 'filters', 'timestamp', 'grouped_by', 'group_value'],
  keyDoc: 'group_value is NULL for groupedBy None, and where a request lacks the grouped field',
  columns: [
    { name: 'time_interval', type: 'varchar', partition: 'timeInterval', doc: 'minute, hourly, daily, weekly or monthly' },
    FILTERS_COLUMN,
    { name: 'timestamp', type: 'timestamptz', from: '_parent.timestamp', required: true, doc: 'start of the interval (UTC)' },
    { name: 'grouped_by', type: 'varchar', from: 'groupedBy', required: true, doc: 'requestPath, responseCode, chainId, apiKeyId, requestType, or None' },
    { name: 'group_value', type: 'varchar', from: 'groupValue', doc: 'the group\'s value (a status code as its digits)' },
    { name: 'total_requests', type: 'bigint', from: 'totalRequests', required: true, doc: 'requests in the interval' },
    { name: 'requests_per_second', type: 'double', from: 'requestsPerSecond', doc: 'requests per second over the interval' },
    { name: 'success_rate_percent', type: 'double', from: 'successRatePercent', doc: 'share of requests that succeeded, %' },
    { name: 'median_response_time_msecs', type: 'double', from: 'medianResponseTimeMsecs', doc: 'median response time, ms' },
    { name: 'invalid_requests', type: 'bigint', from: 'invalidRequests', doc: 'requests the service refused as invalid' },
    { name: 'api_credits_used', type: 'bigint', from: 'apiCreditsUsed', required: true, doc: 'compute units charged' },
    { name: 'api_credits_wasted', type: 'bigint', from: 'apiCreditsWasted', doc: 'compute units charged for invalid requests' },
  ],
};
