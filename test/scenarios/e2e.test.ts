// End to end: the demo pipeline against the simulator, every table checked row for row against
// what the simulator's world says it served; then a second run that must not duplicate anything.
// Both runs are the shared lakes of the whole pipeline (lake-fixture.ts), which iceberg/read reads too.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { buildWorld, type World } from '../../src/simulator/world.js';
import { STREAMS } from '../../src/streams/index.js';
import { openWarehouse } from '../../src/warehouse/views.js';
import { viewColumns } from '../../src/warehouse/amounts.js';
import { query } from '../../src/warehouse/query.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { UNPUBLISHED, officialProblems } from '../official.js';
import { sharedRerunLake, sharedWholeLake } from '../lake-fixture.js';

let world: World;
let lake: string;
let pipeline: Pipeline;
let first: RunReport;
/** Per route of the data and metrics services, a few of the answers the demo asked (bounded). */
let served: Record<string, unknown[]>;
let conn: DuckDBConnection;

async function rows(sql: string): Promise<Array<Record<string, unknown>>> {
  return (await query(conn, sql)).rows;
}

const sortBy = <T>(xs: T[], f: (x: T) => string) => [...xs].sort((a, b) => (f(a) < f(b) ? -1 : f(a) > f(b) ? 1 : 0));
const streamsOf = (table: string) => pipeline.streams.filter((s) => s.table === table);

beforeAll(async () => {
  ({ lake, report: first, served } = await sharedWholeLake());
  // The world the shared lake's simulator served (seed 5; it stands still at its own now).
  world = buildWorld({ seed: 5 });
  pipeline = loadPipeline('pipelines/demo.yaml');
  conn = await openWarehouse(lake);
}, 300_000);

afterAll(() => conn?.closeSync());

