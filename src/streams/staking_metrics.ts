import type { StreamDecl } from '../decl/stream.js';
import { CHUNKS_OPTION } from './chain_reads.js';
import { NETWORK_COLUMN, timeRangeCheck, timeRangeQuery } from './common.js';

/** The metrics service's NetworkMetric values. */
export const STAKING_METRICS = ['validatorCount', 'validatorWeight', 'delegatorCount', 'delegatorWeight'] as const;
export const PRIMARY_NETWORK_ID = '11111111111111111111111111111111LpoYY';
const DAY = 86_400;

export const stakingMetrics: StreamDecl = {
  table: 'staking_metrics',
  doc: 'daily series of validator and delegator counts and weights per subnet, from the metrics service',
  service: 'metrics',
  endpoint: '/v2/networks/{network}/metrics/{metric}',
  items: 'results',
  weight: 100,
  // Weights are nAVAX as JSON numbers, past 2^53 on mainnet: kept as sent.
  exactNumbers: ['value'],
  pageSize: { min: 1, max: 2160, default: 2160 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    metrics: { kind: 'string[]', required: true, doc: `any of ${STAKING_METRICS.join(', ')}` },
    subnetIds: { kind: 'cb58_id[]', doc: `subnets, one partition each (default the primary network, ${PRIMARY_NETWORK_ID})` },
    startTimestamp: { kind: 'unix_seconds', doc: 'points at or after it (inclusive)' },
    endTimestamp: { kind: 'unix_seconds', doc: 'points before it (exclusive): a point at or after it is never committed' },
    ...CHUNKS_OPTION,
  },
  check: (s) => {
    const out: Array<[string, string]> = [];
    (s.metrics as string[]).forEach((m, i) => {
      if (!(STAKING_METRICS as readonly string[]).includes(m)) out.push([`metrics[${i}]`, `${JSON.stringify(m)} is not a staking metric (${STAKING_METRICS.join(', ')})`]);
    });
    out.push(...timeRangeCheck(s));
    return out;
  },
  partitions: (s) => {
    const network = String(s.network);
    const subnets = (s.subnetIds as string[] | undefined) ?? [PRIMARY_NETWORK_ID];
    const range = timeRangeQuery(s);
    return subnets.flatMap((subnetId) =>
      (s.metrics as string[]).map((metric) => ({
        id: `${network}/${subnetId}/${metric}`,
        path: { network, metric },
        // The primary network is the service's default, but sent all the same: the query says which series it is.
        query: { subnetId, ...range },
        values: { network, subnetId, metric },
      })),
    );
  },
  refresh: 'merge',
  mergeScope: 'partition',
  timeCursor: { column: 'timestamp', start: 'startTimestamp', startOption: 'startTimestamp', end: 'endTimestamp', endOption: 'endTimestamp', step: () => DAY },
  key: ['network', 'subnet_id', 'metric', 'timestamp'],
  columns: [
    NETWORK_COLUMN,
    { name: 'subnet_id', type: 'varchar', partition: 'subnetId', doc: 'subnet of the series (11111111111111111111111111111111LpoYY: the primary network)' },
    { name: 'metric', type: 'varchar', partition: 'metric', doc: 'validatorCount, validatorWeight, delegatorCount or delegatorWeight' },
    { name: 'timestamp', type: 'timestamptz', from: 'timestamp', required: true, doc: 'the day of the point (0:00 UTC)' },
    { name: 'value', type: 'double', from: 'value', required: true, doc: 'count, or weight in nAVAX (as a double: use value_text for every digit)' },
    { name: 'value_text', type: 'varchar', from: 'value', required: true, doc: 'the value exactly as sent (a weight past 2^53 keeps its digits)' },
  ],
};
