// The X-Chain's balances and UTXOs (xchain_balances, xchain_utxos: snapshots of the data service)
// and one world: an address followed through the node (utxos, avm.getUTXOs) and the data service
// (xchain_utxos, xchain_balances, xchain_outputs) in one lake gives the same UTXOs (transaction,
// output index, asset, amount, owners, locktime), the balances are their sums, and the UTXOs of
// the node's own address are the outputs of its transactions in the data service.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import type { StreamConfig } from '../../src/decl/stream.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { UINT64_MAX, nodeUtxoSet, xAddress } from '../../src/simulator/node_utxos.js';
import { P_T0, X_CHAIN } from '../../src/simulator/primary.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { poolAddress } from '../../src/simulator/staking.js';
import { DEMO } from '../../src/simulator/world.js';
import { xUtxosOf } from '../../src/simulator/xchain_utxos.js';
import { listingPages, officialProblems } from '../official.js';
import { expectCleanRun, lakeRows as rows, line, quiet, runAtTimes, sorted } from '../helpers.js';

const SEED = 5;
/** The node's address that holds most of its UTXOs, and an owner of the data service's own traffic. */
const NODE_ADDR = xAddress(0);
const POOL_ADDR = `X-${poolAddress('mainnet', 2)}`;
const BOTH = [NODE_ADDR, POOL_ADDR];

const STREAMS: StreamConfig[] = [
  { table: 'xchain_utxos', network: 'mainnet', addresses: BOTH },
  { table: 'xchain_balances', network: 'mainnet', addresses: BOTH },
  { table: 'xchain_transactions', network: 'mainnet', addresses: [NODE_ADDR], startTimestamp: P_T0 },
  { table: 'xchain_outputs', network: 'mainnet', addresses: [NODE_ADDR], startTimestamp: P_T0 },
  { table: 'utxos', addresses: [NODE_ADDR] },
  { table: 'utxos', addresses: [POOL_ADDR] },
];

function pipeline(url: string): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = url;
  p.streams = STREAMS;
  return p;
}

const body = (a: string) => a.replace(/^X-/, '');

