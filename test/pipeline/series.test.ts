// The decisions of a merge partition's refresh (src/pipeline/series.ts), without I/O or a clock.
import { describe, expect, it } from 'vitest';
import { newestOf, partitionMerge, seriesQuery, SeriesListing, tableScopePartition, timeRanges } from '../../src/pipeline/series.js';
import { chainMetrics } from '../../src/streams/chain_metrics.js';
import { STREAM_BY_TABLE } from '../../src/streams/index.js';

const platformTransactions = STREAM_BY_TABLE.get('platform_transactions')!;

const HOUR = 3600;

describe('a series refresh', () => {
  it('cuts a series into ranges of a page each that cover it once, whatever the service reads as an end', () => {
    const q = { metric: 'txCount', timeInterval: 'hour', pageSize: '10', startTimestamp: String(1_000 * HOUR) };
    const now = 1_000 * HOUR + 35 * HOUR + 17;
    const ranges = timeRanges(chainMetrics, q, now);
    expect(ranges).toHaveLength(4);
    // Every hour from the start to now falls in exactly one range, inclusive or exclusive ends alike.
    for (let t = 1_000 * HOUR; t <= now; t += HOUR) {
      const inside = ranges.filter((r) => Number(r.startTimestamp) <= t && (r.endTimestamp === undefined || t <= Number(r.endTimestamp)));
      expect(inside, String(t)).toHaveLength(1);
      expect(ranges.filter((r) => Number(r.startTimestamp) <= t && (r.endTimestamp === undefined || t < Number(r.endTimestamp)))).toHaveLength(1);
    }
    expect(ranges.at(-1)!.endTimestamp).toBeUndefined();
    expect(timeRanges(chainMetrics, { ...q, startTimestamp: String(now - HOUR) }, now)).toEqual([{ ...q, startTimestamp: String(now - HOUR) }]);
    expect(timeRanges(chainMetrics, { metric: 'txCount', timeInterval: 'hour', pageSize: '10' }, now)).toHaveLength(1);
  });

  it('cuts a listing at no regular interval (transactions) into `chunks` ranges of equal length, none shorter than its span', () => {
    const DAY = 24 * HOUR;
    const span = platformTransactions.timeCursor!.span!;
    const start = 1_600_000_000;
    const q = { addresses: 'P-avax1x', pageSize: '100', startTimestamp: String(start) };
    const now = start + 400 * DAY + 5;
    const ranges = timeRanges(platformTransactions, q, now, 8);
    expect(ranges).toHaveLength(8);
    for (const r of ranges.slice(0, -1)) expect(Number(r.endTimestamp) - Number(r.startTimestamp) + 1).toBe(Math.ceil((now - start) / 8));
    // Every second from the start to now falls in exactly one range.
    for (let t = start; t <= now; t += 3 * HOUR + 1) expect(ranges.filter((r) => Number(r.startTimestamp) <= t && (r.endTimestamp === undefined || t <= Number(r.endTimestamp))), String(t)).toHaveLength(1);
    expect(ranges.at(-1)!.endTimestamp).toBeUndefined();
    expect(ranges.every((r) => r.addresses === 'P-avax1x' && r.pageSize === '100')).toBe(true);
    // A configured end is the last range's; ranges never shorter than the span: 3 weeks, 3 ranges.
    const three = timeRanges(platformTransactions, { ...q, endTimestamp: String(start + 3 * span) }, now, 8);
    expect(three.map((r) => [Number(r.startTimestamp) - start, Number(r.endTimestamp) - start])).toEqual([[0, span - 1], [span, 2 * span - 1], [2 * span, 3 * span]]);
    // An incremental run (less than a span since the newest committed point), one chunk, or no start: the query as is.
    expect(timeRanges(platformTransactions, { ...q, startTimestamp: String(now - DAY) }, now, 8)).toHaveLength(1);
    expect(timeRanges(platformTransactions, q, now, 1)).toEqual([q]);
    expect(timeRanges(platformTransactions, { addresses: 'P-avax1x' }, now, 8)).toHaveLength(1);
  });

  it('resumes at the newest committed point, never before the configured start', () => {
    expect(seriesQuery(chainMetrics, { startTimestamp: '100' }, 500)).toEqual({ startTimestamp: '500' });
    expect(seriesQuery(chainMetrics, { startTimestamp: '900' }, 500)).toEqual({ startTimestamp: '900' });
    expect(seriesQuery(chainMetrics, {}, undefined)).toEqual({});
    expect(newestOf([undefined, 7, 3], 5)).toBe(7);
    expect(newestOf([undefined], 5)).toBe(5);
  });

  it('a listing newest first without a start stops at the first page reaching below the newest committed point', () => {
    const l = new SeriesListing(100, false, (i) => (i as { t: number }).t);
    expect(l.paged([{ t: 130 }, { t: 120 }], 'n', 2, 1000)).toEqual({ commit: false, stop: false });
    expect(l.paged([{ t: 110 }, { t: 90 }], 'n', 4, 1000)).toEqual({ commit: true, stop: true });
    expect(l.top).toBe(130);
    l.restart();
    expect(l.top).toBeUndefined();
    // With a start parameter the service bounds it: every page is followed.
    const bounded = new SeriesListing(100, true, (i) => (i as { t: number }).t);
    expect(bounded.paged([{ t: 90 }], 'n', 1, 1000)).toEqual({ commit: false, stop: false });
    expect(bounded.paged([{ t: 80 }], undefined, 2, 1000)).toEqual({ commit: true, stop: false });
    expect(bounded.paged([{ t: 70 }], 'n', 3, 3)).toEqual({ commit: true, stop: false });
  });

  it('a merge replaces the data files, keeps the raw pages of earlier fetches, and keeps only the latest rejects', () => {
    const files = ['t/a.parquet', '_raw/t/r1.ndjson.br', '_rejects/t/x.parquet'];
    expect(partitionMerge(files, ['t/m.parquet', '_raw/t/r2.ndjson.br'], true, false)).toEqual({
      files: ['_raw/t/r1.ndjson.br', 't/m.parquet', '_raw/t/r2.ndjson.br'],
      deletes: ['t/a.parquet', '_rejects/t/x.parquet'],
      replaced: true,
    });
    // Nothing fetched: the data stays.
    expect(partitionMerge(files, [], false, false)).toEqual({ files: ['t/a.parquet', '_raw/t/r1.ndjson.br'], deletes: ['_rejects/t/x.parquet'], replaced: false });
    // A whole fetch (replace table, full refresh) is the partition's whole truth: its old raw pages go too.
    expect(partitionMerge(files, ['_raw/t/r2.ndjson.br'], false, true)).toEqual({ files: ['_raw/t/r2.ndjson.br'], deletes: ['t/a.parquet', '_rejects/t/x.parquet', '_raw/t/r1.ndjson.br'], replaced: true });
    expect(tableScopePartition(['_raw/t/r1.ndjson.br', '_rejects/t/x.parquet'], ['_raw/t/r2.ndjson.br'], false)).toEqual({ files: ['_raw/t/r1.ndjson.br', '_raw/t/r2.ndjson.br'], deletes: ['_rejects/t/x.parquet'] });
  });
});
