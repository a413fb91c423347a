// xchain_asset_transactions (an X-Chain asset's transactions, by time) against the simulator's
// X-Chain world: per asset, exactly the transactions the world lists for it, each moving it; the
// UTXOs of the node's asset are outputs of those transactions (one world); a rerun adds nothing;
// sql/xchain_asset_flows.sql sums each asset's amounts exactly; every page accepted by the
// official client.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { AVAX_ASSET_ID, assetId, nodeUtxoSet, xAddress } from '../../src/simulator/node_utxos.js';
import { P_T0 } from '../../src/simulator/primary.js';
import { atomicWorld, xAssetId, type XChainTransaction } from '../../src/simulator/primary_xc.js';
import { DEMO } from '../../src/simulator/world.js';
import { listingPages, officialProblems } from '../official.js';
import { expectStillRerun, lakeRows as rows, quiet, simulatorRun, sorted } from '../helpers.js';

const SEED = 9;
const DAY = 86_400;
const LAKE = xAssetId('mainnet', 0);
const NODE_ASSET = assetId(0);
const ASSETS: Array<{ id: string; from: number }> = [
  { id: LAKE, from: DEMO.now - DAY },
  { id: NODE_ASSET, from: P_T0 },
  { id: AVAX_ASSET_ID, from: DEMO.now - 2 * 3600 },
];

function pipeline(url: string): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = url;
  p.streams = [
    ...ASSETS.map((a) => ({ table: 'xchain_asset_transactions', network: 'mainnet', assetIds: [a.id], startTimestamp: a.from })),
    { table: 'utxos', addresses: [xAddress(0), xAddress(1), xAddress(2)] },
  ];
  return p;
}

describe('xchain_asset_transactions', () => {
  const run = simulatorRun(SEED, pipeline, 500);

  it('per asset: exactly the transactions the world lists for it since the start, each moving it', async () => {
    for (const a of ASSETS) {
      const listing = atomicWorld(SEED, 'x').listTransactions<XChainTransaction>('mainnet', { assetId: a.id, startTimestamp: a.from }, DEMO.now);
      const want = Array.from({ length: listing.length }, (_, k) => listing.at(k).txHash);
      const got = await rows(run.lake, `SELECT tx_hash FROM xchain_asset_transactions WHERE asset_id = '${a.id}'`);
      expect(want.length, a.id).toBeGreaterThan(3);
      expect(sorted(got.map((r) => r.tx_hash)), a.id).toEqual(sorted(want));
      const [k] = await rows(run.lake, `SELECT count(*) FILTER (WHERE NOT (list_contains(asset_ids_unlocked, asset_id) OR amount_created::VARCHAR LIKE '%' || asset_id || '%')) other
        FROM xchain_asset_transactions WHERE asset_id = '${a.id}'`);
      expect(k!.other, a.id).toBe('0');
    }
    const [k] = await rows(run.lake, `SELECT count(*) n, count(DISTINCT (network, asset_id, tx_hash)) d FROM xchain_asset_transactions`);
    expect(k!.n).toBe(k!.d);
  });

  it('one world: each node UTXO of the node\'s asset was made by one of that asset\'s transactions', async () => {
    const utxos = await rows(run.lake, `SELECT DISTINCT tx_id FROM utxos WHERE asset_id = '${NODE_ASSET}' AND source_chain IS NULL`);
    const given = new Set(nodeUtxoSet(SEED).filter((u) => u.assetId === NODE_ASSET && u.owners.some((o) => [0, 1, 2].some((i) => o === xAddress(i)))).map((u) => u.txId));
    expect(utxos.length).toBeGreaterThan(0);
    expect(new Set(utxos.map((r) => r.tx_id))).toEqual(given);
    const listed = new Set((await rows(run.lake, `SELECT tx_hash FROM xchain_asset_transactions WHERE asset_id = '${NODE_ASSET}'`)).map((r) => r.tx_hash));
    for (const tx of given) expect(listed.has(tx), tx).toBe(true);
  });

  it('sql/xchain_asset_flows.sql: per asset and day, the amounts unlocked and created, exact', async () => {
    const got = await rows(run.lake, readFileSync('sql/xchain_asset_flows.sql', 'utf8'));
    for (const a of ASSETS) {
      const listing = atomicWorld(SEED, 'x').listTransactions<XChainTransaction>('mainnet', { assetId: a.id, startTimestamp: a.from }, DEMO.now);
      let unlocked = 0n;
      let created = 0n;
      for (let k = 0; k < listing.length; k++) {
        const t = listing.at(k);
        for (const e of t.amountUnlocked) if (e.assetId === a.id) unlocked += BigInt(e.amount);
        for (const e of t.amountCreated) if (e.assetId === a.id) created += BigInt(e.amount);
      }
      const mine = got.filter((r) => r.asset_id === a.id);
      expect(mine.length, a.id).toBeGreaterThan(0);
      expect(mine.reduce((n, r) => n + BigInt(r.unlocked), 0n), a.id).toBe(unlocked);
      expect(mine.reduce((n, r) => n + BigInt(r.created), 0n), a.id).toBe(created);
    }
    // AVAX: the fees burned.
    expect(got.filter((r) => r.asset_id === AVAX_ASSET_ID).every((r) => BigInt(r.net_created) < 0n)).toBe(true);
  });

  it('a rerun adds nothing', async () => {
    await expectStillRerun(run.lake, run.p, ['xchain_asset_transactions']);
  });

  it('every page is accepted by the official client', async () => {
    const pages = await listingPages(run.sim.url, `/v1/networks/mainnet/blockchains/x-chain/assets/${LAKE}/transactions?startTimestamp=${DEMO.now - DAY}&pageSize=50`, 'assetTransactions');
    expect(pages.length).toBeGreaterThan(1);
    const r = await fetch(`${run.sim.url}/v1/networks/mainnet/blockchains/p-chain/assets/${LAKE}/transactions`);
    expect(r.status).toBe(400);
  });
});
