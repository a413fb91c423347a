// The C-Chain's atomic memory as the data service answers it (cchain_utxos, cchain_balances:
// snapshots of /utxos and /balances on c-chain) and one world: the UTXOs P-Chain exports sent an
// address to the C-Chain are held there until the C-Chain import that takes them, then listed spent
// by it, as cchain_atomic_utxos lands that import's UTXOs; the balances are the sums of the held ones.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import type { StreamConfig } from '../../src/decl/stream.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { cUtxosOf } from '../../src/simulator/platform_balances.js';
import { C_CHAIN, P_CHAIN_ID, P_T0 } from '../../src/simulator/primary.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { poolAddress } from '../../src/simulator/staking.js';
import { DEMO } from '../../src/simulator/world.js';
import { listingPages, officialProblems } from '../official.js';
import { expectCleanRun, lakeRows as rows, line, quiet, runAtTimes, sorted } from '../helpers.js';

const SEED = 5;
const A = poolAddress('mainnet', 0);
const B = `P-${poolAddress('mainnet', 3)}`;
const BOTH = [A, B];
const body = (a: string) => a.replace(/^[PX]-/, '');

/** A time an export to the C-Chain of A's waits in atomic memory: its P-Chain block's, before the import. */
const WAITING = (() => {
  const u = cUtxosOf(SEED, 'mainnet', [A], DEMO.now).spent.find((x) => x.consumingTxTimestamp! > x.timestamp)!;
  return u.timestamp;
})();

const STREAMS: StreamConfig[] = [
  { table: 'cchain_utxos', network: 'mainnet', addresses: BOTH, includeSpent: true },
  { table: 'cchain_balances', network: 'mainnet', addresses: BOTH },
  { table: 'cchain_atomic_utxos', network: 'mainnet', addresses: [A], startTimestamp: P_T0 },
];

function pipeline(url: string): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = url;
  p.streams = STREAMS;
  return p;
}

