// Listings make progress or stop (issue 22): runs of the CLI against a loopback service that sends
// rows again (a fresh page token with the same rows, pages that overlap), a page larger than the
// size asked, or rows outside the block range asked. Whatever the run's exit code, what it committed
// has one row per key: `chainlake check` passes.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/pipeline/report.js';
import type { IncomingMessage } from 'node:http';
import { answerHead, json, lakeRows, scriptedServer } from '../helpers.js';
import { cliHere } from '../lake-fixture.js';
import { runChecks } from '../../src/warehouse/check.js';
import { openWarehouse } from '../../src/warehouse/views.js';

const CONTRACT = '0x' + 'c'.repeat(40);
const ADDRESS = '0x' + 'a'.repeat(40);
const TRANSFERS = '/v1/chains/{chainId}/tokens/{address}/transfers';
const INTERNALS = '/v1/chains/{chainId}/addresses/{address}/transactions:listInternals';
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const party = (c: string) => ({ address: '0x' + c.repeat(40), name: 'N', symbol: 'S', decimals: 18, logoUri: 'u' });
const token = { address: CONTRACT, name: 'T', symbol: 'T', decimals: 18, ercType: 'ERC-20' };
/** The transfer of block `n` (one a block, newest first as the service lists them). */
const transfer = (n: number) => ({ blockNumber: String(n), blockTimestamp: 1700000000 + n, blockHash: `0xb${n}`, txHash: `0xt${n}`, from: party('1'), to: party('2'), logIndex: 0, value: String(n), erc20Token: token });
const internal = () => ({ blockNumber: '9', blockTimestamp: 1700000009, blockHash: '0xb9', txHash: '0xt9', from: party('1'), to: party('2'), internalTxType: 'CALL', value: '1', isReverted: false, gasUsed: '21000', gasLimit: '30000' });

/**
 * A data service that answers each listing request with `answer(page token, n)`; any other
 * request is a 404 (the test would fail on it).
 */
async function service(answer: (token: string | undefined, n: number) => unknown) {
  // The listing's requests; the chain's head (block HEAD) is asked apart.
  const requests: IncomingMessage[] = [];
  const s = await scriptedServer((req, res) => {
    if (answerHead(req, res, HEAD)) return;
    const url = new URL(req.url!, 'http://x');
    if (!/\/(transfers|transactions:listInternals)$/.test(url.pathname)) return json(res, 404, { message: `not scripted: ${url.pathname}` });
    requests.push(req);
    json(res, 200, answer(url.searchParams.get('pageToken') ?? undefined, requests.length));
  });
  closers.push(s.close);
  return { ...s, requests };
}

const HEAD = 1000;

/** `chainlake run` of one stream entry into a new lake, committing every page (--flush-rows 1). */
async function run(url: string, entry: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), 'cl-repeats-'));
  const lake = join(dir, 'lake');
  const file = join(dir, 'p.yaml');
  writeFileSync(file, `name: repeats\nsources:\n  data: { url: "${url}" }\nstreams:\n  - ${JSON.stringify({ chainId: '43114', chunks: 1, ...entry })}\n`);
  const r = await cliHere(['run', file, '--lake', lake, '--flush-rows', '1', '--quiet', '--no-warehouse']);
  const runs = readdirSync(join(lake, '_runs')).filter((f) => f.endsWith('.json'));
  expect(runs).toHaveLength(1);
  const report = JSON.parse(readFileSync(join(lake, '_runs', runs[0]!), 'utf8')) as RunReport;
  return { ...r, lake, report };
}

/** What `chainlake check` asserts (it exits 1 on any failure), in this process. */
async function checkPasses(lake: string): Promise<void> {
  const conn = await openWarehouse(lake);
  try {
    const results = await runChecks(conn, lake);
    expect(results.filter((c) => c.status === 'fail').map((c) => `${c.table}: ${c.check}: ${c.detail}`)).toEqual([]);
    expect(results.filter((c) => c.check === 'key unique' && c.status === 'pass').length).toBeGreaterThan(0);
  } finally {
    conn.closeSync();
  }
}

