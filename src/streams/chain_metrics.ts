import type { StreamDecl } from '../decl/stream.js';
import { timeRangeCheck, timeRangeQuery } from './common.js';
import { CHUNKS_OPTION } from './chain_reads.js';

/** The 17 metrics of the metrics service (docs/services.md, Metrics service). */
export const METRICS = [
  'activeAddresses', 'activeSenders', 'cumulativeTxCount', 'cumulativeAddresses', 'cumulativeContracts',
  'cumulativeDeployers', 'contracts', 'deployers', 'gasUsed', 'txCount', 'avgGps', 'maxGps', 'avgTps',
  'maxTps', 'avgGasPrice', 'maxGasPrice', 'feesPaid',
] as const;
export const TIME_INTERVALS = ['hour', 'day', 'week', 'month'] as const;

const DAY = 86_400;
/** Seconds between two points of an interval, at most (a month: 31 days). */
const INTERVAL_SECONDS: Record<(typeof TIME_INTERVALS)[number], number> = { hour: 3600, day: DAY, week: 7 * DAY, month: 31 * DAY };

/** Metrics named cumulative*, avg*, max*, and contracts, deployers, feesPaid accept only `day`. */
export function dayOnly(metric: string): boolean {
  return /^(cumulative|avg|max)/.test(metric) || ['contracts', 'deployers', 'feesPaid'].includes(metric);
}

export const chainMetrics: StreamDecl = {
  table: 'chain_metrics',
  doc: 'time series of chain metrics from the metrics service',
  service: 'metrics',
  endpoint: '/v2/chains/{chainId}/metrics/{metric}',
  items: 'results',
  weight: 100,
  pageSize: { min: 1, max: 2160, default: 2160 },
  options: {
    chainIds: { kind: 'metrics_chain_id[]', required: true, doc: 'EVM chain ids or total, mainnet, testnet' },
    metrics: { kind: 'metric[]', required: true, doc: `any of ${METRICS.join(', ')}` },
    timeInterval: { kind: 'enum', values: TIME_INTERVALS, doc: 'hour, day (default), week or month' },
    startTimestamp: { kind: 'unix_seconds', doc: 'points at or after it (inclusive)' },
    endTimestamp: { kind: 'unix_seconds', doc: 'points before it (exclusive): a point at or after it is never committed' },
    ...CHUNKS_OPTION,
  },
  check: (s) => {
    const interval = (s.timeInterval as string | undefined) ?? 'day';
    const out: Array<[string, string]> = [];
    (s.metrics as string[]).forEach((m, i) => {
      if (interval !== 'day' && dayOnly(m)) out.push([`metrics[${i}]`, `metric ${m} accepts only timeInterval day, not ${interval}`]);
    });
    out.push(...timeRangeCheck(s));
    return out;
  },
  partitions: (s) => {
    const interval = (s.timeInterval as string | undefined) ?? 'day';
    const query: Record<string, string> = { timeInterval: interval, ...timeRangeQuery(s) };
    return (s.chainIds as string[]).flatMap((chainId) =>
      (s.metrics as string[]).map((metric) => ({
        id: `${chainId}/${metric}/${interval}`,
        path: { chainId, metric },
        query,
        values: { chainId, metric, timeInterval: interval },
      })),
    );
  },
  // A value is a JSON number: feesPaid in wei passes 2^53; its digits are kept as sent (value_text).
  exactNumbers: ['value'],
  refresh: 'merge',
  mergeScope: 'partition',
  timeCursor: { column: 'timestamp', start: 'startTimestamp', startOption: 'startTimestamp', end: 'endTimestamp', endOption: 'endTimestamp', step: (q) => INTERVAL_SECONDS[q.timeInterval as (typeof TIME_INTERVALS)[number]] ?? DAY },
  key: ['chain_id', 'metric', 'time_interval', 'timestamp'],
  columns: [
    { name: 'chain_id', type: 'varchar', partition: 'chainId', doc: 'EVM chain id or total/mainnet/testnet' },
    { name: 'metric', type: 'varchar', partition: 'metric', doc: 'metric name' },
    { name: 'time_interval', type: 'varchar', partition: 'timeInterval', doc: 'hour, day, week or month' },
    { name: 'timestamp', type: 'timestamptz', from: 'timestamp', required: true, doc: 'start of the interval (UTC)' },
    { name: 'value', type: 'double', from: 'value', required: true, doc: 'metric value over the interval (as a double: use value_text for every digit of a count or an amount past 2^53, such as feesPaid in wei)' },
    { name: 'value_text', type: 'varchar', from: 'value', required: true, doc: 'the value exactly as sent' },
  ],
};
