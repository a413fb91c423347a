// The bundled SQL (sql/*.sql): each is documented, reads views only, runs on a demo lake, and its
// figures agree with the same figures computed here from the raw rows (BigInt for amounts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneSchemaTables, openWarehouse, viewSql, viewsFor } from '../../src/warehouse/views.js';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { query } from '../../src/warehouse/query.js';
import { cliHere, sharedDemoLake } from '../lake-fixture.js';

const FILES = readdirSync('sql').filter((f) => f.endsWith('.sql')).sort();
let lake: string;
let conn: DuckDBConnection;

beforeAll(async () => {
  lake = await sharedDemoLake();
  conn = await openWarehouse(lake);
});

afterAll(() => conn?.closeSync());

type Row = Record<string, unknown>;
const rows = async (sql: string): Promise<Row[]> => (await query(conn, sql)).rows;
const bundled = (f: string) => rows(readFileSync(join('sql', f), 'utf8'));
/** Amount / 10^decimals from exact digits, as a number for comparing with the SQL's DOUBLE. */
const units = (raw: string, decimals: number) => Number(BigInt(raw)) / 10 ** decimals;

describe('the views a query is given', () => {
  it('are those it names (none for SQL that names none), or all when it reads the catalog', async () => {
    expect(viewsFor('SELECT count(*) FROM "ERC_transfers" t JOIN blocks USING (block_number)')).toEqual(new Set(['erc_transfers', 'blocks']));
    expect(viewsFor('select * from _rejects')).toEqual(new Set(['_rejects']));
    expect(viewsFor('SELECT 1')).toEqual(new Set());
    for (const sql of ['SHOW TABLES', 'select * from information_schema.tables', 'SELECT * FROM duckdb_views()', 'PRAGMA show_tables']) expect(viewsFor(sql), sql).toBeUndefined();
    // Only the views named are made; a query of another table fails as on a database without it.
    const only = await openWarehouse(lake, {}, viewsFor('SELECT count(*) FROM erc_transfers'));
    try {
      expect(Number((await query(only, 'SELECT count(*) AS n FROM erc_transfers')).rows[0]!.n)).toBeGreaterThan(0);
      await expect(query(only, 'SELECT * FROM delegators')).rejects.toThrow(/delegators/);
    } finally {
      only.closeSync();
    }
  });
});

describe('views over files of one schema or of several', () => {
  it('read without union_by_name only where every file has the same columns', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'cl-schemas-'));
    cpSync(join(lake, 'erc_transfers'), join(copy, 'erc_transfers'), { recursive: true });
    cpSync(join(lake, 'delegators'), join(copy, 'delegators'), { recursive: true });
    expect(await oneSchemaTables(conn, copy)).toEqual(new Set(['erc_transfers', 'delegators']));
    const plain = (await viewSql(conn, copy, undefined, new Set(['erc_transfers']))).find((v) => v.includes('VIEW "erc_transfers"'))!;
    expect(plain).not.toContain('union_by_name');
    // A file written before a column was declared: that table's view lines columns up by name.
    await conn.run(`COPY (SELECT * EXCLUDE (token_uri) FROM erc_transfers LIMIT 3) TO '${join(copy, 'erc_transfers', 'older.parquet')}' (FORMAT parquet)`);
    expect(await oneSchemaTables(conn, copy)).toEqual(new Set(['delegators']));
    const mixed = await openWarehouse(copy);
    try {
      const r = (await query(mixed, 'SELECT count(*) AS n, count(*) FILTER (WHERE token_uri IS NULL) AS without FROM erc_transfers')).rows[0]!;
      const all = (await query(conn, 'SELECT count(*) AS n, count(*) FILTER (WHERE token_uri IS NULL) AS without FROM erc_transfers')).rows[0]!;
      expect(Number(r.n)).toBe(Number(all.n) + 3);
      expect(Number(r.without)).toBe(Number(all.without) + 3);
    } finally {
      mixed.closeSync();
    }
  });
});

