// A cursor past what exists is said and curable (issue 36): a service whose index was broken made
// the lake commit a row above the chain's real head; the next runs fetch nothing there, say so in
// the run report and in `status`, and `chainlake reset` moves the cursor back (the rows taken back
// deleted in the same commit), after which runs land the chain's new blocks. And the other forms
// of reset: a series to a time, a partition dropped, and every refusal with exit 2.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answerHead, json, lakeContents, lakeRows, scriptedServer } from '../helpers.js';
import { cliHere } from '../lake-fixture.js';
import { StateStore } from '../../src/state/store.js';
import { startSimulator } from '../../src/simulator/server.js';
import { WORLD_NOW } from '../../src/simulator/evm.js';

const CONTRACT = '0x' + 'c'.repeat(40);
const party = (c: string) => ({ address: '0x' + c.repeat(40), name: 'N', symbol: 'S', decimals: 18, logoUri: 'u' });
const transfer = (n: number) => ({ blockNumber: String(n), blockTimestamp: 1700000000 + n, blockHash: `0xb${n}`, txHash: `0xt${n}`, from: party('1'), to: party('2'), logIndex: 0, value: String(n), erc20Token: { address: CONTRACT, name: 'T', symbol: 'T', decimals: 18, ercType: 'ERC-20' } });

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** A data service whose head and rows the test sets; listings ignore the range asked (the gate keeps to it). */
async function service(world: { head: number; blocks: number[] }) {
  const listings: IncomingMessage[] = [];
  const s = await scriptedServer((req, res) => {
    if (answerHead(req, res, world.head)) return;
    listings.push(req);
    json(res, 200, { transfers: [...world.blocks].sort((a, b) => b - a).map(transfer) });
  });
  closers.push(s.close);
  return { ...s, listings };
}

function pipeline(dir: string, url: string, entry: Record<string, unknown>): string {
  const file = join(dir, 'p.yaml');
  writeFileSync(file, `name: reset\nsources:\n  data: { url: "${url}" }\n  metrics: { url: "${url}" }\nstreams:\n  - ${JSON.stringify(entry)}\n`);
  return file;
}

const run = (file: string, lake: string) => cliHere(['run', file, '--lake', lake, '--quiet', '--no-warehouse']);

describe('a cursor past what exists', () => {
  it('is said by the run and by status, and `reset --to-block` cures it: later runs land the new blocks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-reset-'));
    const lake = join(dir, 'lake');
    // A broken index: the service called block 99,999 its head and listed a row there.
    const world = { head: 99_999, blocks: [99_999, 800, 700] };
    const s = await service(world);
    const file = pipeline(dir, s.url, { table: 'erc_transfers', chainId: '43114', contracts: [CONTRACT], startBlock: 600, chunks: 1 });
    expect((await run(file, lake)).code).toBe(0);
    expect(new StateStore(lake).load('erc_transfers', `43114/${CONTRACT}`).cursor.nextBlock).toBe(99_999);
    // Fixed, the service says its head is 1,000: nothing to fetch, and the run says why.
    world.head = 1000;
    world.blocks = [1000, 999, 800, 700];
    const asked = s.listings.length;
    const stuck = await run(file, lake);
    expect(stuck.code, stuck.stdout + stuck.stderr).toBe(0);
    expect(s.listings.length).toBe(asked);
    expect(stuck.stdout).toContain(`notes:\n  erc_transfers: 43114/${CONTRACT}: the cursor (block 99999) is ahead of the chain's head (block 1000): nothing fetched`);
    const status = await cliHere(['status', '--lake', lake]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('! next block 99999');
    expect(status.stdout).toContain(`erc_transfers/43114/${CONTRACT}: the cursor (next block 99999) is ahead of the chain's head (block 1000, seen `);
    expect(status.stdout).toContain(`chainlake reset erc_transfers --partition '43114/${CONTRACT}' --to-block 1001`);
    const check = await cliHere(['check', '--lake', lake]);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/FAIL\s+erc_transfers\s+cursors within what exists/);
    const asJson = JSON.parse((await cliHere(['status', '--lake', lake, '--format', 'json'])).stdout) as { partitions: Array<{ problem?: string; head?: { block: number } }> };
    expect(asJson.partitions[0]!.head!.block).toBe(1000);
    expect(asJson.partitions[0]!.problem).toMatch(/is ahead of the chain's head/);
    // The cure: back to block 801; the row of block 99,999 goes in the same commit.
    const reset = await cliHere(['reset', 'erc_transfers', '--lake', lake, '--to-block', '801', '--no-warehouse']);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toBe(`reset erc_transfers 43114/${CONTRACT}: next block 99999 -> next block 801 (3 rows -> 2)\n`);
    expect(await lakeRows(lake, 'SELECT block_number::INT AS b FROM erc_transfers ORDER BY b')).toEqual([{ b: 700 }, { b: 800 }]);
    expect((await cliHere(['status', '--lake', lake])).stdout).not.toContain('!');
    const again = await run(file, lake);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(await lakeRows(lake, 'SELECT block_number::INT AS b FROM erc_transfers ORDER BY b')).toEqual([700, 800, 999, 1000].map((b) => ({ b })));
    expect((await cliHere(['check', '--lake', lake])).code).toBe(0);
    // Its raw pages went with the rows taken back: a rebuild refuses rather than lose rows.
    const rebuild = await cliHere(['rebuild', 'erc_transfers', '--lake', lake, '--no-warehouse']);
    expect(rebuild.code).toBe(2);
    expect(rebuild.stderr).toContain('hold rows that no raw page keeps');
  });
});