describe('demo pipeline on the simulator', () => {
  it('completes with every stream and partition done', () => {
    expect(first.status).toBe('ok');
    for (const s of first.streams) {
      expect(s.errors).toEqual([]);
      expect(s.partitionsDone).toBe(s.partitions);
      expect(s.rows).toBeGreaterThan(0);
    }
    // Nothing staged is left behind (merge inputs included): the run clears _staging as it ends.
    expect(existsSync(join(lake, '_staging'))).toBe(false);
  });

  it("serves every data and metrics page in a shape the official client's validators accept", () => {
    const routes = Object.keys(served).filter((r) => !UNPUBLISHED.has(r));
    expect(routes.length).toBeGreaterThan(10);
    const problems = routes.flatMap((r) => served[r]!.map((b) => officialProblems(r, b))).filter(Boolean);
    expect(problems).toEqual([]);
  });

  it('lands erc_transfers exactly as served, all three forms, with exact amounts', async () => {
    const cfg = streamsOf('erc_transfers')[0]!;
    const expected = (cfg.contracts as string[]).flatMap((c) =>
      [...world.transfers('43114', c)].map((t: any) => {
        const tok = t.erc20Token ?? t.erc721Token ?? t.erc1155Token;
        return [t.txHash, t.logIndex, tok.tokenId ?? null, t.blockNumber, t.blockTimestamp, t.from.address.toLowerCase(), t.to.address.toLowerCase(), t.value ?? null, tok.address.toLowerCase(), t.erc20Token ? 'ERC-20' : t.erc721Token ? 'ERC-721' : 'ERC-1155'].join('|');
      }),
    );
    const got = (
      await rows(`SELECT tx_hash, log_index, token_id, block_number, epoch(block_timestamp)::BIGINT ts, from_address, to_address, value_raw, token_address, token_type FROM erc_transfers`)
    ).map((r) => [r.tx_hash, r.log_index, r.token_id, r.block_number, r.ts, r.from_address, r.to_address, r.value_raw, r.token_address, r.token_type].join('|'));
    expect(got.length).toBe(expected.length);
    expect(got.sort()).toEqual(expected.sort());
    const forms = await rows(`SELECT token_type, count(*) n FROM erc_transfers GROUP BY 1 ORDER BY 1`);
    expect(forms.map((f) => f.token_type)).toEqual(['ERC-1155', 'ERC-20', 'ERC-721']);
    // The view's value is the raw digits, over 38 digits too (which the files' DECIMAL holds as NULL, and the run counts).
    const [check] = await rows(`SELECT
        count(*) FILTER (WHERE value_raw IS NOT NULL AND length(ltrim(value_raw, '0')) <= 38 AND value::VARCHAR <> coalesce(nullif(ltrim(value_raw, '0'), ''), '0')) AS mismatched,
        count(*) FILTER (WHERE length(ltrim(value_raw, '0')) > 38 AND value::VARCHAR = ltrim(value_raw, '0')) AS over38,
        count(*) FILTER (WHERE length(ltrim(value_raw, '0')) > 38 AND value::VARCHAR IS DISTINCT FROM ltrim(value_raw, '0')) AS over38_wrong
      FROM erc_transfers`);
    expect(check).toMatchObject({ mismatched: '0', over38_wrong: '0' });
    expect(Number(check!.over38)).toBeGreaterThan(0);
    const reported = first.streams.find((s) => s.table === 'erc_transfers')!.over38;
    expect(reported).toBe(Number(check!.over38));
  });

  it('lands exactly the declared columns in every table, nothing more', async () => {
    for (const d of STREAMS) {
      const got = (await rows(`SELECT column_name, column_type FROM (DESCRIBE "${d.table}")`)).map((r) => [r.column_name, r.column_type]);
      expect(got, d.table).toEqual(viewColumns(d).map(([n, t]) => [n, t === 'TIMESTAMPTZ' ? 'TIMESTAMP WITH TIME ZONE' : t]));
    }
  });

  it('lands the declared column types', async () => {
    const types = Object.fromEntries((await rows(`SELECT column_name, column_type FROM (DESCRIBE erc_transfers)`)).map((r) => [r.column_name, r.column_type]));
    expect(types).toMatchObject({
      chain_id: 'VARCHAR', block_number: 'BIGINT', block_timestamp: 'TIMESTAMP WITH TIME ZONE', log_index: 'INTEGER',
      value: 'BIGNUM', value_raw: 'VARCHAR', token_decimals: 'INTEGER', token_id: 'VARCHAR',
    });
    const d = Object.fromEntries((await rows(`SELECT column_name, column_type FROM (DESCRIBE delegators)`)).map((r) => [r.column_name, r.column_type]));
    expect(d).toMatchObject({ reward_addresses: 'VARCHAR[]', amount_delegated: 'BIGNUM', reward_is_estimate: 'BOOLEAN', end_timestamp: 'TIMESTAMP WITH TIME ZONE' });
  });

  it('lands internal transactions as served, with a unique derived id', async () => {
    const cfg = streamsOf('internal_transactions')[0]!;
    const expected = (cfg.addresses as string[]).flatMap((a) =>
      [...world.internals('43114', a)].map((t: any) => [a.toLowerCase(), t.txHash, t.blockNumber, t.internalTxType, t.value, t.isReverted, t.gasUsed, t.gasLimit].join('|')),
    );
    const got = (await rows(`SELECT address, tx_hash, block_number, internal_tx_type, value_raw, is_reverted, gas_used, gas_limit FROM internal_transactions`)).map((r) =>
      [r.address, r.tx_hash, r.block_number, r.internal_tx_type, r.value_raw, r.is_reverted, r.gas_used, r.gas_limit].join('|'),
    );
    expect(got.sort()).toEqual(expected.sort());
    const types = await rows(`SELECT DISTINCT internal_tx_type FROM internal_transactions ORDER BY 1`);
    expect(types.length).toBeGreaterThan(3);
  });

  it('lands rewards, pending rewards and delegators as served', async () => {
    const r = streamsOf('historical_rewards')[0]!;
    const want = [...world.rewards('mainnet', { nodeIds: r.nodeIds as string[], addresses: r.addresses as string[], currency: 'usd' })].map((x: any) => [x.utxoId, x.reward.amount, x.amountStaked, x.nodeId].join('|'));
    const got = (await rows(`SELECT utxo_id, reward_amount_raw, amount_staked_raw, node_id FROM historical_rewards`)).map((x) => [x.utxo_id, x.reward_amount_raw, x.amount_staked_raw, x.node_id].join('|'));
    expect(got.sort()).toEqual(want.sort());

    const p = streamsOf('pending_rewards')[0]!;
    const wantP = [...world.pendingRewards('mainnet', { nodeIds: p.nodeIds as string[] })].map((x: any) => [x.txHash, x.estimatedReward.amount, x.progress].join('|'));
    const gotP = (await rows(`SELECT tx_hash, estimated_reward_amount_raw, progress FROM pending_rewards`)).map((x) => [x.tx_hash, x.estimated_reward_amount_raw, x.progress].join('|'));
    expect(gotP.sort()).toEqual(wantP.sort());

    const d = streamsOf('delegators')[0]!;
    const wantD = [...world.delegators('mainnet', { nodeIds: d.nodeIds as string[] })].map((x: any) =>
      [x.txHash, x.delegationStatus, x.grossReward ?? x.estimatedGrossReward, x.netReward ?? x.estimatedNetReward, x.delegationStatus !== 'completed'].join('|'),
    );
    const gotD = (await rows(`SELECT tx_hash, delegation_status, gross_reward_raw, net_reward_raw, reward_is_estimate FROM delegators`)).map((x) =>
      [x.tx_hash, x.delegation_status, x.gross_reward_raw, x.net_reward_raw, x.reward_is_estimate].join('|'),
    );
    expect(gotD.sort()).toEqual(wantD.sort());
    const statuses = await rows(`SELECT DISTINCT delegation_status s FROM delegators ORDER BY 1`);
    expect(statuses.map((s) => s.s)).toEqual(['active', 'completed', 'pending']);
  });

  it('lands every metric series point and avg_tps as served', async () => {
    const want: string[] = [];
    for (const s of streamsOf('chain_metrics')) {
      const interval = (s.timeInterval as string | undefined) ?? 'day';
      for (const chainId of s.chainIds as string[])
        for (const metric of s.metrics as string[])
          for (const pt of world.metricPoints(chainId, metric as any, { timeInterval: interval as any, startTimestamp: s.startTimestamp as number | undefined }))
            want.push([chainId, metric, interval, pt.timestamp, pt.value].join('|'));
    }
    const got = (await rows(`SELECT chain_id, metric, time_interval, epoch(timestamp)::BIGINT ts, value FROM chain_metrics`)).map((r) => [r.chain_id, r.metric, r.time_interval, r.ts, r.value].join('|'));
    expect(got.sort()).toEqual(want.sort());
    const tps = [...world.avgTpsPoints('43114')].map((p) => `${p.timestamp}|${p.value}`);
    const gotTps = (await rows(`SELECT epoch(timestamp)::BIGINT ts, value FROM avg_tps`)).map((r) => `${r.ts}|${r.value}`);
    expect(sortBy(gotTps, (x) => x)).toEqual(sortBy(tps, (x) => x));
  });

  it('a second run duplicates nothing and fetches no transfer already landed', async () => {
    const counts = STREAMS.map((d) => `SELECT '${d.table}' t, count(*) n FROM ${d.table}`).join(' UNION ALL ') + ' ORDER BY t';
    const before = await rows(counts);
    const { lake: again, report: second } = await sharedRerunLake();
    expect(second.status).toBe('ok');
    const transfers = second.streams.find((s) => s.table === 'erc_transfers')!;
    expect(transfers.rows).toBe(0);
    const conn2 = await openWarehouse(again);
    try {
      const after = (await query(conn2, counts)).rows;
      // A table keyed by the snapshot time holds the node's state once per run: the second adds one.
      const snapshots = new Set(STREAMS.filter((d) => d.key.includes('snapshot_at')).map((d) => d.table));
      expect(after).toEqual(before.map((r) => (snapshots.has(r.t as string) ? { ...r, n: String(2 * Number(r.n)) } : r)));
      for (const d of STREAMS) {
        const key = d.key.map((k) => `coalesce(CAST("${k}" AS VARCHAR), '<null>')`).join(", '|', ");
        const [dup] = (await query(conn2, `SELECT count(*) - count(DISTINCT concat(${key})) AS dups FROM ${d.table}`)).rows;
        expect(dup, d.table).toEqual({ dups: '0' });
      }
    } finally {
      conn2.closeSync();
    }
  }, 300_000);
});
