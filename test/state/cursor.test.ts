// The rules of a chunked window (state/cursor.ts), of where a partition's fetched range begins, and of the requests kept under way (sources/client.ts).
import { describe, expect, it } from 'vitest';
import { chunkedWindow, coveredRange, cursorProblem, fetchedFrom, firstWindow, highest, listingRange, seriesFrom, seriesStartBelow, splitPoint, startBelow, tilingProblem, type ChunkedWindow, type Cursor } from '../../src/state/cursor.js';
import { AUTO_INFLIGHT, inflightTarget } from '../../src/sources/client.js';
import { cursorText } from '../../src/cli/status.js';

const bp = { start: 'startBlock', end: 'endBlock' };
const chunk = (from: number, to: number, more: Partial<ChunkedWindow['chunks'][number]> = {}) => ({ query: { startBlock: String(from), endBlock: String(to) }, files: [], ...more });

describe('chunked windows', () => {
  it('splitPoint shares only blocks below what the listing reached, and never leaves a side empty', () => {
    expect(splitPoint(0, 100, undefined)).toBe(50);
    // Newest first, it has reached block 40: the rows it holds (40 and up) stay its own.
    expect(splitPoint(0, 100, 40)).toBe(21);
    expect(splitPoint(10, 100, 11)).toBe(11);
    expect(splitPoint(10, 100, 10)).toBeUndefined();
    expect(splitPoint(10, 11, undefined)).toBeUndefined();
    for (const [from, to, low] of [[0, 2, 1], [5, 9, 8], [0, 1000, 3]] as const) {
      const mid = splitPoint(from, to, low)!;
      expect(mid).toBeGreaterThan(from);
      expect(mid).toBeLessThanOrEqual(low);
    }
  });

  it('a listing answers for its query raised to its floor', () => {
    expect(listingRange(chunk(0, 100), bp)).toEqual({ from: 0, to: 100 });
    expect(listingRange(chunk(0, 100, { floor: 60 }), bp)).toEqual({ from: 60, to: 100 });
    expect(listingRange({ query: {}, files: [] }, bp)).toEqual({ from: 0, to: Infinity });
  });

  it('tilingProblem finds a gap, an overlap and a chunk past the end', () => {
    const w = (chunks: ChunkedWindow['chunks']): ChunkedWindow => ({ start: 10, end: 100, endConfigured: false, chunks, splits: 0 });
    expect(tilingProblem(w([chunk(10, 100, { floor: 50 }), chunk(10, 50)]), bp)).toBeUndefined();
    expect(tilingProblem(w([chunk(10, 100, { floor: 60 }), chunk(10, 50)]), bp)).toBe('no chunk covers blocks 50 to 59');
    expect(tilingProblem(w([chunk(10, 100, { floor: 40 }), chunk(10, 50)]), bp)).toBe('blocks 40 to 49 are in two chunks');
    expect(tilingProblem(w([chunk(10, 90)]), bp)).toBe('no chunk covers blocks 90 to 99');
    expect(tilingProblem(w([chunk(10, 120)]), bp)).toBe("a chunk reaches past the window's end (100)");
  });

  it('a window of one listing, as written before chunks, reads as one chunk', () => {
    const legacy = { query: { startBlock: '500', pageSize: '100' }, token: 't', files: ['a'] };
    expect(chunkedWindow(legacy, bp)).toEqual({ start: 500, end: undefined, endConfigured: false, chunks: [legacy], splits: 0 });
    const ended = { query: { startBlock: '5', endBlock: '9' }, files: [] };
    expect(chunkedWindow(ended, bp)).toMatchObject({ start: 5, end: 9, endConfigured: true });
  });

  it('the newest block committed is the highest of the chunks, with the keys of the skipped block added', () => {
    expect(highest([undefined, { block: 5, keys: ['a'] }, { block: 9, keys: ['b'] }, { block: 9, keys: ['c', 'b'] }])).toEqual({ block: 9, keys: ['b', 'c'] });
    const window: ChunkedWindow = { start: 500, end: 900, endConfigured: false, splits: 1, chunks: [chunk(500, 900, { floor: 700, top: { block: 800, keys: ['x'] } }), chunk(500, 700, { top: { block: 500, keys: ['y'] } })] };
    expect(coveredRange({ nextBlock: 500, skip: { block: 500, keys: ['a'] }, window })).toEqual({ high: 800, hw: { block: 800, keys: 1 } });
    // Rows found again in the skipped block add to its keys.
    const low: ChunkedWindow = { ...window, chunks: [chunk(500, 900, { floor: 700 }), chunk(500, 700, { top: { block: 500, keys: ['y'] } })] };
    expect(coveredRange({ nextBlock: 500, skip: { block: 500, keys: ['a'] }, window: low })).toEqual({ high: 500, hw: { block: 500, keys: 2 } });
  });

  it('status tells the ranges done and in flight', () => {
    const window: ChunkedWindow = { start: 500, end: 900, endConfigured: false, splits: 2, chunks: [chunk(500, 900, { floor: 700, done: true }), chunk(500, 600), chunk(600, 700, { done: true })] };
    expect(cursorText({ window }, true)).toBe('paging, 2 of 3 ranges done, 1 in flight');
    expect(cursorText({ window }, false)).toBe('paging blocks 500 to 899: 2 of 3 ranges done, 1 in flight (2 split off)');
  });
});

