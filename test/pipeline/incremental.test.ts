// Incremental runs on a simulator whose world moves in time: each run fetches only what is new,
// and the lake always equals the world as of the last run.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { startSimulator, type SimulatorOptions } from '../../src/simulator/server.js';
import { DEMO } from '../../src/simulator/world.js';
import { openWarehouse } from '../../src/warehouse/views.js';
import { query } from '../../src/warehouse/query.js';
import { quiet, recordingProxy } from '../helpers.js';

const DAY = 86400;
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-inc-'));
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function clockedSim(opts: SimulatorOptions = {}) {
  const clock = { t: DEMO.now as number };
  const sim = await startSimulator({ port: 0, seed: 9, worldNow: () => clock.t, ...opts });
  closers.push(() => sim.close());
  return { sim, clock };
}

function pipeline(url: string, tables: string[]): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  p.sources.data.url = url;
  p.sources.metrics.url = url;
  p.streams = p.streams.filter((s) => tables.includes(s.table));
  return p;
}

async function rows(lake: string, sql: string) {
  const conn = await openWarehouse(lake);
  try {
    return (await query(conn, sql)).rows;
  } finally {
    conn.closeSync();
  }
}

describe('incremental runs', () => {
  it('transfers: a later run fetches only the new blocks, and the table equals the world', async () => {
    const { sim, clock } = await clockedSim();
    const lake = tmp();
    const p = pipeline(sim.url, ['erc_transfers', 'internal_transactions']);
    const first = await runPipeline(p, { lake, logger: quiet });
    const before = Number((await rows(lake, 'SELECT count(*) n FROM erc_transfers'))[0]!.n);
    clock.t = DEMO.now + 2 * DAY;
    const second = await runPipeline(p, { lake, logger: quiet });
    const t = second.streams.find((s) => s.table === 'erc_transfers')!;
    expect(t.rows).toBe(3 * 2 * DEMO.transfersPerDay);
    const pagesFirst = first.streams.find((s) => s.table === 'erc_transfers')!.pages;
    expect(t.pages).toBeLessThan(pagesFirst / 2);
    expect(Number((await rows(lake, 'SELECT count(*) n FROM erc_transfers'))[0]!.n)).toBe(before + t.rows);
    const want = (p.streams[0]!.contracts as string[]).flatMap((c) => [...sim.world.transfers('43114', c)].map((x) => `${x.txHash}|${x.logIndex}|${(x as any).erc1155Token?.tokenId ?? (x as any).erc721Token?.tokenId ?? ''}`));
    const got = (await rows(lake, `SELECT tx_hash, log_index, coalesce(token_id, '') AS token_id FROM erc_transfers`)).map((r) => `${r.tx_hash}|${r.log_index}|${r.token_id}`);
    expect(got.sort()).toEqual(want.sort());
    const i = second.streams.find((s) => s.table === 'internal_transactions')!;
    expect(i.rows).toBe(2 * 2 * DEMO.internalsPerDay);
    const [{ n: internals }] = (await rows(lake, 'SELECT count(*) n FROM internal_transactions')) as Array<{ n: string }>;
    expect(Number(internals)).toBe(DEMO.internalAddresses.reduce((n, a) => n + [...sim.world.internals('43114', a)].length, 0));
  });

  it('a delegation moving pending -> active -> completed ends as one row in its latest state', async () => {
    const { sim, clock } = await clockedSim();
    const lake = tmp();
    const p = pipeline(sim.url, ['delegators', 'pending_rewards', 'historical_rewards']);
    const d = DEMO.delegation;
    const seen: Array<Record<string, unknown>> = [];
    const pq = p.streams.find((s) => s.table === 'pending_rewards')!;
    const pendingKeys = new Set<string>();
    for (const t of [d.listedFrom + 3600, (d.start + d.end) / 2, d.end + 2 * DAY]) {
      clock.t = t;
      expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
      // Pending rewards are the world's pending listing as of this run: one paid since is gone.
      const wantP = [...sim.world.pendingRewards('mainnet', { nodeIds: pq.nodeIds as string[] })].map((x) => `${x.txHash}|${x.rewardType}`);
      const gotP = (await rows(lake, 'SELECT tx_hash, reward_type FROM pending_rewards')).map((r) => `${r.tx_hash}|${r.reward_type}`);
      expect(gotP.sort()).toEqual(wantP.sort());
      for (const k of gotP) pendingKeys.add(k);
      const r = await rows(lake, `SELECT delegation_status, reward_is_estimate, gross_reward_raw, count(*) OVER () AS copies FROM delegators WHERE tx_hash = '${d.txHash}'`);
      expect(r).toHaveLength(1);
      seen.push(r[0]!);
    }
    // Some reward listed as pending in an earlier run was paid by the last one, so left the table.
    const lastPending = (await rows(lake, 'SELECT tx_hash, reward_type FROM pending_rewards')).map((r) => `${r.tx_hash}|${r.reward_type}`);
    expect([...pendingKeys].filter((k) => !lastPending.includes(k)).length).toBeGreaterThan(0);
    expect(seen.map((s) => [s.delegation_status, s.reward_is_estimate])).toEqual([
      ['pending', true],
      ['active', true],
      ['completed', false],
    ]);
    // The table is the world's latest listing, one row per key.
    const want = [...sim.world.delegators('mainnet', { nodeIds: DEMO.nodeIds })].map((x) => `${x.txHash}|${x.delegationStatus}`);
    const got = (await rows(lake, 'SELECT tx_hash, delegation_status FROM delegators')).map((r) => `${r.tx_hash}|${r.delegation_status}`);
    expect(got.sort()).toEqual(want.sort());
    // Its validator's fee reward appears once it completed (the demo query asks for the
    // validator's own address), and the rewards table equals the world's listing.
    const fee = await rows(lake, `SELECT reward_type FROM historical_rewards WHERE tx_hash = '${d.txHash}'`);
    expect(fee.map((r) => r.reward_type)).toEqual(['VALIDATOR_FEE']);
    const q = p.streams.find((s) => s.table === 'historical_rewards')!;
    const wantR = [...sim.world.rewards('mainnet', { nodeIds: q.nodeIds as string[], addresses: q.addresses as string[] })].map((x) => x.utxoId);
    const gotR = (await rows(lake, 'SELECT utxo_id FROM historical_rewards')).map((r) => r.utxo_id);
    expect(gotR.sort()).toEqual(wantR.sort());
  });

  it('pending rewards: a complete run replaces the table; a run with a failed partition keeps its rows', async () => {
    const { sim, clock } = await clockedSim();
    let refuse = false;
    const [a, b] = DEMO.nodeIds;
    const proxy = await recordingProxy(sim.url, { refuse: (r) => refuse && decodeURIComponent(r.url).includes(b!) });
    closers.push(proxy.close);
    const lake = tmp();
    const p = pipeline(proxy.url, []);
    p.streams = [a!, b!].map((id) => ({ table: 'pending_rewards', network: 'mainnet', nodeIds: [id] }));
    const listing = (ids: string[]) => [...sim.world.pendingRewards('mainnet', { nodeIds: ids })].map((x) => `${x.txHash}|${x.rewardType}`).sort();
    const table = async () => (await rows(lake, 'SELECT tx_hash, reward_type FROM pending_rewards')).map((r) => `${r.tx_hash}|${r.reward_type}`).sort();
    const d = DEMO.delegation;
    clock.t = (d.start + d.end) / 2;
    expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
    const before = { a: listing([a!]), b: listing([b!]) };
    expect(await table()).toEqual([...before.a, ...before.b].sort());
    // Later the demo delegation's reward (node a) is paid; node b's partition fails this run.
    clock.t = d.end + 2 * DAY;
    refuse = true;
    const failed = await runPipeline(p, { lake, logger: quiet });
    expect(failed.status).toBe('failed');
    expect(failed.streams[0]!.errors.join('\n')).toContain('400');
    const partial = await table();
    // Merged, not replaced: node b's rows stay, and so does node a's paid one until a complete run.
    for (const k of [...before.a, ...before.b, ...listing([a!])]) expect(partial).toContain(k);
    refuse = false;
    expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
    const after = await table();
    expect(after).toEqual([...new Set([...listing([a!]), ...listing([b!])])].sort());
    expect(before.a.filter((k) => !after.includes(k)).length).toBeGreaterThan(0);
  });

  it('metrics: the newest point is refetched and replaced; older points stay; one row per key', async () => {
    const { sim, clock } = await clockedSim();
    const lake = tmp();
    const p = pipeline(sim.url, ['chain_metrics', 'avg_tps']);
    clock.t = DEMO.now + 6 * 3600;
    await runPipeline(p, { lake, logger: quiet });
    const newest = async () => (await rows(lake, `SELECT epoch(timestamp)::BIGINT ts, value FROM chain_metrics WHERE chain_id = '43114' AND metric = 'txCount' AND time_interval = 'day' ORDER BY timestamp DESC LIMIT 2`)) as Array<{ ts: string; value: number }>;
    const a = await newest();
    clock.t = DEMO.now + 18 * 3600;
    const second = await runPipeline(p, { lake, logger: quiet });
    const b = await newest();
    expect(b[0]!.ts).toBe(a[0]!.ts);
    expect(b[0]!.value).toBeGreaterThan(a[0]!.value);
    expect(b[1]).toEqual(a[1]);
    // Only the newest point of each series was fetched again (one page per partition).
    const m = second.streams.find((s) => s.table === 'chain_metrics')!;
    expect(m.pages).toBe(m.partitions);
    const want = [...sim.world.metricPoints('43114', 'txCount', { timeInterval: 'day', startTimestamp: 1700000000 })].map((x) => `${x.timestamp}|${x.value}`);
    const got = (await rows(lake, `SELECT epoch(timestamp)::BIGINT ts, value FROM chain_metrics WHERE chain_id = '43114' AND metric = 'txCount' AND time_interval = 'day'`)).map((r) => `${r.ts}|${r.value}`);
    expect(got.sort()).toEqual(want.sort());
    const tps = [...sim.world.avgTpsPoints('43114')].map((x) => `${x.timestamp}|${x.value}`);
    const gotTps = (await rows(lake, `SELECT epoch(timestamp)::BIGINT ts, value FROM avg_tps`)).map((r) => `${r.ts}|${r.value}`);
    expect(gotTps.sort()).toEqual(tps.sort());
    expect(second.streams.find((s) => s.table === 'avg_tps')!.pages).toBe(1);
  });

  it('avg_tps paged by nextPageStartKey (the legacy response schema): every page followed, then only the newest refetched', async () => {
    const { sim, clock } = await clockedSim({ avgTpsNextKey: 'nextPageStartKey' });
    const lake = tmp();
    const p = pipeline(sim.url, ['avg_tps']);
    clock.t = DEMO.now + 6 * 3600;
    const first = await runPipeline(p, { lake, logger: quiet });
    const tps = first.streams.find((s) => s.table === 'avg_tps')!;
    expect(tps.pages).toBeGreaterThan(tps.partitions);
    // As served at the world's time now.
    const want = () => (p.streams[0]!.chainIds as string[]).flatMap((c) => [...sim.world.avgTpsPoints(c)].map((x) => `${c}|${x.timestamp}|${x.value}`)).sort();
    const got = async () => (await rows(lake, `SELECT chain_id, epoch(timestamp)::BIGINT ts, value FROM avg_tps`)).map((r) => `${r.chain_id}|${r.ts}|${r.value}`).sort();
    expect(await got()).toEqual(want());
    clock.t = DEMO.now + 18 * 3600;
    const second = await runPipeline(p, { lake, logger: quiet });
    expect(second.streams.find((s) => s.table === 'avg_tps')!.pages).toBe(tps.partitions);
    expect(await got()).toEqual(want());
  });

  it('an expired data page token restarts the window from its high-water mark without duplicates', async () => {
    // Tokens live 1 s of server clock; the clock jumps once the first listing is under way.
    const server = { t: Date.now() };
    const { sim } = await clockedSim({ dataTokenTtlMs: 1000, now: () => server.t });
    const p = pipeline(sim.url, ['erc_transfers']);
    // One contract's listing: a partition paged one at a time is the claim, the others more pages of it.
    p.streams[0]!.contracts = (p.streams[0]!.contracts as string[]).slice(0, 1);
    p.streams[0]!.pageSize = 25;
    const lake = tmp();
    const ac = new AbortController();
    const cut = runPipeline(p, { lake, logger: quiet, flushRows: 50, signal: ac.signal, partitionConcurrency: 1 });
    const timer = setInterval(() => sim.stats.requests > 8 && ac.abort(new Error('cut')), 1);
    expect((await cut).status).toBe('failed');
    clearInterval(timer);
    server.t += 5000; // every stored token is stale now
    const resumed = await runPipeline(p, { lake, logger: quiet, flushRows: 50 });
    expect(resumed.status).toBe('ok');
    expect(resumed.streams[0]!.restarts).toBeGreaterThan(0);
    const want = (p.streams[0]!.contracts as string[]).reduce((n, c) => n + [...sim.world.transfers('43114', c)].length, 0);
    const [r] = await rows(lake, `SELECT count(*) n, count(DISTINCT (tx_hash, log_index, token_id, token_address)) k FROM erc_transfers`);
    expect(Number(r!.n)).toBe(want);
    expect(r!.k).toBe(r!.n);
  });
});