describe('chainlake reset', () => {
  it('takes a series back to a time, and drops a partition: the reruns give the tables of one run', async () => {
    const sim = await startSimulator({ port: 0, seed: 3 });
    closers.push(() => sim.close());
    const dir = mkdtempSync(join(tmpdir(), 'cl-reset-sim-'));
    const entry = { table: 'chain_metrics', chainIds: ['43114', 'total'], metrics: ['txCount'], startTimestamp: WORLD_NOW - 60 * 86_400 };
    const file = pipeline(dir, sim.url, entry);
    const one = join(dir, 'one');
    expect((await run(file, one)).code).toBe(0);
    const lake = join(dir, 'lake');
    expect((await run(file, lake)).code).toBe(0);
    const before = await lakeContents(one);
    const back = WORLD_NOW - 20 * 86_400;
    const r = await cliHere(['reset', 'chain_metrics', '--lake', lake, '--partition', 'chain_metrics/43114/txCount/day', '--to-time', String(back), '--no-warehouse']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^reset chain_metrics 43114\/txCount\/day: newest point .* -> newest point 2025-10-12T00:00:00Z \(\d+ rows -> 40\)\n$/);
    expect(await lakeRows(lake, `SELECT count(*)::INT AS n, max(epoch(timestamp))::INT AS t FROM chain_metrics WHERE chain_id = '43114'`)).toEqual([{ n: 40, t: back - 86_400 }]);
    const dropped = await cliHere(['reset', 'chain_metrics', '--lake', lake, '--partition', 'total/txCount/day', '--drop', '--no-warehouse']);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(dropped.stdout).toContain('reset chain_metrics total/txCount/day: newest point');
    expect(dropped.stdout).toContain('-> dropped: the next run fetches it from its configured start');
    expect(await lakeRows(lake, `SELECT count(*)::INT AS n FROM chain_metrics WHERE chain_id = 'total'`)).toEqual([{ n: 0 }]);
    expect((await run(file, lake)).code).toBe(0);
    expect(await lakeContents(lake)).toEqual(before);
    expect((await cliHere(['check', '--lake', lake])).code).toBe(0);
  });

  it('refuses what it cannot do, with exit 2, and changes nothing', async () => {
    const sim = await startSimulator({ port: 0, seed: 3 });
    closers.push(() => sim.close());
    const dir = mkdtempSync(join(tmpdir(), 'cl-reset-bad-'));
    const lake = join(dir, 'lake');
    const file = pipeline(dir, sim.url, { table: 'chain_metrics', chainIds: ['43114'], metrics: ['txCount'], startTimestamp: WORLD_NOW - 10 * 86_400 });
    expect((await run(file, lake)).code).toBe(0);
    const state = () => readdirSync(join(lake, '_state', 'chain_metrics')).map((f) => readFileSync(join(lake, '_state', 'chain_metrics', f), 'utf8'));
    const was = state();
    const back = String(WORLD_NOW - 5 * 86_400);
    const cases: Array<[string[], string]> = [
      [[], 'give one of --to-block, --to-time or --drop'],
      [['--to-time', back, '--drop'], 'give one of --to-block, --to-time or --drop (given: --to-time, --drop)'],
      [['--to-block', '5'], '--to-block is for tables appended by block; this one refreshes by merge (give --to-time)'],
      [['--to-time', String(WORLD_NOW + 86_400 * 365)], 'is not behind the cursor'],
      [['--to-time', back, '--partition', 'nope'], 'no partition "nope"'],
      [['--to-time', 'soon'], '--to-time "soon": "soon" is not a time: give a date (2025-10-01, UTC midnight), a UTC date-time (2025-10-01T12:00:00Z) or whole Unix seconds'],
      [['--to-time', `${back}000`], `--to-time "${back}000": ${back}000 is not Unix seconds: as milliseconds it is`],
    ];
    for (const [flags, message] of cases) {
      const r = await cliHere(['reset', 'chain_metrics', '--lake', lake, '--no-warehouse', ...flags]);
      expect(r.code, flags.join(' ')).toBe(2);
      expect(r.stderr).toContain(message);
    }
    const missing = await cliHere(['reset', 'chain_metrics', '--lake', join(dir, 'nope'), '--to-time', '1']);
    expect(missing.code).toBe(2);
    expect(state()).toEqual(was);
  });
});