describe('requests under way', () => {
  it('are the budget rate x the latency, with a margin, within bounds', () => {
    // 6,000 CU a minute of 20 CU requests: 5 a second.
    expect(inflightTarget(6000, 20, 2000)).toBe(Math.ceil(5 * 2 * 1.25) + 1);
    expect(inflightTarget(6000, 20, 800)).toBe(6);
    expect(inflightTarget(6000, 20, 250)).toBe(AUTO_INFLIGHT.min);
    expect(inflightTarget(Infinity, 20, 800)).toBe(AUTO_INFLIGHT.min);
    expect(inflightTarget(6000, 20, undefined)).toBe(AUTO_INFLIGHT.min);
    expect(inflightTarget(1_000_000, 1, 5000)).toBe(AUTO_INFLIGHT.max);
  });
});

describe('a cursor past what exists', () => {
  const NOW = 1_761_955_200;
  const at = '2025-11-01T00:00:00.000Z';
  const part = (cursor: object, head?: number) => ({ table: 't', partition: 'p', cursor, ...(head === undefined ? {} : { head: { block: head, at } }) });

  it('an append cursor ahead of the head its last run found, or rows committed above it', () => {
    expect(cursorProblem(part({ nextBlock: 1001 }, 1000), NOW)).toBeUndefined();
    expect(cursorProblem(part({ nextBlock: 1000, skip: { block: 1000, keys: ['a'] } }, 1000), NOW)).toBeUndefined();
    expect(cursorProblem(part({ nextBlock: 1002 }, 1000), NOW)).toBe("the cursor (next block 1002) is ahead of the chain's head (block 1000, seen 2025-11-01 00:00); move it back: chainlake reset t --partition 'p' --to-block 1001");
    expect(cursorProblem(part({ nextBlock: 99_999, skip: { block: 99_999, keys: ['x'] } }, 1000), NOW)).toMatch(/^the cursor \(next block 99999\) is ahead/);
    // Without a head found (a lake of runs before it was kept) nothing is known.
    expect(cursorProblem(part({ nextBlock: 99_999 }), NOW)).toBeUndefined();
  });

  it("a series' newest point in the future, beyond the clocks' tolerance", () => {
    expect(cursorProblem(part({ newest: NOW + 600 }), NOW)).toBeUndefined();
    expect(cursorProblem(part({ newest: NOW + 86_400 }), NOW)).toBe(`the newest point (2025-11-02T00:00:00Z) is in the future; move it back: chainlake reset t --partition 'p' --to-time ${NOW}`);
  });
});

describe('where the fetched range begins', () => {
  const resumed: Cursor = { nextBlock: 500 };
  it('an append partition: refuses a start below it, records the first start, adopts one where none was recorded, and moves to a start past the cursor', () => {
    expect(startBelow(100, resumed, 99)).toBe(true);
    expect(startBelow(100, resumed, 100)).toBe(false);
    expect(startBelow(100, resumed, 300)).toBe(false);
    // Nothing fetched yet (or a lake that recorded nothing): nothing to refuse.
    expect(startBelow(100, {}, 0)).toBe(false);
    expect(startBelow(undefined, resumed, 0)).toBe(false);
    // A window under way counts as fetched.
    expect(startBelow(100, { window: { query: {}, files: [] } }, 50)).toBe(true);
    expect(fetchedFrom(undefined, {}, 100)).toBe(100);
    expect(fetchedFrom(undefined, resumed, 100)).toBe(100);
    expect(fetchedFrom(100, resumed, 300)).toBe(100);
    expect(fetchedFrom(100, resumed, 500)).toBe(100);
    expect(fetchedFrom(100, resumed, 501)).toBe(501);
    expect(fetchedFrom(100, { nextBlock: 500, window: { query: {}, files: [] } }, 900)).toBe(100);
    // A lake that recorded none: the names of files of windows fetched in chunks say where the first began.
    const stem = 'erc_transfers/chain=43114/43114_0xb10644cea485f69a5f8859e127911157a0d6d30d-0a5714ec7f';
    const files = [`${stem}.w250.c400.f300-n2-8kn951e889.parquet`, `_raw/erc_transfers/${stem.slice(26)}.w120.c250.f120-n1-8kn951e889.ndjson.br`, `${stem}-n3-8kn951e889.parquet`];
    expect(firstWindow(files)).toBe(120);
    expect(firstWindow(files.slice(2))).toBeUndefined();
    expect(fetchedFrom(undefined, resumed, 300, files)).toBe(120);
    expect(startBelow(fetchedFrom(undefined, resumed, 100, files), resumed, 100)).toBe(true);
    expect(fetchedFrom(undefined, resumed, 300, files.slice(2))).toBe(300);
    expect(fetchedFrom(90, resumed, 300, files)).toBe(90);
  });

  it('a series: an earlier start is fetched from, the range begins at the earliest start, none configured changes nothing', () => {
    const newest: Cursor = { newest: 2_000 };
    expect(seriesStartBelow(1_000, newest, 999)).toBe(true);
    expect(seriesStartBelow(1_000, newest, 1_000)).toBe(false);
    expect(seriesStartBelow(1_000, {}, 0)).toBe(false);
    expect(seriesStartBelow(undefined, newest, 0)).toBe(false);
    expect(seriesStartBelow(1_000, newest, undefined)).toBe(false);
    expect(seriesFrom(undefined, {}, 1_000)).toBe(1_000);
    expect(seriesFrom(undefined, newest, 1_000)).toBe(1_000);
    expect(seriesFrom(1_000, newest, 1_500)).toBe(1_000);
    expect(seriesFrom(1_000, newest, 500)).toBe(500);
    expect(seriesFrom(1_000, newest, undefined)).toBe(1_000);
  });
});
