// cchain_blocks (the C-Chain's blocks as the primary network listing has them, the P-Chain's
// declaration over c-chain) against the simulator's world: the EVM blocks of the range that hold an
// atomic transaction, each naming its EVM parent, and the atomic transactions
// cchain_atomic_transactions lands sit in the blocks they name (one world).
import { describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { cBlockHash, C_CHAIN } from '../../src/simulator/primary.js';
import { XC_DEMO, atomicWorld } from '../../src/simulator/primary_xc.js';
import { DEMO } from '../../src/simulator/world.js';
import { listingPages } from '../official.js';
import { expectStillRerun, lakeRows as rows, line, simulatorRun, sorted } from '../helpers.js';

const SEED = 13;
const START = DEMO.now - 6 * 3600;

function pipeline(url: string): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = url;
  p.streams = [
    { table: 'cchain_blocks', network: 'mainnet', startTimestamp: START },
    { table: 'cchain_atomic_transactions', network: 'mainnet', addresses: [...XC_DEMO.addresses], evmAddresses: [...XC_DEMO.evmAddresses], startTimestamp: START },
  ];
  return p;
}

describe('cchain_blocks', () => {
  const run = simulatorRun(SEED, pipeline, 500);

  it('every block of the range as the world has it, each the child of the EVM block below it', async () => {
    const listing = atomicWorld(SEED, 'c').listBlocks('mainnet', { startTimestamp: START }, DEMO.now);
    const want = Array.from({ length: listing.length }, (_, k) => listing.at(k)).map((b) => line(b.blockNumber, b.blockHash, b.parentHash, b.blockTimestamp, b.txCount, b.transactions));
    const got = await rows(run.lake, `SELECT block_number, block_hash, parent_hash, epoch(block_timestamp)::BIGINT ts, tx_count, tx_hashes FROM cchain_blocks`);
    expect(want.length).toBeGreaterThan(20);
    expect(sorted(got.map((r) => line(r.block_number, r.block_hash, r.parent_hash, r.ts, r.tx_count, r.tx_hashes)))).toEqual(sorted(want));
    // The EVM world's hashes: a block's and its parent's (block_number - 1) alike; no P-Chain column filled.
    for (const r of got.slice(0, 20)) {
      expect(r.block_hash).toBe(cBlockHash(SEED, 'mainnet', Number(r.block_number)));
      expect(r.parent_hash).toBe(cBlockHash(SEED, 'mainnet', Number(r.block_number) - 1));
    }
    const [k] = await rows(run.lake, `SELECT count(*) FILTER (WHERE current_supply IS NOT NULL OR proposer_id IS NOT NULL) p_only, count(*) FILTER (WHERE tx_count <> len(tx_hashes) OR tx_count = 0) bad FROM cchain_blocks`);
    expect([k!.p_only, k!.bad]).toEqual(['0', '0']);
  });

  it('one world: each atomic transaction landed sits in the block it names', async () => {
    const [k] = await rows(run.lake, `SELECT count(*) n, count(*) FILTER (WHERE b.block_hash = t.block_hash AND list_contains(b.tx_hashes, t.tx_hash)) placed
      FROM cchain_atomic_transactions t LEFT JOIN cchain_blocks b USING (network, block_number)`);
    expect(Number(k!.n)).toBeGreaterThan(0);
    expect(k!.placed).toBe(k!.n);
  });

  it('lands exactly: the key is unique and a rerun adds nothing', async () => {
    const [k] = await rows(run.lake, `SELECT count(*) n, count(DISTINCT (network, block_number)) d FROM cchain_blocks`);
    expect(k!.n).toBe(k!.d);
    await expectStillRerun(run.lake, run.p, ['cchain_blocks']);
  });

  it('every page is accepted by the official client, by alias and by id', async () => {
    for (const chain of ['c-chain', C_CHAIN.mainnet]) {
      const pages = await listingPages(run.sim.url, `/v1/networks/mainnet/blockchains/${chain}/blocks?startTimestamp=${START}&pageSize=10`, 'primaryBlocks');
      expect(pages.length).toBeGreaterThan(2);
      expect(pages.every((b) => b.chainInfo.chainName === 'c-chain')).toBe(true);
    }
  });
});
