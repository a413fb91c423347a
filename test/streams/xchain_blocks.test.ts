// xchain_blocks (the X-Chain's blocks by time, the P-Chain's declaration over x-chain) against the
// simulator's X-Chain world: the blocks the world has in the range, each linked to the one below,
// and the transactions xchain_transactions lands sit in the blocks they name (one world).
import { describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
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
    { table: 'xchain_blocks', network: 'mainnet', startTimestamp: START },
    { table: 'platform_blocks', network: 'mainnet', startTimestamp: START },
    { table: 'xchain_transactions', network: 'mainnet', addresses: [...XC_DEMO.addresses], startTimestamp: START },
  ];
  return p;
}

describe('xchain_blocks', () => {
  const run = simulatorRun(SEED, pipeline, 500);

  it('every block of the range as the world has it, each the child of the block below it', async () => {
    const listing = atomicWorld(SEED, 'x').listBlocks('mainnet', { startTimestamp: START }, DEMO.now);
    const want = Array.from({ length: listing.length }, (_, k) => listing.at(k)).map((b) => line(b.blockNumber, b.blockHash, b.parentHash, b.blockTimestamp, b.txCount, b.transactions));
    const got = await rows(run.lake, `SELECT block_number, block_hash, parent_hash, epoch(block_timestamp)::BIGINT ts, tx_count, tx_hashes FROM xchain_blocks`);
    expect(want.length).toBeGreaterThan(100);
    expect(sorted(got.map((r) => line(r.block_number, r.block_hash, r.parent_hash, r.ts, r.tx_count, r.tx_hashes)))).toEqual(sorted(want));
    const [k] = await rows(run.lake, `SELECT count(*) FILTER (WHERE parent_hash <> prev) broken, count(*) FILTER (WHERE current_supply IS NOT NULL OR proposer_id IS NOT NULL) p_only
      FROM (SELECT parent_hash, current_supply, proposer_id, lag(block_hash) OVER (ORDER BY block_number) prev FROM xchain_blocks) WHERE prev IS NOT NULL`);
    expect([k!.broken, k!.p_only]).toEqual(['0', '0']);
    // The P-Chain's blocks of the same range stay apart, with their own columns.
    const [p] = await rows(run.lake, `SELECT count(*) n, count(current_supply) s FROM platform_blocks`);
    expect(Number(p!.n)).toBeGreaterThan(100);
    expect(p!.s).toBe(p!.n);
  });

  it('one world: each X-Chain transaction landed sits in the block it names', async () => {
    const [k] = await rows(run.lake, `SELECT count(*) n, count(*) FILTER (WHERE b.block_hash = t.block_hash AND list_contains(b.tx_hashes, t.tx_hash)) placed
      FROM xchain_transactions t LEFT JOIN xchain_blocks b USING (network, block_number)`);
    expect(Number(k!.n)).toBeGreaterThan(5);
    expect(k!.placed).toBe(k!.n);
  });

  it('a rerun adds nothing', async () => {
    await expectStillRerun(run.lake, run.p, ['xchain_blocks', 'platform_blocks']);
  });

  it('every page is accepted by the official client', async () => {
    const pages = await listingPages(run.sim.url, `/v1/networks/mainnet/blockchains/x-chain/blocks?startTimestamp=${DEMO.now - 3600}&pageSize=100`, 'primaryBlocks');
    expect(pages.flatMap((b) => b.blocks).length).toBeGreaterThan(50);
    expect(pages.every((b) => b.chainInfo.chainName === 'x-chain')).toBe(true);
  });
});
