// xchain_blocks and cchain_blocks (the X- and C-Chain's blocks by time, the P-Chain's declaration
// over x-chain and c-chain) against the simulator's world: the blocks the world has in the range,
// each linked to the one below (the C-Chain's: the EVM block below), and the transactions
// xchain_transactions and cchain_atomic_transactions land sit in the blocks they name (one world).
import { describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { cBlockHash, C_CHAIN } from '../../src/simulator/primary.js';
import { XC_DEMO, atomicWorld, type XcChain } from '../../src/simulator/primary_xc.js';
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

/** The blocks a chain's table landed are every block its world has in the range (at least `least`); returns them. */
async function expectWorldBlocks(lake: string, chain: XcChain, least: number): Promise<Array<Record<string, any>>> {
  const listing = atomicWorld(SEED, chain).listBlocks('mainnet', { startTimestamp: START }, DEMO.now);
  const want = Array.from({ length: listing.length }, (_, k) => listing.at(k)).map((b) => line(b.blockNumber, b.blockHash, b.parentHash, b.blockTimestamp, b.txCount, b.transactions));
  const got = await rows(lake, `SELECT block_number, block_hash, parent_hash, epoch(block_timestamp)::BIGINT ts, tx_count, tx_hashes FROM ${chain}chain_blocks`);
  expect(want.length).toBeGreaterThan(least);
  expect(sorted(got.map((r) => line(r.block_number, r.block_hash, r.parent_hash, r.ts, r.tx_count, r.tx_hashes)))).toEqual(sorted(want));
  return got;
}

/** Each transaction of `txs` (more than `least`) sits in the block of `blocks` it names: same hash, listed there. */
async function expectPlaced(lake: string, txs: string, blocks: string, least: number): Promise<void> {
  const [k] = await rows(lake, `SELECT count(*) n, count(*) FILTER (WHERE b.block_hash = t.block_hash AND list_contains(b.tx_hashes, t.tx_hash)) placed
    FROM ${txs} t LEFT JOIN ${blocks} b USING (network, block_number)`);
  expect(Number(k!.n)).toBeGreaterThan(least);
  expect(k!.placed).toBe(k!.n);
}

describe('xchain_blocks', () => {
  const run = simulatorRun(SEED, pipeline, 500);

  it('every block of the range as the world has it, each the child of the block below it', async () => {
    await expectWorldBlocks(run.lake, 'x', 100);
    const [k] = await rows(run.lake, `SELECT count(*) FILTER (WHERE parent_hash <> prev) broken, count(*) FILTER (WHERE current_supply IS NOT NULL OR proposer_id IS NOT NULL) p_only
      FROM (SELECT parent_hash, current_supply, proposer_id, lag(block_hash) OVER (ORDER BY block_number) prev FROM xchain_blocks) WHERE prev IS NOT NULL`);
    expect([k!.broken, k!.p_only]).toEqual(['0', '0']);
    // The P-Chain's blocks of the same range stay apart, with their own columns.
    const [p] = await rows(run.lake, `SELECT count(*) n, count(current_supply) s FROM platform_blocks`);
    expect(Number(p!.n)).toBeGreaterThan(100);
    expect(p!.s).toBe(p!.n);
  });

  it('one world: each X-Chain transaction landed sits in the block it names', async () => {
    await expectPlaced(run.lake, 'xchain_transactions', 'xchain_blocks', 5);
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

describe('cchain_blocks', () => {
  const run = simulatorRun(SEED, (url) => {
    const p = pipeline(url);
    p.streams = [
      { table: 'cchain_blocks', network: 'mainnet', startTimestamp: START },
      { table: 'cchain_atomic_transactions', network: 'mainnet', addresses: [...XC_DEMO.addresses], evmAddresses: [...XC_DEMO.evmAddresses], startTimestamp: START },
    ];
    return p;
  }, 500);

  it('the blocks of the range with atomic transactions as the world has them, each the child of the EVM block below it', async () => {
    const got = await expectWorldBlocks(run.lake, 'c', 20);
    // The EVM world's hashes, a block's and its parent's (block_number - 1) alike; no P-Chain column filled.
    for (const r of got.slice(0, 20)) {
      expect(r.block_hash).toBe(cBlockHash(SEED, 'mainnet', Number(r.block_number)));
      expect(r.parent_hash).toBe(cBlockHash(SEED, 'mainnet', Number(r.block_number) - 1));
    }
    const [k] = await rows(run.lake, `SELECT count(*) FILTER (WHERE current_supply IS NOT NULL OR proposer_id IS NOT NULL) p_only, count(*) FILTER (WHERE tx_count <> len(tx_hashes) OR tx_count = 0) bad FROM cchain_blocks`);
    expect([k!.p_only, k!.bad]).toEqual(['0', '0']);
  });

  it('one world: each atomic transaction landed sits in the block it names', async () => {
    await expectPlaced(run.lake, 'cchain_atomic_transactions', 'cchain_blocks', 0);
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
