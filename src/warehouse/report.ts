// `chainlake report`: one self-contained HTML file with charts of the lake (metric series, daily
// transfers, internal transactions, rewards, delegations, the last runs). Its numbers come from
// the bundled SQL in sql/ wherever a bundled query has the shape a chart needs, so the report and
// `chainlake query --file sql/...` never disagree. uPlot is inlined from node_modules (no CDN), and
// a Content-Security-Policy lets only the page's own two scripts run and nothing load: the file
// can be mailed or opened offline, and makes no request when opened.
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { METRICS, TIME_INTERVALS } from '../streams/chain_metrics.js';
import { STREAMS } from '../streams/index.js';
import { query } from './query.js';
import { checkOutput } from './export.js';
import { lakeFile } from '../state/cache.js';
import { ident } from './check.js';
import { bundledSql, openWarehouse } from './views.js';
import { intlSafeLanguage, renderReport, type ChartSeries, type ChartSpec, type ReportData, type Section, type TableSpec } from './report/page.js';

/** Newest points per metric series drawn: bounds the file for hourly series spanning years. */
export const MAX_POINTS = 1000;

type Row = Record<string, unknown>;

async function rowsOf(conn: DuckDBConnection, sql: string): Promise<Row[]> {
  return (await query(conn, sql)).rows;
}

const num = (v: unknown): number | null => (v === null || v === undefined || v === '' ? null : Number(v));
const dayToUnix = (d: unknown): number => Date.parse(`${String(d).slice(0, 10)}T00:00:00Z`) / 1000;

/**
 * Long rows (x, group, value) to one aligned series per group over the sorted distinct xs, with
 * null where a group has no row (so a line breaks instead of inventing a value).
 */