describe('the C-Chain\'s atomic memory in one world', () => {
  const clock = { t: DEMO.now as number };
  let sim: Simulator;
  const lake = mkdtempSync(join(tmpdir(), 'cl-cmemory-'));
  const reports: RunReport[] = [];
  const wall0 = Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    sim = await startSimulator({ seed: SEED, worldNow: () => clock.t });
    const p = pipeline(sim.url);
    reports.push(await runAtTimes(clock, DEMO.now, wall0, () => runPipeline(p, { lake, logger: quiet })));
    // The same world an hour of wall time later: a second snapshot, the same in all else.
    reports.push(await runAtTimes(clock, DEMO.now, wall0 + 3600, () => runPipeline(p, { lake, logger: quiet })));
    // The world while an export of A's waits to be imported: held, and in the balances.
    reports.push(await runAtTimes(clock, WAITING, wall0 + 7200, () => runPipeline({ ...p, streams: STREAMS.slice(0, 2) }, { lake, logger: quiet })));
  }, 300_000);
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects or unknown fields, every run', () => {
    // At the head nothing waits in atomic memory: the balances have no entry then.
    for (const r of reports.slice(0, 2)) expectCleanRun({ ...r, streams: r.streams.filter((s) => s.table !== 'cchain_balances') }, { drift: false });
    for (const r of reports.slice(0, 2)) expect(r.streams.filter((s) => s.table === 'cchain_balances').map((s) => [s.errors, s.rejects])).toEqual([[[], 0]]);
    expectCleanRun(reports[2]!, { drift: false });
  });

  it('cchain_utxos: every UTXO exported to each address on the C-Chain, spent by the import that took it, amounts exact', async () => {
    for (const a of BOTH) {
      const { held, spent } = cUtxosOf(SEED, 'mainnet', [a], DEMO.now);
      const want = [...held, ...spent].map((u) => line(u.utxoId, u.creationTxHash, u.outputIndex, u.asset.amount, u.addresses, String(u.locktime), u.consumingTxHash));
      const got = await rows(lake, `SELECT utxo_id, creation_tx_hash, output_index, amount_raw, addresses, locktime::VARCHAR lt, consuming_tx_hash FROM cchain_utxos
        WHERE address = '${a}' AND epoch(snapshot_at) = ${wall0}`);
      expect(want.length, a).toBeGreaterThan(10);
      expect(sorted(got.map((r) => line(r.utxo_id, r.creation_tx_hash, r.output_index, r.amount_raw, r.addresses, r.lt, r.consuming_tx_hash))), a).toEqual(sorted(want));
    }
    const [k] = await rows(lake, `SELECT count(*) FILTER (WHERE NOT spent) held, count(*) FILTER (WHERE created_on_chain_id <> '${P_CHAIN_ID}' OR consumed_on_chain_id <> '${C_CHAIN.mainnet}') elsewhere,
      count(*) FILTER (WHERE amount::VARCHAR <> amount_raw) inexact FROM cchain_utxos WHERE epoch(snapshot_at) = ${wall0}`);
    expect([k!.held, k!.elsewhere, k!.inexact]).toEqual(['0', '0', '0']);
  });

  it('one world: the spent ones are the UTXOs the C-Chain imports of cchain_atomic_utxos took, in the same transactions', async () => {
    const imported = await rows(lake, `SELECT utxo_id, tx_hash, amount_raw FROM cchain_atomic_utxos WHERE imported AND list_contains(addresses, '${body(A)}')`);
    const spent = await rows(lake, `SELECT utxo_id, consuming_tx_hash tx_hash, amount_raw FROM cchain_utxos WHERE address = '${A}' AND spent AND epoch(snapshot_at) = ${wall0}`);
    const l = (r: Record<string, any>) => line(r.utxo_id, r.tx_hash, r.amount_raw);
    expect(spent.length).toBeGreaterThan(10);
    expect(sorted(spent.map(l))).toEqual(sorted(imported.map(l)));
  });

  it('cchain_balances: nothing waits at the chain\'s head; while an export waits, the sums of the UTXOs held', async () => {
    const [now] = await rows(lake, `SELECT count(*) n FROM cchain_balances WHERE epoch(snapshot_at) IN (${wall0}, ${wall0 + 3600})`);
    expect(now!.n).toBe('0');
    const held = await rows(lake, `SELECT address, utxo_id, amount_raw FROM cchain_utxos WHERE NOT spent AND epoch(snapshot_at) = ${wall0 + 7200}`);
    expect(held.filter((r) => r.address === A).length).toBeGreaterThan(0);
    const balances = await rows(lake, `SELECT address, category, asset_id, shared_with_chain_id, amount_raw amount, utxo_count n, epoch(balance_at)::BIGINT bat FROM cchain_balances WHERE epoch(snapshot_at) = ${wall0 + 7200}`);
    const fromUtxos = await rows(lake, `SELECT address, CASE WHEN locktime > ${WAITING} THEN 'atomicMemoryLocked' ELSE 'atomicMemoryUnlocked' END category, asset_id, created_on_chain_id shared_with_chain_id,
      sum(amount)::VARCHAR amount, count(*) n, ${wall0 + 7200} bat FROM cchain_utxos WHERE NOT spent AND epoch(snapshot_at) = ${wall0 + 7200} GROUP BY ALL`);
    const l = (r: Record<string, any>) => line(r.address, r.category, r.asset_id, r.shared_with_chain_id, r.amount, r.n, r.bat);
    expect(sorted(balances.map(l))).toEqual(sorted(fromUtxos.map(l)));
    const want = cUtxosOf(SEED, 'mainnet', [A], WAITING).held.map((u) => line(u.utxoId, u.asset.amount));
    expect(sorted(held.filter((r) => r.address === A).map((r) => line(r.utxo_id, r.amount_raw)))).toEqual(sorted(want));
  });

  it('each lands exactly: keys unique, a rerun adds a snapshot and changes nothing else', async () => {
    for (const [t, key] of [['cchain_balances', 'address, balance_at, category, asset_id, shared_with_chain_id'], ['cchain_utxos', 'address, utxo_id']]) {
      const [k] = await rows(lake, `SELECT count(*) n, count(DISTINCT (network, snapshot_at, ${key})) d FROM ${t}`);
      expect(k!.n, t).toBe(k!.d);
    }
    const [s] = await rows(lake, `SELECT count(DISTINCT snapshot_at) snaps FROM cchain_utxos`);
    expect(Number(s!.snaps)).toBe(3);
    const diff = await rows(lake, `(SELECT * EXCLUDE (snapshot_at) FROM cchain_utxos WHERE epoch(snapshot_at) = ${wall0})
      EXCEPT ALL (SELECT * EXCLUDE (snapshot_at) FROM cchain_utxos WHERE epoch(snapshot_at) = ${wall0 + 3600})`);
    expect(diff).toEqual([]);
  });

  it('every page of the C-Chain\'s UTXOs and balances is accepted by the official client', async () => {
    clock.t = WAITING;
    for (const chain of ['c-chain', C_CHAIN.mainnet]) {
      const pages = await listingPages(sim.url, `/v1/networks/mainnet/blockchains/${chain}/utxos?addresses=${BOTH.join(',')}&pageSize=100&includeSpent=true`);
      expect(pages.length).toBeGreaterThan(1);
      for (const b of pages) expect(officialProblems('cChainUtxos', b)).toBe('');
      expect(pages.every((b) => b.chainInfo.chainName === 'c-chain')).toBe(true);
      const r = await fetch(`${sim.url}/v1/networks/mainnet/blockchains/${chain}/balances?addresses=${BOTH.join(',')}`);
      expect(r.status).toBe(200);
      const b = await r.json();
      expect(b.balances.atomicMemoryUnlocked.length).toBeGreaterThan(0);
      expect(officialProblems('cChainBalances', b)).toBe('');
    }
  });
});