describe('the X-Chain in one world: node and data service', () => {
  const clock = { t: DEMO.now as number };
  let sim: Simulator;
  let p: Pipeline;
  const lake = mkdtempSync(join(tmpdir(), 'cl-xworld-'));
  const reports: RunReport[] = [];
  const wall0 = Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    sim = await startSimulator({ seed: SEED, worldNow: () => clock.t });
    p = pipeline(sim.url);
    reports.push(await runAtTimes(clock, DEMO.now, wall0, () => runPipeline(p, { lake, logger: quiet })));
    // The same world an hour of wall time later: a second snapshot of each, the same in all else.
    reports.push(await runAtTimes(clock, DEMO.now, wall0 + 3600, () => runPipeline(p, { lake, logger: quiet })));
  }, 300_000);
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects or unknown fields, both runs', () => {
    for (const r of reports) expectCleanRun(r, { drift: false });
  });

  it('xchain_utxos: every UTXO each address holds in the world, amounts and locktimes exact', async () => {
    for (const a of BOTH) {
      const want = xUtxosOf(SEED, 'mainnet', [a], DEMO.now).held.map((u) =>
        line(u.utxoId, u.creationTxHash, u.outputIndex, u.asset.assetId, u.asset.amount, u.addresses, u.threshold, String(u.locktime), u.timestamp));
      const got = await rows(lake, `SELECT utxo_id, creation_tx_hash, output_index, asset_id, amount_raw, addresses, threshold, locktime::VARCHAR lt, epoch(created_timestamp)::BIGINT ct
        FROM xchain_utxos WHERE address = '${a}' AND epoch(snapshot_at) = ${wall0}`);
      expect(want.length, a).toBeGreaterThan(10);
      expect(sorted(got.map((r) => line(r.utxo_id, r.creation_tx_hash, r.output_index, r.asset_id, r.amount_raw, r.addresses, r.threshold, r.lt, r.ct))), a).toEqual(sorted(want));
    }
    // The node's address holds the uint64 maximum, and the UTXO locked for good is someone's.
    const [k] = await rows(lake, `SELECT count(*) FILTER (WHERE amount_raw = '${UINT64_MAX}') top, count(*) FILTER (WHERE amount::VARCHAR <> amount_raw) inexact,
      count(DISTINCT asset_id) assets FROM xchain_utxos WHERE address = '${NODE_ADDR}'`);
    expect(Number(k!.top)).toBe(2);
    expect(k!.inexact).toBe('0');
    expect(Number(k!.assets)).toBeGreaterThan(1);
  });

  it('one address through the node and the data service: the same UTXOs (transaction, index, asset, amount, owners, locktime)', async () => {
    for (const a of BOTH) {
      const node = await rows(lake, `SELECT tx_id, output_index, asset_id, amount_raw, threshold, locktime::VARCHAR lt, addresses FROM utxos
        WHERE list_contains(addresses, '${a}') AND source_chain IS NULL AND epoch(snapshot_at) = ${wall0}`);
      const data = await rows(lake, `SELECT creation_tx_hash tx_id, output_index, asset_id, amount_raw, threshold, locktime::VARCHAR lt, list_transform(addresses, x -> 'X-' || x) addresses
        FROM xchain_utxos WHERE address = '${a}' AND epoch(snapshot_at) = ${wall0}`);
      const l = (r: Record<string, any>) => line(r.tx_id, r.output_index, r.asset_id, r.amount_raw, r.threshold, r.lt, r.addresses);
      expect(node.length, a).toBeGreaterThan(10);
      expect(sorted(node.map(l)), a).toEqual(sorted(data.map(l)));
    }
    // The node's own UTXOs are the ones it was given: the data service lists the transaction of each.
    const given = nodeUtxoSet(SEED).filter((u) => u.owners.includes(NODE_ADDR)).map((u) => line(u.txId, u.outputIndex, u.amount));
    const landed = await rows(lake, `SELECT tx_id, output_index, amount_raw FROM utxos WHERE list_contains(addresses, '${NODE_ADDR}') AND epoch(snapshot_at) = ${wall0}`);
    expect(sorted(landed.map((r) => line(r.tx_id, r.output_index, r.amount_raw)))).toEqual(sorted(given));
  });

  it('the node address\'s UTXOs are the outputs of its X-Chain transactions (xchain_outputs) that nothing spent', async () => {
    const outputs = await rows(lake, `SELECT o.utxo_id, o.tx_hash, o.output_index, o.amount_raw FROM xchain_outputs o
      WHERE list_contains(o.addresses, '${body(NODE_ADDR)}') AND o.consumed_on_chain_id = '${X_CHAIN.mainnet}' AND o.consuming_tx_hash IS NULL`);
    const held = await rows(lake, `SELECT utxo_id, creation_tx_hash tx_hash, output_index, amount_raw FROM xchain_utxos WHERE address = '${NODE_ADDR}' AND epoch(snapshot_at) = ${wall0}`);
    const l = (r: Record<string, any>) => line(r.utxo_id, r.tx_hash, r.output_index, r.amount_raw);
    expect(sorted(held.map(l))).toEqual(sorted(outputs.map(l)));
    const [t] = await rows(lake, `SELECT count(*) n FROM xchain_transactions WHERE list_contains(addresses, '${body(NODE_ADDR)}')`);
    expect(Number(t!.n)).toBe(held.length);
  });

  it('xchain_balances: per category and asset, the sums of the UTXOs; the node\'s UTXOs sum to the same', async () => {
    for (const a of BOTH) {
      const balances = await rows(lake, `SELECT category, asset_id, amount_raw amount, utxo_count n FROM xchain_balances WHERE address = '${a}' AND epoch(snapshot_at) = ${wall0}`);
      const fromUtxos = await rows(lake, `SELECT CASE WHEN locktime > ${DEMO.now} THEN 'locked' ELSE 'unlocked' END category, asset_id, sum(amount)::VARCHAR amount, count(*) n
        FROM xchain_utxos WHERE address = '${a}' AND epoch(snapshot_at) = ${wall0} GROUP BY ALL`);
      const l = (r: Record<string, any>) => line(r.category, r.asset_id, r.amount, r.n);
      expect(balances.length, a).toBeGreaterThan(1);
      expect(sorted(balances.map(l)), a).toEqual(sorted(fromUtxos.map(l)));
      const node = await rows(lake, `SELECT asset_id, sum(amount)::VARCHAR amount FROM utxos WHERE list_contains(addresses, '${a}') AND source_chain IS NULL AND epoch(snapshot_at) = ${wall0} GROUP BY ALL`);
      const total = await rows(lake, `SELECT asset_id, sum(amount)::VARCHAR amount FROM xchain_balances WHERE address = '${a}' AND epoch(snapshot_at) = ${wall0} GROUP BY ALL`);
      expect(sorted(node.map((r) => line(r.asset_id, r.amount))), a).toEqual(sorted(total.map((r) => line(r.asset_id, r.amount))));
    }
    const [k] = await rows(lake, `SELECT count(*) FILTER (WHERE category = 'locked') locked_n, typeof(any_value(amount)) t FROM xchain_balances`);
    expect(Number(k!.locked_n)).toBeGreaterThan(0);
    expect(k!.t).toBe('BIGNUM');
  });

  it('a rerun adds a snapshot and changes nothing else; keys are unique', async () => {
    for (const [t, key] of [['xchain_balances', 'address, balance_at, category, asset_id, shared_with_chain_id'], ['xchain_utxos', 'address, utxo_id']]) {
      const [k] = await rows(lake, `SELECT count(*) n, count(DISTINCT (network, snapshot_at, ${key})) d, count(DISTINCT snapshot_at) snaps FROM ${t}`);
      expect(k!.n, t).toBe(k!.d);
      expect(Number(k!.snaps), t).toBe(2);
      const diff = await rows(lake, `(SELECT * EXCLUDE (snapshot_at${t === 'xchain_balances' ? ', balance_at' : ''}) FROM ${t} WHERE epoch(snapshot_at) = ${wall0})
        EXCEPT ALL (SELECT * EXCLUDE (snapshot_at${t === 'xchain_balances' ? ', balance_at' : ''}) FROM ${t} WHERE epoch(snapshot_at) = ${wall0 + 3600})`);
      expect(diff, t).toEqual([]);
    }
  });

  it('every page of the X-Chain\'s UTXOs and balances is accepted by the official client', async () => {
    for (const chain of ['x-chain', X_CHAIN.mainnet]) {
      const pages = await listingPages(sim.url, `/v1/networks/mainnet/blockchains/${chain}/utxos?addresses=${BOTH.join(',')}&pageSize=100&includeSpent=true`);
      expect(pages.length).toBeGreaterThan(5);
      for (const b of pages) expect(officialProblems('xChainUtxos', b)).toBe('');
      const r = await fetch(`${sim.url}/v1/networks/mainnet/blockchains/${chain}/balances?addresses=${BOTH.join(',')}`);
      expect(r.status).toBe(200);
      expect(officialProblems('xChainBalances', await r.json())).toBe('');
    }
  });
});
