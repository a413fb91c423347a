import { onBehalf, type Page } from '../decl/request.js';
import { RunError } from '../errors.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { NODE_SNAPSHOT, NODE_SNAPSHOT_COLUMNS, SNAPSHOT_KEY_DOC, fields, nodeSnapshot, stamped, timeColumn } from './node_reads.js';

export const HEALTH_KINDS = ['health', 'readiness', 'liveness'] as const;

/** The name of the row that holds a report's own verdict (a liveness report has no checks). */
export const REPORT_ROW = '*';

const PATHS: Record<string, string> = { health: '/ext/health', readiness: '/ext/health/readiness', liveness: '/ext/health/liveness' };

/**
 * GET the report; 503 (unhealthy) is an answer like 200. Tags are repeated query parameters,
 * which the client's query record cannot hold, so they travel in the path.
 */
async function* healthPage(x: ExtractContext): AsyncGenerator<Page> {
  const snap = nodeSnapshot(x);
  const kind = x.partition.path.kind!;
  const tags = (x.config.tags as string[] | undefined) ?? [];
  const qs = kind === 'liveness' ? '' : new URLSearchParams(tags.map((t) => ['tag', t])).toString();
  let status = 200;
  const body = fields(
    await x.client.get(`${PATHS[kind]}${qs ? `?${qs}` : ''}`, {}, {
      ...onBehalf(x, `GET ${PATHS[kind]}`),
      acceptStatus: [503],
      acceptBody: isReport,
      onStatus: (s) => (status = s),
    }),
    `GET ${PATHS[kind]}`,
  );
  const checks = body.checks ?? {};
  if (checks === null || typeof checks !== 'object' || Array.isArray(checks)) throw new RunError(`GET ${PATHS[kind]}: checks is not a map of check name to result`);
  const report = { kind, status, tags: kind === 'liveness' ? [] : tags, reportHealthy: body.healthy };
  const items = [
    { ...report, name: REPORT_ROW, healthy: body.healthy },
    ...Object.entries(checks).map(([name, c]) => (c !== null && typeof c === 'object' ? { ...report, ...c, name, healthy: !(c as Record<string, unknown>).error } : { ...report, name, check: c })),
  ];
  yield { items: stamped(items, snap) };
}

/** A health report, as opposed to an error page a proxy in front of the node answers 503 with. */
function isReport(b: unknown): boolean {
  return b !== null && typeof b === 'object' && typeof (b as Record<string, unknown>).healthy === 'boolean';
}

function textOf(v: unknown): unknown {
  return v !== null && typeof v === 'object' ? JSON.stringify(v) : v;
}

/**
 * A message may be any JSON. json columns take objects and arrays; a scalar is wrapped in an
 * object whose toJSON gives it back, so it lands as that JSON scalar.
 */
function anyJson(v: unknown): unknown {
  return v === undefined || v === null || typeof v === 'object' ? v : { toJSON: () => v };
}

export const healthChecks: StreamDecl = {
  table: 'health_checks',
  doc: `the node's health reports (\`GET /ext/health\`, \`/readiness\`, \`/liveness\`; 503 when unhealthy is an answer, not an error), one row per check per snapshot plus a row named \`${REPORT_ROW}\` with the report's own verdict`,
  ...NODE_SNAPSHOT,
  endpoint: '/ext/health',
  items: 'checks',
  extract: healthPage,
  options: {
    tags: { kind: 'string[]', doc: 'only global checks and checks of these tags (a subnet id is a tag); health and readiness only, liveness takes none' },
  },
  partitions: () => HEALTH_KINDS.map((kind) => ({ id: kind, path: { kind }, query: {}, values: {} })),
  key: ['node_url', 'snapshot_at', 'kind', 'name'],
  keyDoc: SNAPSHOT_KEY_DOC,
  knownFields: ['message', 'error', 'timestamp', 'timeOfFirstFailure', 'reportHealthy', 'status', 'check'],
  columns: [
    ...NODE_SNAPSHOT_COLUMNS,
    { name: 'kind', type: 'varchar', from: 'kind', required: true, doc: 'health (holistic), readiness (finished initializing) or liveness (the endpoint answers)' },
    { name: 'name', type: 'varchar', from: 'name', required: true, doc: `check name (a chain by letter or id, bootstrapped, database, diskspace, network, router, ...); \`${REPORT_ROW}\` is the report itself` },
    { name: 'healthy', type: 'boolean', from: 'healthy', required: true, doc: `the check passes (it has no error); for \`${REPORT_ROW}\`, every returned check passes` },
    { name: 'report_healthy', type: 'boolean', from: 'reportHealthy', required: true, doc: 'the verdict of the whole report' },
    { name: 'http_status', type: 'integer', from: 'status', required: true, doc: '200 (healthy) or 503 (unhealthy)' },
    { name: 'tags', type: 'varchar[]', from: 'tags', required: true, doc: 'the tags the report was asked for (empty: all checks)' },
    { name: 'message', type: 'json', derive: (c) => anyJson(c.message), doc: 'what the check reports (any JSON)' },
    { name: 'error', type: 'varchar', derive: (c) => textOf(c.error), doc: 'why the check fails (its JSON as text when not a string)' },
    timeColumn('timestamp', 'timestamp', 'when the check last ran'),
    { name: 'duration', type: 'bigint', from: 'duration', doc: 'how long the check took, nanoseconds' },
    { name: 'contiguous_failures', type: 'bigint', from: 'contiguousFailures', doc: 'failures in a row' },
    timeColumn('time_of_first_failure', 'timeOfFirstFailure', 'first failure of the current run of failures'),
  ],
};