describe('bundled SQL', () => {
  it.each(FILES)('%s: opens with a comment, reads views only, and returns rows', async (f) => {
    const text = readFileSync(join('sql', f), 'utf8');
    expect(text.startsWith('-- ')).toBe(true);
    const code = text.replace(/--.*$/gm, '');
    expect(code).not.toMatch(/read_(parquet|csv|json|text|blob)|\.parquet|'\.{0,2}\/\w|glob\(/i);
    expect((await bundled(f)).length).toBeGreaterThan(0);
  });

  it('runs through the CLI as documented (chainlake query --file)', async () => {
    const r = await cliHere(['query', '--lake', lake, '--file', 'sql/top_receivers.sql', '--format', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).length).toBe(10);
  });

  it('top_receivers: counts per receiver', async () => {
    const top = await bundled('top_receivers.sql');
    const all = await rows(`SELECT to_address FROM erc_transfers`);
    const counts = new Map<string, number>();
    for (const r of all) counts.set(r.to_address as string, (counts.get(r.to_address as string) ?? 0) + 1);
    const best = Math.max(...counts.values());
    expect(Number(top[0]!.transfers)).toBe(best);
    expect(Number(top[0]!.transfers)).toBe(counts.get(top[0]!.to_address as string));
  });

  it('large_transfers: the exact largest amount of each token, over 38 digits included', async () => {
    const large = await bundled('large_transfers.sql');
    const all = await rows(`SELECT token_address, value_raw, token_type FROM erc_transfers WHERE value_raw IS NOT NULL AND token_type <> 'ERC-721'`);
    const max = new Map<string, bigint>();
    for (const r of all) {
      const v = BigInt(r.value_raw as string);
      if (v > (max.get(r.token_address as string) ?? -1n)) max.set(r.token_address as string, v);
    }
    const firsts = large.filter((r) => Number(r.rank) === 1);
    expect(firsts.length).toBe(max.size);
    for (const r of firsts) expect(BigInt(r.value_raw as string)).toBe(max.get(r.token_address as string));
    expect(large.some((r) => (r.value_raw as string).length > 38)).toBe(true);
    // Each token's five largest amounts, in order of exact value (the query ranks only the rows
    // with as many digits as the fifth-longest amount: none of the five may be missed).
    const desc = (a: bigint, b: bigint) => (a > b ? -1 : a < b ? 1 : 0);
    for (const t of max.keys()) {
      const vals = large.filter((r) => r.token_address === t).map((r) => BigInt(r.value_raw as string));
      const every = all.filter((r) => r.token_address === t).map((r) => BigInt(r.value_raw as string));
      expect(vals, t).toEqual(every.sort(desc).slice(0, 5));
    }
  });

  it('large_transfers: a token whose five largest amounts differ in length, ties broken by block and log', async () => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      const amounts = ['7', '00120', '999', '1000', '5', '100000', '42', '100000', '3'];
      await c.run(`CREATE TABLE erc_transfers AS SELECT '43114' AS chain_id, '0xt' AS token_address, 'T' AS token_symbol, TIMESTAMPTZ '2024-01-01 00:00:00+00' AS block_timestamp,
        'h' || i AS tx_hash, 'a' AS from_address, 'b' AS to_address, 0 AS token_decimals, v AS value_raw, 'ERC-20' AS token_type, 100 - i AS block_number, i AS log_index, NULL::VARCHAR AS token_id
        FROM (SELECT unnest(['${amounts.join("','")}']) AS v, generate_subscripts(['${amounts.join("','")}'], 1) AS i)`);
      const got = (await query(c, readFileSync(join('sql', 'large_transfers.sql'), 'utf8'))).rows.map((r) => [r.rank, r.value_raw, r.tx_hash].map(String));
      // 100000 twice: the lower block first (block_number falls as i rises), then 1000, 999, 00120.
      expect(got).toEqual([
        ['1', '100000', 'h8'],
        ['2', '100000', 'h6'],
        ['3', '1000', 'h4'],
        ['4', '999', 'h3'],
        ['5', '00120', 'h2'],
      ]);
    } finally {
      c.closeSync();
      db.closeSync();
    }
  });

  it('transfers_per_day: every transfer of the newest 365 days once, at most seven labels', async () => {
    const perDay = await bundled('transfers_per_day.sql');
    const [{ n }] = await rows(`SELECT count(*) AS n FROM erc_transfers WHERE block_timestamp > (SELECT max(block_timestamp) FROM erc_transfers) - INTERVAL 365 DAY`);
    expect(perDay.reduce((s, r) => s + Number(r.transfers), 0)).toBe(Number(n));
    expect(new Set(perDay.map((r) => r.token)).size).toBeLessThanOrEqual(7);
  });

  it('internal_tx_types: each internal transaction once, by type', async () => {
    const weekly = await bundled('internal_tx_types.sql');
    const [{ n }] = await rows(`SELECT count(DISTINCT (chain_id, internal_tx_id)) AS n FROM internal_transactions`);
    expect(weekly.reduce((s, r) => s + Number(r.txs), 0)).toBe(Number(n));
    for (const r of weekly) expect(new Date(`${r.week}T00:00:00Z`).getUTCDay()).toBe(1);
    // The value moved, exact in wei: each internal transaction's digits once, over 38 digits too.
    const once = await rows(`SELECT DISTINCT ON (chain_id, internal_tx_id) chain_id, internal_tx_id, value_raw FROM internal_transactions ORDER BY ALL`);
    const wei = once.reduce((sum, r) => sum + BigInt((r.value_raw as string | null) ?? '0'), 0n);
    expect(weekly.reduce((sum, r) => sum + BigInt((r.value as string | null) ?? '0'), 0n)).toBe(wei);
    expect(once.some((r) => ((r.value_raw as string | null) ?? '').replace(/^0+/, '').length > 38)).toBe(true);
  });

  it('daily_token_flows: the exact amount of each token and day, over 38 digits included (ERC-721: tokens moved)', async () => {
    const flows = await bundled('daily_token_flows.sql');
    const raw = await rows(`SELECT token_address, CAST(block_timestamp AT TIME ZONE 'UTC' AS DATE) AS day, token_type, value_raw FROM erc_transfers`);
    expect(flows.some((f) => String(f.amount).length > 38)).toBe(true);
    for (const f of flows) {
      const mine = raw.filter((r) => r.token_address === f.token_address && r.day === f.day);
      expect(Number(f.transfers)).toBe(mine.length);
      expect(f.amount, `${f.token_address} ${f.day}`).toBe(String(mine.reduce((sum, r) => sum + (r.token_type === 'ERC-721' ? 1n : BigInt(r.value_raw as string)), 0n)));
    }
  });

  it("rewards_monthly and rewards_per_node: the asset's units from the exact amounts", async () => {
    const raw = await rows(`SELECT node_id, reward_amount_raw, reward_denomination, addresses FROM historical_rewards`);
    const total = raw.reduce((s, r) => s + units(r.reward_amount_raw as string, Number(r.reward_denomination)), 0);
    const monthly = await bundled('rewards_monthly.sql');
    expect(monthly.reduce((s, r) => s + Number(r.rewards), 0)).toBe(raw.length);
    expect(monthly.reduce((s, r) => s + Number(r.reward_units), 0)).toBeCloseTo(total, 3);
    const perNode = await bundled('rewards_per_node.sql');
    for (const r of perNode) {
      const mine = raw.filter((x) => x.node_id === r.node_id).reduce((s, x) => s + units(x.reward_amount_raw as string, Number(x.reward_denomination)), 0);
      expect(Number(r.reward_units)).toBeCloseTo(mine, 3);
    }
    const perAddress = await bundled('rewards_per_address.sql');
    const listed = new Set(raw.flatMap((r) => r.addresses as string[]));
    expect(perAddress.length).toBe(Math.min(20, listed.size));
  });

  it('metrics_rollups: sums, averages and last values of the days of each week and month', async () => {
    const rolled = await bundled('metrics_rollups.sql');
    const daily = await rows(`SELECT chain_id, metric, CAST(timestamp AS DATE)::VARCHAR AS day, value FROM chain_metrics WHERE time_interval = 'day' ORDER BY day`);
    const days = (chain: string, metric: string, from: string, to: string) => daily.filter((d) => d.chain_id === chain && d.metric === metric && (d.day as string) >= from && (d.day as string) < to).map((d) => Number(d.value));
    const pick = (metric: string, period: string, start: string) => rolled.find((r) => r.chain_id === '43114' && r.metric === metric && r.period === period && r.period_start === start)!;
    const tx = pick('txCount', 'week', '2025-03-03');
    expect(tx.method).toBe('sum');
    expect(Number(tx.days)).toBe(7);
    expect(Number(tx.value)).toBeCloseTo(days('43114', 'txCount', '2025-03-03', '2025-03-10').reduce((a, b) => a + b, 0), 6);
    const tps = pick('avgTps', 'month', '2025-03-01');
    const march = days('43114', 'avgTps', '2025-03-01', '2025-04-01');
    expect(march.length).toBe(31);
    expect(Number(tps.value)).toBeCloseTo(march.reduce((a, b) => a + b, 0) / 31, 9);
    const cum = pick('cumulativeTxCount', 'month', '2025-03-01');
    expect(cum.method).toBe('last');
    expect(Number(cum.value)).toBe(days('43114', 'cumulativeTxCount', '2025-03-31', '2025-04-01')[0]);
    // Distinct counts are not added up from days: only the service's own week/month points.
    expect(rolled.filter((r) => r.metric === 'activeAddresses' && r.method !== 'service')).toEqual([]);
  });

  it('address_token_activity: received, sent and the exact net per address and token, over 38 digits included', async () => {
    const activity = await bundled('address_token_activity.sql');
    const raw = await rows(`SELECT address, token_address, from_address, to_address, value_raw, token_type FROM address_token_transfers`);
    expect(activity.length).toBe(new Set(raw.map((r) => `${r.address}/${r.token_address}`)).size);
    expect(raw.some((r) => ((r.value_raw as string | null) ?? '').length > 38)).toBe(true);
    for (const a of activity) {
      const mine = raw.filter((r) => r.address === a.address && r.token_address === a.token_address);
      expect([Number(a.received), Number(a.sent)]).toEqual([mine.filter((r) => r.to_address === a.address).length, mine.filter((r) => r.from_address === a.address).length]);
      let net = 0n;
      for (const r of mine) {
        const moved = r.token_type === 'ERC-721' ? 1n : BigInt(r.value_raw as string);
        if (r.from_address !== r.to_address) net += r.to_address === a.address ? moved : -moved;
      }
      expect(a.net_raw).toBe(String(net));
    }
  });

  it('runs_recent: totals of the run report', async () => {
    const [run] = await bundled('runs_recent.sql');
    const file = readdirSync(join(lake, '_runs')).find((f) => f.endsWith('.json'))!;
    const report = JSON.parse(readFileSync(join(lake, '_runs', file), 'utf8')) as { runId: string; streams: Array<{ rows: number; requests: number }> };
    expect(run!.run_id).toBe(report.runId);
    expect(Number(run!.rows)).toBe(report.streams.reduce((s, x) => s + x.rows, 0));
    expect(Number(run!.requests)).toBe(report.streams.reduce((s, x) => s + x.requests, 0));
  });
});
