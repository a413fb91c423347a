import type { Column, OptionSpec, Partition, StreamConfig, StreamDecl } from '../decl/stream.js';
import { apiUsageMetrics } from './api_usage_metrics.js';
import { timeRangeCheck, timeRangeQuery } from './common.js';

export const RPC_INTERVALS = ['hourly', 'daily', 'weekly', 'monthly'] as const;
const SUBNET_GROUP_BY = ['rpcMethod', 'responseCode', 'rlBypassToken'] as const;
const PRIMARY_GROUP_BY = ['rpcMethod', 'requestPath', 'responseCode', 'country', 'continent', 'userAgent'] as const;

const options = (groupBy: readonly string[]): Record<string, OptionSpec> => ({
  timeInterval: { kind: 'enum', values: RPC_INTERVALS, doc: 'hourly, daily (default), weekly or monthly' },
  groupBy: { kind: 'enum', values: groupBy, doc: `a value per ${groupBy.join(', ')} in each interval; default one value (groupedBy None)` },
  rpcMethod: { kind: 'string', doc: 'only requests of this RPC method (eth_call)' },
  startTimestamp: { kind: 'unix_seconds', doc: 'the first run (later runs start from the newest committed point); default the service\'s' },
  endTimestamp: { kind: 'unix_seconds', doc: 'points before it (exclusive); default now' },
});

/** One partition an entry, named by the scope and query; `filters` keeps two entries' rows apart. */
function partition(scope: Record<string, string>, s: StreamConfig): Partition {
  const timeInterval = (s.timeInterval as string | undefined) ?? 'daily';
  const own: Record<string, string> = { ...scope, timeInterval };
  if (s.groupBy !== undefined) own.groupBy = String(s.groupBy);
  const filters = s.rpcMethod === undefined ? '' : new URLSearchParams({ rpcMethod: String(s.rpcMethod) }).toString();
  const query = { ...own, ...(s.rpcMethod !== undefined ? { rpcMethod: String(s.rpcMethod) } : {}), ...timeRangeQuery(s) };
  const id = [...Object.entries(own).map(([k, v]) => `${k}=${v}`), ...(filters ? [filters] : [])].join('/');
  return { id, path: {}, query, values: { ...scope, timeInterval, filters } };
}

/** The usage series' own columns after its partition's: the point's time, its group and its figures. */
const valueColumns = (groupBy: readonly string[]): Column[] => [
  ...apiUsageMetrics.columns.filter((c) => c.name === 'timestamp'),
  { name: 'grouped_by', type: 'varchar', from: 'groupedBy', required: true, doc: `${groupBy.join(', ')}, or None` },
  ...apiUsageMetrics.columns.filter((c) => !['time_interval', 'filters', 'timestamp', 'grouped_by'].includes(c.name)),
];

const COMMON = {
  service: 'data',
  items: 'metrics',
  explode: 'values',
  weight: 200,
  needsApiKey: true,
  // One answer holds the whole range: no page size.
  pageSize: { min: 0, max: 0, default: 0 },
  refresh: 'merge',
  mergeScope: 'partition',
  // The running interval's point grows until it ends: each run fetches again from the newest one.
  timeCursor: { column: 'timestamp', start: 'startTimestamp', startOption: 'startTimestamp', endOption: 'endTimestamp' },
  knownFields: ['aggregateDuration'],
} satisfies Partial<StreamDecl>;

const TIME_INTERVAL: Column = { name: 'time_interval', type: 'varchar', partition: 'timeInterval', doc: 'hourly, daily, weekly or monthly' };
const FILTERS: Column = { name: 'filters', type: 'varchar', partition: 'filters', doc: "the entry's rpcMethod filter as a query string, '' for none" };

export const subnetRpcUsageMetrics: StreamDecl = {
  ...COMMON,
  table: 'subnet_rpc_usage_metrics',
  doc: "the pipeline's API key's use of an L1's (or the C-Chain's) RPC through the data service's provider: requests, compute units, success rate and latency per interval and group",
  endpoint: '/v1/subnetRpcUsageMetrics',
  options: {
    chainIds: { kind: 'string[]', required: true, doc: 'EVM chain ids, a series each' },
    ...options(SUBNET_GROUP_BY),
  },
  check: (s) => {
    const out = timeRangeCheck(s);
    (s.chainIds as string[]).forEach((c, i) => {
      if (!/^[0-9]{1,20}$/.test(c)) out.push([`chainIds[${i}]`, `${JSON.stringify(c)} is not an EVM chain id (digits, such as 43114)`]);
    });
    return out;
  },
  partitions: (s) => (s.chainIds as string[]).map((chainId) => partition({ chainId }, s)),
  key: ['chain_id', 'time_interval', 'filters', 'timestamp', 'grouped_by', 'group_value'],
  keyDoc: 'group_value is NULL for groupedBy None',
  knownFields: [...COMMON.knownFields, 'chainId'],
  columns: [{ name: 'chain_id', type: 'varchar', partition: 'chainId', doc: 'EVM chain id as given in the pipeline' }, TIME_INTERVAL, FILTERS, ...valueColumns(SUBNET_GROUP_BY)],
};

export const primaryRpcUsageMetrics: StreamDecl = {
  ...COMMON,
  table: 'primary_rpc_usage_metrics',
  doc: "the pipeline's API key's use of the primary network's RPC through the data service's provider: requests, compute units, success rate and latency per interval and group",
  endpoint: '/v1/primaryNetworkRpcUsageMetrics',
  options: {
    network: { kind: 'enum', values: ['mainnet', 'testnet'], required: true, doc: 'mainnet or testnet (the answer names the network so)' },
    ...options(PRIMARY_GROUP_BY),
  },
  check: timeRangeCheck,
  partitions: (s) => [partition({ network: String(s.network) }, s)],
  key: ['network', 'time_interval', 'filters', 'timestamp', 'grouped_by', 'group_value'],
  keyDoc: 'group_value is NULL for groupedBy None',
  knownFields: [...COMMON.knownFields, 'network'],
  columns: [{ name: 'network', type: 'varchar', partition: 'network', doc: 'mainnet or testnet' }, TIME_INTERVAL, FILTERS, ...valueColumns(PRIMARY_GROUP_BY)],
};
