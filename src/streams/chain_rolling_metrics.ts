import type { Page } from '../decl/request.js';
import type { Column, ExtractContext, StreamDecl } from '../decl/stream.js';
import { RunError } from '../errors.js';
import { getJson, stamped } from './chain_reads.js';

/** The metrics the rolling windows are published for (ChainRollingWindowMetric). */
export const ROLLING_METRICS = [
  'gasUsed', 'txCount', 'avgGps', 'maxGps', 'avgTps', 'maxTps', 'avgGasPrice', 'maxGasPrice', 'feesPaid', 'contracts', 'deployers', 'activeAddresses', 'activeSenders',
] as const;

/**
 * One GET a partition, whose answer is one object (or holds it under `field`): one row, stamped
 * with when chainlake asked where `stamp` (the service's figures now: each run keeps a snapshot).
 */
export function oneAnswer(o: { field?: string; stamp: boolean }): (x: ExtractContext) => AsyncGenerator<Page> {
  return async function* (x) {
    const takenAt = Math.floor(Date.now() / 1000);
    const body = await getJson(x, x.path, x.endpoint, x.query);
    const item = o.field === undefined ? body : body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>)[o.field] : undefined;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new RunError(`${x.endpoint}: the answer has no ${o.field === undefined ? 'object' : `${o.field} object`}`);
    yield { items: o.stamp ? stamped([item], { takenAt }) : [item] };
  };
}

export const resultSnapshot = oneAnswer({ field: 'result', stamp: true });

/** The windows of a rolling summary (ChainRollingWindowMetricsValue, ICMRollingWindowMetricsValue). */
export const WINDOW_COLUMNS: Column[] = [
  { name: 'last_hour', type: 'double', from: 'lastHour', doc: 'over the last hour (NULL where the service sends none)' },
  { name: 'last_day', type: 'double', from: 'lastDay', doc: 'over the last day' },
  { name: 'last_week', type: 'double', from: 'lastWeek', doc: 'over the last week' },
  { name: 'last_month', type: 'double', from: 'lastMonth', doc: 'over the last month' },
  { name: 'last_90_days', type: 'double', from: 'last90Days', doc: 'over the last 90 days' },
  { name: 'last_year', type: 'double', from: 'lastYear', doc: 'over the last year' },
  { name: 'all_time', type: 'double', from: 'allTime', doc: 'over all time' },
];

export const SNAPSHOT_COLUMN: Column = { name: 'snapshot_at', type: 'timestamptz', from: '_snapshot.takenAt', required: true, stamp: true, doc: 'when chainlake took the snapshot (UTC)' };

export const chainRollingMetrics: StreamDecl = {
  table: 'chain_rolling_metrics',
  doc: "an EVM chain's metrics over rolling windows (last hour to all time) from the metrics service: one snapshot per run, so the history accrues",
  service: 'metrics',
  endpoint: '/v2/chains/{chainId}/rollingWindowMetrics/{metric}',
  items: 'result',
  extract: resultSnapshot,
  weight: 100,
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    chainIds: { kind: 'metrics_chain_id[]', required: true, doc: 'EVM chain ids (43114)' },
    metrics: { kind: 'string[]', required: true, doc: `metrics, a snapshot each: ${ROLLING_METRICS.join(', ')}` },
  },
  check: (s) => {
    const out: Array<[string, string]> = [];
    (s.chainIds as string[]).forEach((c, i) => {
      if (!/^[0-9]+$/.test(c)) out.push([`chainIds[${i}]`, `${JSON.stringify(c)}: rolling windows are per EVM chain (an EVM chain id such as 43114)`]);
    });
    (s.metrics as string[]).forEach((m, i) => {
      if (!(ROLLING_METRICS as readonly string[]).includes(m)) out.push([`metrics[${i}]`, `${JSON.stringify(m)} has no rolling windows (${ROLLING_METRICS.join(', ')})`]);
    });
    return out;
  },
  partitions: (s) =>
    (s.chainIds as string[]).flatMap((chainId) =>
      (s.metrics as string[]).map((metric) => ({ id: `${chainId}/${metric}`, path: { chainId, metric }, query: {}, values: { chainId, metric } })),
    ),
  refresh: 'merge',
  mergeScope: 'partition',
  key: ['chain_id', 'metric', 'snapshot_at'],
  keyDoc: 'a snapshot per run: each run adds one; a run within the same second replaces it',
  knownFields: [],
  columns: [
    { name: 'chain_id', type: 'varchar', partition: 'chainId', doc: 'EVM chain id as given in the pipeline' },
    { name: 'metric', type: 'varchar', partition: 'metric', doc: `metric name (${ROLLING_METRICS.join(', ')})` },
    SNAPSHOT_COLUMN,
    ...WINDOW_COLUMNS,
  ],
};
