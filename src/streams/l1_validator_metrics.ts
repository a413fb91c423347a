import type { ExtractContext, Partition, StreamDecl, StreamConfig } from '../decl/stream.js';
import { NETWORK_COLUMN, timeRangeCheck, timeRangeQuery } from './common.js';

/** The metrics of each scope, as the metrics service's four L1 validator paths name them. */
export const L1_METRICS = {
  all: ['totalCumulativeFeesDaily', 'totalValidatorFeesDaily', 'totalPayingValidatorsDaily'],
  validation: ['validationCumulativeFeesDaily', 'validationFeesDaily'],
  node: ['perNodeCumulativeFeesPaid', 'perNodeDailyFeesPaid'],
  subnet: ['perSubnetDailyFeesPaid', 'perSubnetCumulativeFeesPaid', 'perSubnetPayingValidators'],
} as const;
type Scope = keyof typeof L1_METRICS;

/** The option naming each scope's ids, and the path segment before the id. */
const SCOPES: Array<{ scope: Exclude<Scope, 'all'>; option: string; segment: string }> = [
  { scope: 'validation', option: 'l1ValidationIds', segment: 'validation' },
  { scope: 'node', option: 'nodeIds', segment: 'validator' },
  { scope: 'subnet', option: 'subnetIds', segment: 'subnet' },
];

function scopeOf(s: StreamConfig): { scope: Scope; option?: string; ids: string[] } {
  const given = SCOPES.find((x) => s[x.option] !== undefined);
  return given ? { scope: given.scope, option: given.option, ids: s[given.option] as string[] } : { scope: 'all', ids: [''] };
}

/** The path of a partition's series: the scope is a path segment the declaration's template cannot vary. */
function seriesPath(p: Partition): string {
  const metric = encodeURIComponent(p.values.metric!);
  const scope = SCOPES.find((x) => x.scope === p.values.scope);
  return scope ? `/v2/${scope.segment}/${encodeURIComponent(p.values.scopeId!)}/metrics/${metric}` : `/v2/validators/metrics/${metric}`;
}

async function* seriesPages(x: ExtractContext) {
  yield* x.paginate({ path: seriesPath(x.partition) });
}

export const l1ValidatorMetrics: StreamDecl = {
  table: 'l1_validator_metrics',
  doc: 'daily series of the fees L1 validators pay on the P-Chain, in total, per validation, per node or per subnet, from the metrics service',
  service: 'metrics',
  endpoint: '/v2/validators/metrics/{metric}',
  items: 'results',
  weight: 100,
  extract: seriesPages,
  // Fees are nAVAX as JSON numbers: kept as sent, since a sum of them may pass 2^53.
  exactNumbers: ['value'],
  // The four paths take no page size and no page token: a series comes whole, in one answer.
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet (the paths take no network: the series are mainnet\'s)' },
    metrics: { kind: 'string[]', required: true, doc: `metrics of the scope: all validators ${L1_METRICS.all.join(', ')}; l1ValidationIds ${L1_METRICS.validation.join(', ')}; nodeIds ${L1_METRICS.node.join(', ')}; subnetIds ${L1_METRICS.subnet.join(', ')}` },
    l1ValidationIds: { kind: 'cb58_id[]', doc: 'L1 validations, a series each (GET /v2/validation/{l1ValidationId}/metrics/{metric})' },
    nodeIds: { kind: 'node_id[]', doc: 'nodes, a series each of the fees of their L1 validations (GET /v2/validator/{nodeId}/metrics/{metric})' },
    subnetIds: { kind: 'cb58_id[]', doc: 'L1s, a series each of the fees of their validators (GET /v2/subnet/{subnetId}/metrics/{metric}); without any of the three ids: all L1 validators' },
    startTimestamp: { kind: 'unix_seconds', doc: 'points at or after it (inclusive)' },
    endTimestamp: { kind: 'unix_seconds', doc: 'points before it (exclusive): a point at or after it is never committed' },
  },
  check: (s) => {
    const out: Array<[string, string]> = [];
    if (s.network !== 'mainnet') out.push(['network', `${JSON.stringify(s.network)}: the metrics service's L1 validator series take no network and are mainnet's; only mainnet is accepted`]);
    const given = SCOPES.filter((x) => s[x.option] !== undefined);
    if (given.length > 1) out.push([given[1]!.option, `give one of l1ValidationIds, nodeIds and subnetIds, not ${given.map((x) => x.option).join(' and ')}`]);
    const { scope, option } = scopeOf(s);
    const allowed: readonly string[] = L1_METRICS[scope];
    const whose = option ? `a metric of ${option}` : 'a metric of all L1 validators (without l1ValidationIds, nodeIds or subnetIds)';
    (s.metrics as string[]).forEach((m, i) => {
      if (!allowed.includes(m)) out.push([`metrics[${i}]`, `${JSON.stringify(m)} is not ${whose} (${allowed.join(', ')})`]);
    });
    out.push(...timeRangeCheck(s));
    return out;
  },
  partitions: (s) => {
    const network = String(s.network);
    const { scope, ids } = scopeOf(s);
    const query = timeRangeQuery(s);
    return ids.flatMap((scopeId) =>
      (s.metrics as string[]).map((metric) => ({
        id: scope === 'all' ? `${network}/all/${metric}` : `${network}/${scope}/${scopeId}/${metric}`,
        path: { metric },
        query,
        values: { network, scope, scopeId, metric },
      })),
    );
  },
  refresh: 'merge',
  mergeScope: 'partition',
  // No `end` and `step`: without a page size a range cannot be cut into pages known in advance,
  // and a series comes whole in one answer anyway. Each run asks from the newest committed point.
  timeCursor: { column: 'timestamp', start: 'startTimestamp', startOption: 'startTimestamp', endOption: 'endTimestamp' },
  key: ['network', 'scope', 'scope_id', 'metric', 'timestamp'],
  keyDoc: "a point of a series: scope 'all' has scope_id ''",
  columns: [
    { ...NETWORK_COLUMN, doc: "mainnet (the service's L1 validator series are mainnet's)" },
    { name: 'scope', type: 'varchar', partition: 'scope', doc: "whose fees: all (every L1 validator), validation, node or subnet" },
    { name: 'scope_id', type: 'varchar', partition: 'scopeId', doc: "the L1 validation id, NodeID or subnet id of the series ('' for all)" },
    { name: 'metric', type: 'varchar', partition: 'metric', doc: `metric name (${Object.values(L1_METRICS).flat().join(', ')})` },
    { name: 'timestamp', type: 'timestamptz', from: 'timestamp', required: true, doc: 'the day of the point (0:00 UTC)' },
    { name: 'value', type: 'double', from: 'value', required: true, doc: 'fees in nAVAX, or a count of paying validators (as a double: use value_text for every digit)' },
    { name: 'value_text', type: 'varchar', from: 'value', required: true, doc: 'the value exactly as sent (fees past 2^53 keep their digits)' },
  ],
};