export function pivot<X extends number | string>(rows: Row[], x: (r: Row) => X, group: (r: Row) => string, value: (r: Row) => number | null, zero = false): { xs: X[]; groups: Array<{ label: string; values: Array<number | null> }> } {
  const xs = [...new Set(rows.map(x))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const index = new Map(xs.map((v, i) => [v, i]));
  const groups = new Map<string, Array<number | null>>();
  for (const r of rows) {
    const g = group(r);
    if (!groups.has(g)) groups.set(g, xs.map(() => (zero ? 0 : null)));
    const vals = groups.get(g)!;
    const i = index.get(x(r))!;
    const v = value(r);
    vals[i] = v === null ? vals[i]! : (vals[i] ?? 0) + v;
  }
  return { xs, groups: [...groups.entries()].map(([label, values]) => ({ label, values })) };
}

async function count(conn: DuckDBConnection, table: string): Promise<number> {
  return Number((await rowsOf(conn, `SELECT count(*) AS n FROM ${ident(table)}`))[0]!.n);
}

function tableOf(title: string, caption: string, rows: Row[], columns?: string[]): TableSpec {
  const cols = columns ?? Object.keys(rows[0] ?? {});
  return {
    title,
    caption,
    columns: cols,
    // Numbers DuckDB hands over as JSON numbers (DOUBLE, INTEGER) stay numbers; BIGINT and DECIMAL
    // arrive as exact text and stay text.
    rows: rows.map((r) => cols.map((c) => (r[c] === null || r[c] === undefined ? null : typeof r[c] === 'number' ? (r[c] as number) : typeof r[c] === 'object' ? JSON.stringify(r[c]) : String(r[c])))),
  };
}

async function metricsSection(conn: DuckDBConnection): Promise<Section> {
  const section: Section = { title: 'Chain metrics', charts: [], tables: [] };
  const series = await rowsOf(
    conn,
    `SELECT chain_id, metric, time_interval, epoch(timestamp) AS t, value, count(*) OVER (PARTITION BY chain_id, metric, time_interval) AS points
     FROM chain_metrics
     QUALIFY row_number() OVER (PARTITION BY chain_id, metric, time_interval ORDER BY timestamp DESC) <= ${MAX_POINTS}`,
  );
  const rank = (list: readonly string[], v: string) => (list.includes(v) ? list.indexOf(v) : list.length);
  const keys = [...new Set(series.map((r) => `${r.metric}\u0000${r.time_interval}`))]
    .map((k) => k.split('\u0000') as [string, string])
    .sort(([ma, ia], [mb, ib]) => rank(METRICS, ma) - rank(METRICS, mb) || ma.localeCompare(mb) || rank(TIME_INTERVALS, ia) - rank(TIME_INTERVALS, ib));
  for (const [metric, interval] of keys) {
    const rows = series.filter((r) => r.metric === metric && r.time_interval === interval);
    const { xs, groups } = pivot(rows, (r) => Number(r.t), (r) => String(r.chain_id), (r) => num(r.value));
    // Chains in one order in every chart, so that a chain keeps its colour.
    groups.sort((a, b) => a.label.localeCompare(b.label));
    const cut = rows.some((r) => Number(r.points) > MAX_POINTS);
    section.charts.push({
      title: `${metric} per ${interval}`,
      caption: `chain_metrics: one line per chain (${groups.map((g) => g.label).join(', ')}); points at the start of each ${interval}, UTC${cut ? `; the newest ${MAX_POINTS} points of each series` : ''}.`,
      x: { time: xs },
      series: groups.map((g): ChartSeries => ({ label: g.label, values: g.values, style: 'line' })),
      yLabel: metric,
    });
  }
  const tps = await rowsOf(conn, `SELECT chain_id, epoch(timestamp) AS t, value FROM avg_tps QUALIFY row_number() OVER (PARTITION BY chain_id ORDER BY timestamp DESC) <= ${MAX_POINTS}`);
  if (tps.length) {
    const { xs, groups } = pivot(tps, (r) => Number(r.t), (r) => String(r.chain_id), (r) => num(r.value));
    groups.sort((a, b) => a.label.localeCompare(b.label));
    section.charts.push({ title: 'average transactions per second', caption: 'avg_tps (the older metrics endpoint): one line per chain.', x: { time: xs }, series: groups.map((g) => ({ label: g.label, values: g.values, style: 'line' })), yLabel: 'tx/s' });
  }
  if (section.charts.length === 0) section.empty = 'No rows in chain_metrics or avg_tps yet.';
  return section;
}

/** A stacked-bar chart over days/weeks/months from long rows of a bundled query. */
function stackedByDate(rows: Row[], o: { date: string; group: (r: Row) => string; value: string; title: string; caption: string; yLabel: string }): ChartSpec {
  const { xs, groups } = pivot(rows, (r) => dayToUnix(r[o.date]), o.group, (r) => num(r[o.value]), true);
  return { title: o.title, caption: o.caption, x: { time: xs }, series: groups.map((g) => ({ label: g.label, values: g.values, style: 'bars' })), yLabel: o.yLabel, stacked: true };
}

async function transfersSection(conn: DuckDBConnection): Promise<Section> {
  const section: Section = { title: 'Token transfers', charts: [], tables: [] };
  if ((await count(conn, 'erc_transfers')) === 0) return { ...section, empty: 'No rows in erc_transfers yet.' };
  const perDay = await rowsOf(conn, bundledSql('transfers_per_day.sql'));
  section.charts.push(
    stackedByDate(perDay, { date: 'day', group: (r) => String(r.token), value: 'transfers', title: 'transfers per day', caption: 'sql/transfers_per_day.sql: the six busiest tokens and the rest as "other", newest 365 days of data, UTC days.', yLabel: 'transfers' }),
  );
  section.tables.push(tableOf('top senders', 'sql/top_senders.sql', await rowsOf(conn, bundledSql('top_senders.sql'))));
  return section;
}

async function internalSection(conn: DuckDBConnection): Promise<Section> {
  const section: Section = { title: 'Internal transactions', charts: [], tables: [] };
  if ((await count(conn, 'internal_transactions')) === 0) return { ...section, empty: 'No rows in internal_transactions yet.' };
  const weekly = await rowsOf(conn, bundledSql('internal_tx_types.sql'));
  section.charts.push(
    stackedByDate(weekly, { date: 'week', group: (r) => String(r.type), value: 'txs', title: 'internal transactions per week, by type', caption: 'sql/internal_tx_types.sql: weeks from Monday, UTC; each internal transaction once, whichever listed address it was fetched for.', yLabel: 'internal txs' }),
  );
  return section;
}

async function rewardsSection(conn: DuckDBConnection): Promise<Section> {
  const section: Section = { title: 'Staking rewards and delegations', charts: [], tables: [] };
  const rewards = await count(conn, 'historical_rewards');
  const delegations = await count(conn, 'delegators');
  if (rewards > 0) {
    const monthly = await rowsOf(conn, bundledSql('rewards_monthly.sql'));
    const assets = new Set(monthly.map((r) => r.asset));
    section.charts.push(
      stackedByDate(monthly, {
        date: 'month',
        group: (r) => (assets.size > 1 ? `${r.reward_type} (${r.asset})` : String(r.reward_type)),
        value: 'reward_units',
        title: `rewards paid per month${assets.size === 1 ? ` (${[...assets][0]})` : ''}`,
        caption: "sql/rewards_monthly.sql: by reward type, in the reward asset's units, in the month the staking period ended.",
        yLabel: assets.size === 1 ? String([...assets][0]) : 'asset units',
      }),
    );
    section.tables.push(tableOf('rewards per validator', "sql/rewards_per_node.sql: in the asset's units and at the historical price of each payment.", await rowsOf(conn, bundledSql('rewards_per_node.sql'))));
  }
  if (delegations > 0) {
    const byStatus = await rowsOf(conn, bundledSql('delegations_by_status.sql'));
    const nodes = [...new Set(byStatus.map((r) => String(r.node_id)))];
    const statuses = [...new Set(byStatus.map((r) => String(r.delegation_status)))].sort();
    section.charts.push({
      title: 'AVAX delegated per validator, by status',
      caption: 'sql/delegations_by_status.sql: stake of completed, active and pending delegations per node.',
      x: { labels: nodes.map((n) => (n.length > 18 ? `${n.slice(0, 14)}…` : n)) },
      series: statuses.map((st) => ({
        label: st,
        values: nodes.map((n) => num(byStatus.find((r) => r.node_id === n && r.delegation_status === st)?.avax_delegated) ?? 0),
        style: 'bars',
      })),
      yLabel: 'AVAX',
      stacked: true,
    });
    section.tables.push(tableOf('delegations by validator and status', 'sql/delegations_by_status.sql: rewards of active and pending delegations are the service\'s estimates.', byStatus));
  }
  if (rewards === 0 && delegations === 0) section.empty = 'No rows in historical_rewards or delegators yet.';
  return section;
}

/** Validators, platform-chain activity and ICM routes: what a staking or L1 analyst opens first. */
async function platformSection(conn: DuckDBConnection): Promise<Section> {
  const section: Section = { title: 'Validators, the platform chain and ICM', charts: [], tables: [] };
  if ((await count(conn, 'validators')) > 0) {
    section.tables.push(tableOf('active validators', 'sql/validators_overview.sql: the newest snapshot, best uptime first, then lowest fee; delegations and rewards from delegators and historical_rewards.', await rowsOf(conn, bundledSql('validators_overview.sql'))));
  }
  if ((await count(conn, 'platform_transactions')) > 0) {
    const daily = await rowsOf(conn, bundledSql('platform_activity_daily.sql'));
    section.charts.push(stackedByDate(daily, { date: 'day', group: (r) => String(r.tx_type), value: 'txs', title: 'platform-chain transactions per day, by type', caption: 'sql/platform_activity_daily.sql: the transactions of the addresses and L1 validations the pipeline lists, UTC days.', yLabel: 'transactions' }));
    section.tables.push(tableOf('platform-chain activity', 'sql/platform_activity_daily.sql: nAVAX burned, staked and moved into L1 validator balances, exact.', daily));
  }
  if ((await count(conn, 'icm_messages')) > 0) {
    const routes = await rowsOf(conn, bundledSql('icm_routes_daily.sql'));
    const route = (r: Row) => `${r.source_evm_chain_id ?? String(r.source_blockchain_id).slice(0, 8)} → ${r.destination_evm_chain_id ?? String(r.destination_blockchain_id).slice(0, 8)}`;
    section.charts.push(stackedByDate(routes, { date: 'day', group: route, value: 'messages', title: 'ICM messages per day, by route', caption: 'sql/icm_routes_daily.sql: source → destination chain, by the UTC day of sending.', yLabel: 'messages' }));
    section.tables.push(tableOf('ICM routes per day', 'sql/icm_routes_daily.sql: delivered, pending and the median seconds from source to destination.', routes));
  }
  if (section.charts.length === 0 && section.tables.length === 0) section.empty = 'No rows in validators, platform_transactions or icm_messages yet.';
  return section;
}

async function runsSection(conn: DuckDBConnection): Promise<Section> {
  const section: Section = { title: 'Last runs', charts: [], tables: [] };
  if ((await count(conn, '_runs')) === 0) return { ...section, empty: 'No run reports (_runs/) in this lake yet.' };
  const recent = (await rowsOf(conn, bundledSql('runs_recent.sql'))).reverse();
  const labels = recent.map((r) => String(r.started_at).slice(5, 16));
  const col = (c: string) => recent.map((r) => num(r[c]));
  section.charts.push(
    {
      title: 'rows and requests per run',
      caption: 'sql/runs_recent.sql: oldest left; rows landed (bars) and requests sent (line, right axis).',
      x: { labels },
      series: [
        { label: 'rows', values: col('rows'), style: 'bars' },
        { label: 'requests', values: col('requests'), style: 'line', scale: 'y2' },
      ],
      yLabel: 'rows',
      y2Label: 'requests',
    },
    {
      title: 'seconds, retries and 429s per run',
      caption: 'sql/runs_recent.sql: wall time (bars); retried requests and 429 answers (lines, right axis).',
      x: { labels },
      series: [
        { label: 'seconds', values: col('seconds'), style: 'bars' },
        { label: 'retries', values: col('retries'), style: 'line', scale: 'y2' },
        { label: '429s', values: col('status_429'), style: 'line', scale: 'y2' },
      ],
      yLabel: 'seconds',
      y2Label: 'requests',
    },
  );
  section.tables.push(tableOf('runs', 'sql/runs_recent.sql: newest first.', [...recent].reverse()));
  return section;
}

export async function reportData(conn: DuckDBConnection, lake: string): Promise<ReportData> {
  const counts = await rowsOf(conn, STREAMS.map((s) => `SELECT '${s.table}' AS t, count(*) AS n FROM ${ident(s.table)}`).join(' UNION ALL '));
  const filled = counts.filter((r) => Number(r.n) > 0);
  const empty = counts.length - filled.length;
  const summary = filled.map((r) => `${r.t} ${Number(r.n).toLocaleString('en-US')}`).join(' · ') + (empty ? ` (${empty} tables empty)` : '');
  return {
    title: `chainlake report: ${basename(resolve(lake))}`,
    subtitle: `lake ${resolve(lake)} · generated ${new Date().toISOString().slice(0, 19).replace('T', ' ')} UTC · rows: ${summary}`,
    sections: [await metricsSection(conn), await transfersSection(conn), await internalSection(conn), await rewardsSection(conn), await platformSection(conn), await runsSection(conn)],
  };
}

const STYLE = `
  body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; background: #f8fafc; color: #0f172a; }
  main { max-width: 1400px; margin: 0 auto; padding: 24px; }
  h1 { font-size: 24px; margin: 0 0 4px; }
  h2 { font-size: 18px; margin: 32px 0 12px; border-bottom: 1px solid #e2e8f0; padding-bottom: 4px; }
  .subtitle, .caption, .empty { color: #475569; margin: 0 0 8px; }
  nav a { margin-right: 16px; color: #2563eb; text-decoration: none; }
  .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 16px; }
  .card { background: #fff; border: 1px solid #e2e8f0; border-radius: 8px; padding: 12px 16px; margin: 0; min-width: 0; }
  .card.wide { grid-column: 1 / -1; }
  .title { font-weight: 600; }
  .caption { font-size: 12px; }
  .table-wrap { overflow-x: auto; }
  table { border-collapse: collapse; font-size: 12px; }
  th, td { padding: 3px 10px; border-bottom: 1px solid #f1f5f9; text-align: left; white-space: nowrap; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .u-legend { font-size: 12px; }
  .chart-error { color: #b91c1c; background: #fef2f2; border-radius: 4px; padding: 8px; margin: 0; }
`;

const csp = (scripts: string[]) =>
  `default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src ${scripts.map((s) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`).join(' ')}`;

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** The page: data as inert JSON (every `<` escaped, so no text can close the tag), uPlot after its locale guard, the renderer. */
export function reportHtml(data: ReportData): string {
  const require = createRequire(import.meta.url);
  const uplotJs = `(${intlSafeLanguage.toString()})();\n${readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8')}`;
  const uplotCss = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');
  const app = `(${renderReport.toString()})(JSON.parse(document.getElementById('report-data').textContent), uPlot);`;
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp([uplotJs, app])}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(data.title)}</title>
<style>${uplotCss}${STYLE}</style>
</head>
<body>
<main id="report"></main>
<script type="application/json" id="report-data">${json}</script>
<script>${uplotJs}</script>
<script>${app}</script>
</body>
</html>
`;
}

export interface ReportResult {
  file: string;
  charts: number;
  tables: number;
}

/** The report of a lake when none is named: `<lake>.report.html`, beside the lake folder (s3://: lakeFile). */
export function defaultReportPath(lake: string): string {
  return lakeFile(lake, 'report.html');
}

/** Writes the report beside the lake (or to `out`), replacing an older report whole. */
export async function writeReport(lake: string, out?: string): Promise<ReportResult> {
  const file = checkOutput(out ?? defaultReportPath(lake), lake, true, '--out');
  const conn = await openWarehouse(lake);
  let data: ReportData;
  try {
    data = await reportData(conn, lake);
  } finally {
    conn.closeSync();
  }
  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}`);
  try {
    writeFileSync(tmp, reportHtml(data));
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return { file, charts: data.sections.reduce((n, s) => n + s.charts.length, 0), tables: data.sections.reduce((n, s) => n + s.tables.length, 0) };
}
