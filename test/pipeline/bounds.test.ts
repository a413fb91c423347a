// Every bound means one thing (issue 36): a start is inclusive, an end exclusive, whatever the
// service does at its edges. Tried at the edges on the simulator (which answers as production)
// and on a service that reads its ends the other way or ignores them.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkPipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { startSimulator } from '../../src/simulator/server.js';
import { answerHead, json, lakeRows, quiet, scriptedServer } from '../helpers.js';

const DAY = 86_400;
const OCT_1 = Date.UTC(2025, 9, 1) / 1000;
const NOV_1 = Date.UTC(2025, 10, 1) / 1000;
const CONTRACT = '0x' + 'c'.repeat(40);
const party = (c: string) => ({ address: '0x' + c.repeat(40), name: 'N', symbol: 'S', decimals: 18, logoUri: 'u' });
const transfer = (n: number) => ({ blockNumber: String(n), blockTimestamp: 1700000000 + n, blockHash: `0xb${n}`, txHash: `0xt${n}`, from: party('1'), to: party('2'), logIndex: 0, value: '1', erc20Token: { address: CONTRACT, name: 'T', symbol: 'T', decimals: 18, ercType: 'ERC-20' } });

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-bounds-'));
const days = (lake: string) => lakeRows(lake, `SELECT count(*)::INT AS n, min(epoch(timestamp))::INT AS lo, max(epoch(timestamp))::INT AS hi FROM chain_metrics`);

describe('bounds at their edges', () => {
  it('chain_metrics of October: 31 daily points, 2025-10-01 in, 2025-11-01 out', async () => {
    const sim = await startSimulator({ port: 0, seed: 7 });
    closers.push(() => sim.close());
    const lake = tmp();
    const p = checkPipeline({ name: 'b', sources: { metrics: { url: sim.url } }, streams: [{ table: 'chain_metrics', chainIds: ['43114'], metrics: ['txCount'], startTimestamp: OCT_1, endTimestamp: NOV_1 }] }, 'b.yaml');
    const r = await runPipeline(p, { lake, logger: quiet });
    expect(r.status).toBe('ok');
    expect(r.streams[0]!.outside).toBe(0);
    expect(await days(lake)).toEqual([{ n: 31, lo: OCT_1, hi: NOV_1 - DAY }]);
  });

  it('a service that reads endTimestamp as inclusive: the point at the end is not committed, and said', async () => {
    // Every day from 2025-09-25 to 2025-11-05 whatever is asked: a service ignoring the range.
    const points = Array.from({ length: 42 }, (_, i) => ({ value: i, timestamp: OCT_1 - 6 * DAY + i * DAY })).reverse();
    const s = await scriptedServer((_req, res) => json(res, 200, { results: points }));
    closers.push(s.close);
    const lake = tmp();
    const p = checkPipeline({ name: 'b', sources: { metrics: { url: s.url } }, streams: [{ table: 'chain_metrics', chainIds: ['43114'], metrics: ['txCount'], startTimestamp: OCT_1, endTimestamp: NOV_1 }] }, 'b.yaml');
    const r = await runPipeline(p, { lake, logger: quiet });
    expect(r.status).toBe('ok');
    // The five days after October are outside; the six before its start are the service's to
    // round (a start may be rounded down), kept.
    expect(r.streams[0]!.outside).toBe(5);
    expect(r.streams[0]!.outsideFirst).toBe('time 2025-11-05T00:00:00Z is at or after the end asked, 2025-11-01T00:00:00Z (exclusive)');
    const got = await days(lake);
    expect(got[0]!.hi).toBe(NOV_1 - DAY);
  });

  it('erc_transfers from block 100 to 200: block 100 in, 199 in, 200 out, 99 out', async () => {
    const s = await scriptedServer((req, res) => {
      if (answerHead(req, res, 5000)) return;
      json(res, 200, { transfers: [201, 200, 199, 150, 100, 99].map(transfer) });
    });
    closers.push(s.close);
    for (const chunks of [1, 4]) {
      const lake = tmp();
      const p = checkPipeline({ name: 'b', sources: { data: { url: s.url } }, streams: [{ table: 'erc_transfers', chainId: '43114', contracts: [CONTRACT], startBlock: 100, endBlock: 200, chunks }] }, 'b.yaml');
      const r = await runPipeline(p, { lake, logger: quiet });
      expect(r.status).toBe('ok');
      expect(await lakeRows(lake, 'SELECT block_number::INT AS b FROM erc_transfers ORDER BY b'), `chunks ${chunks}`).toEqual([100, 150, 199].map((b) => ({ b })));
    }
  });
});