describe('listings make progress or stop', () => {
  it('a service that sends the same rows under a fresh token is stopped at its second page; what landed is one row per key', async () => {
    const s = await service((_token, n) => ({ transfers: [transfer(103), transfer(102)], nextPageToken: `fresh-${n}` }));
    const t0 = performance.now();
    const r = await run(s.url, { table: 'erc_transfers', contracts: [CONTRACT] });
    const seconds = (performance.now() - t0) / 1000;
    expect(r.code).toBe(1);
    expect(s.requests).toHaveLength(2);
    const errors = r.report.streams[0]!.errors.join('\n');
    expect(errors).toContain(`${TRANSFERS}: the service sent the same rows again`);
    expect(r.stdout).toContain(`${TRANSFERS}: the service sent the same rows again`);
    // The first page committed (--flush-rows 1), the second not at all.
    expect(await lakeRows(r.lake, 'SELECT count(*)::INT AS n, count(DISTINCT tx_hash)::INT AS d FROM erc_transfers')).toEqual([{ n: 2, d: 2 }]);
    await checkPasses(r.lake);
    console.log(`fresh token, same rows: ${s.requests.length} requests, exit ${r.code}, ${seconds.toFixed(1)} s`);
  });

  it('pages that overlap by a row: the row sent again is dropped and counted, the run exits 0', async () => {
    const pages: Record<string, unknown> = {
      first: { transfers: [transfer(106), transfer(105), transfer(104)], nextPageToken: 'a' },
      a: { transfers: [transfer(104), transfer(103), transfer(102)], nextPageToken: 'b' },
      // The last page brings nothing new: the listing ends there, not in error.
      b: { transfers: [transfer(102)] },
    };
    const s = await service((token) => pages[token ?? 'first']);
    const r = await run(s.url, { table: 'erc_transfers', contracts: [CONTRACT] });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(s.requests).toHaveLength(3);
    const stream = r.report.streams[0]!;
    expect(stream.rows).toBe(5);
    expect(stream.sentTwice).toBe(2);
    expect(r.stdout).toContain('sent twice by the service (dropped, the table keeps one):\n  erc_transfers: 2 rows');
    expect(await lakeRows(r.lake, 'SELECT count(*)::INT AS n, count(DISTINCT tx_hash)::INT AS d FROM erc_transfers')).toEqual([{ n: 5, d: 5 }]);
    await checkPasses(r.lake);
  });

  it('a page larger than the page size asked fails the partition; nothing of it lands', async () => {
    const pages: Record<string, unknown> = {
      first: { transfers: [transfer(106), transfer(105)], nextPageToken: 'a' },
      a: { transfers: [transfer(104), transfer(103), transfer(102)], nextPageToken: 'b' },
      b: { transfers: [transfer(101)] },
    };
    const s = await service((token) => pages[token ?? 'first']);
    const r = await run(s.url, { table: 'erc_transfers', contracts: [CONTRACT], pageSize: 2 });
    expect(r.code).toBe(1);
    expect(s.requests).toHaveLength(2);
    expect(r.report.streams[0]!.errors.join('\n')).toContain(`${TRANSFERS}: the service sent a page of 3 items where 2 were asked (pageSize)`);
    expect(await lakeRows(r.lake, 'SELECT block_number::INT AS b FROM erc_transfers ORDER BY b')).toEqual([{ b: 105 }, { b: 106 }]);
    await checkPasses(r.lake);
  });

  it('rows outside the block range asked are dropped and counted; the first below it ends the listing', async () => {
    // A service that ignores startBlock and endBlock: it lists every block, newest first.
    const pages: Record<string, unknown> = {
      first: { transfers: [7, 6, 5, 4].map(transfer), nextPageToken: 'a' },
      a: { transfers: [3, 2, 1, 0].map(transfer), nextPageToken: 'b' },
      b: { transfers: [] },
    };
    const s = await service((token) => pages[token ?? 'first']);
    const r = await run(s.url, { table: 'erc_transfers', contracts: [CONTRACT], startBlock: 2, endBlock: 6 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(s.requests).toHaveLength(2);
    const stream = r.report.streams[0]!;
    expect([stream.outside, stream.sentTwice]).toEqual([4, 0]);
    expect(stream.outsideFirst).toBe("block 7 is at or above the window's end 6");
    expect(r.stdout).toContain("outside what was asked or can exist (dropped, never committed; the service sent them):\n  erc_transfers: 4 rows (the first: block 7 is at or above the window's end 6)");
    expect(await lakeRows(r.lake, 'SELECT block_number::INT AS b FROM erc_transfers ORDER BY b')).toEqual([2, 3, 4, 5].map((b) => ({ b })));
    await checkPasses(r.lake);
  });

  it('a row above the head or in the future is never committed and never moves the cursor; later runs land the new blocks', async () => {
    for (const chunks of [1, 4]) {
      // A broken index: block 99,999 (far above the head) and block 900 dated next century, among real rows.
      const future = { ...transfer(900), txHash: '0xfuture', blockTimestamp: 4_102_444_800 };
      let grown = false;
      const s = await service(() => ({ transfers: grown ? [transfer(HEAD), transfer(999)] : [transfer(99_999), future, transfer(800), transfer(700)] }));
      const r = await run(s.url, { table: 'erc_transfers', contracts: [CONTRACT], startBlock: 600, chunks });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const stream = r.report.streams[0]!;
      expect(stream.outside, `chunks ${chunks}`).toBeGreaterThanOrEqual(2);
      expect(stream.outsideFirst).toMatch(/^block 99999 is at or above the window's end 1001|^block 900's time 2100-01-01T00:00:00Z is in the future/);
      expect(await lakeRows(r.lake, 'SELECT block_number::INT AS b FROM erc_transfers ORDER BY b')).toEqual([{ b: 700 }, { b: 800 }]);
      const state = JSON.parse(readFileSync(join(r.lake, '_state', 'erc_transfers', readdirSync(join(r.lake, '_state', 'erc_transfers'))[0]!), 'utf8')) as { cursor: { nextBlock: number }; head: { block: number } };
      expect(state.cursor.nextBlock).toBeLessThanOrEqual(HEAD);
      expect(state.head.block).toBe(HEAD);
      await checkPasses(r.lake);
      // A rebuild from the raw pages (which hold the stray rows as sent) leaves them out too.
      const rebuilt = await cliHere(['rebuild', 'erc_transfers', '--lake', r.lake, '--no-warehouse']);
      expect(rebuilt.code, rebuilt.stderr).toBe(0);
      expect(rebuilt.stdout).toMatch(/, [1-9]\d* outside what the runs committed, left out as they were\)/);
      expect(await lakeRows(r.lake, 'SELECT block_number::INT AS b FROM erc_transfers ORDER BY b')).toEqual([{ b: 700 }, { b: 800 }]);
      // The next run asks from the cursor on and lands what the chain added, not nothing.
      grown = true;
      const file = join(r.lake, '..', 'p.yaml');
      const again = await cliHere(['run', file, '--lake', r.lake, '--flush-rows', '1', '--quiet', '--no-warehouse']);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(await lakeRows(r.lake, 'SELECT block_number::INT AS b FROM erc_transfers ORDER BY b')).toEqual([{ b: 700 }, { b: 800 }, { b: 999 }, { b: HEAD }]);
    }
  });

  it('internal transactions: twins stay two rows; the same page under a fresh token makes no new twins and stops the listing', async () => {
    const s = await service((_token, n) => ({ transactions: [internal(), internal()], nextPageToken: `fresh-${n}` }));
    const r = await run(s.url, { table: 'internal_transactions', addresses: [ADDRESS] });
    expect(r.code).toBe(1);
    expect(s.requests).toHaveLength(2);
    expect(r.report.streams[0]!.errors.join('\n')).toContain(`${INTERNALS}: the service sent the same rows again`);
    expect(await lakeRows(r.lake, 'SELECT count(*)::INT AS n, count(DISTINCT internal_tx_id)::INT AS d FROM internal_transactions')).toEqual([{ n: 2, d: 2 }]);
    await checkPasses(r.lake);
  });
});
