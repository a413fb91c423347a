// The decisions of a merge partition's refresh (src/pipeline/series.ts), without I/O or a clock.
import { describe, expect, it } from 'vitest';
import { newestOf, partitionMerge, seriesQuery, SeriesListing, tableScopePartition, TimeGate, timeRanges } from '../../src/pipeline/series.js';
import { KEEP, OUTSIDE, UNASKED } from '../../src/transform/rows.js';
import { FUTURE_SECONDS } from '../../src/state/cursor.js';
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
    // Every hour from the start to now is in exactly one range's gate: [start, end), each range
    // ending where the next begins (a service reading the end as inclusive sends that point to
    // both; the lower range's gate leaves it to the upper).
    for (let t = 1_000 * HOUR; t <= now; t += HOUR) {
      const kept = ranges.filter((r) => TimeGate.of(chainMetrics, {}, q, r, now).verdict(t) === KEEP);
      expect(kept, String(t)).toHaveLength(1);
    }
    for (const [i, r] of ranges.slice(0, -1).entries()) expect(r.endTimestamp).toBe(ranges[i + 1]!.startTimestamp);
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
    for (const r of ranges.slice(0, -1)) expect(Number(r.endTimestamp) - Number(r.startTimestamp)).toBe(Math.ceil((now - start) / 8));
    // Every second from the start to now is kept by exactly one range, the ranges' ends included.
    const seconds = [...ranges.map((r) => Number(r.startTimestamp)), ...ranges.map((r) => Number(r.startTimestamp) - 1)].filter((t) => t >= start);
    for (let t = start; t <= now; t += 3 * HOUR + 1) seconds.push(t);
    const gates = ranges.map((r) => TimeGate.of(platformTransactions, {}, q, r, now));
    for (const t of seconds) expect(gates.filter((g) => g.verdict(t) === KEEP).length, String(t)).toBe(1);
    expect(ranges.at(-1)!.endTimestamp).toBeUndefined();
    expect(ranges.every((r) => r.addresses === 'P-avax1x' && r.pageSize === '100')).toBe(true);
    // A configured end is the last range's; ranges never shorter than the span: 3 weeks, 3 ranges.
    const three = timeRanges(platformTransactions, { ...q, endTimestamp: String(start + 3 * span) }, now, 8);
    expect(three.map((r) => [Number(r.startTimestamp) - start, Number(r.endTimestamp) - start])).toEqual([[0, span], [span, 2 * span], [2 * span, 3 * span]]);
    // An incremental run (less than a span since the newest committed point), one chunk, or no start: the query as is.
    expect(timeRanges(platformTransactions, { ...q, startTimestamp: String(now - DAY) }, now, 8)).toHaveLength(1);
    expect(timeRanges(platformTransactions, q, now, 1)).toEqual([q]);
    expect(timeRanges(platformTransactions, { addresses: 'P-avax1x' }, now, 8)).toHaveLength(1);
  });

  it("keeps a listing's points before the pipeline's end (exclusive) and not in the future; a point of another range is that range's", () => {
    const now = 1_761_955_200; // 2025-11-01
    const DAY = 24 * HOUR;
    const fetch = { startTimestamp: String(now - 30 * DAY), endTimestamp: String(now - DAY) };
    const whole = TimeGate.of(chainMetrics, { endTimestamp: now - DAY }, fetch, fetch, now);
    expect(whole.verdict(now - 30 * DAY)).toBe(KEEP);
    expect(whole.verdict(now - DAY - 1)).toBe(KEEP);
    // The end is exclusive, whether the service sends its point or not.
    expect(whole.verdict(now - DAY)).toBe(UNASKED);
    expect(whole.unasked).toBe('time 2025-10-31T00:00:00Z is at or after the end asked, 2025-10-31T00:00:00Z (exclusive)');
    expect(whole.verdict(NaN)).toBe(KEEP);
    // Without an end, the clock bounds it: a little ahead is a clock's difference, more is no point yet.
    const open = TimeGate.of(chainMetrics, {}, { startTimestamp: '0' }, { startTimestamp: '0' }, now);
    expect(open.verdict(now + FUTURE_SECONDS)).toBe(KEEP);
    expect(open.verdict(now + FUTURE_SECONDS + 1)).toBe(UNASKED);
    expect(open.unasked).toMatch(/^time 2025-11-01T00:15:01Z is in the future/);
    expect(open.verdict(4_102_444_800)).toBe(UNASKED);
    // A range fetched beside others: its end's point and points below its start (above the fetch's) are OUTSIDE.
    const range = { startTimestamp: String(now - 20 * DAY), endTimestamp: String(now - 10 * DAY) };
    const g = TimeGate.of(chainMetrics, {}, { startTimestamp: String(now - 30 * DAY) }, range, now);
    expect(g.verdict(now - 10 * DAY)).toBe(OUTSIDE);
    expect(g.verdict(now - 25 * DAY)).toBe(OUTSIDE);
    expect(g.verdict(now - 20 * DAY)).toBe(KEEP);
    // Below the fetch's start: the service's rounding (usage metrics round it down to the day), kept.
    expect(g.verdict(now - 31 * DAY)).toBe(KEEP);
  });

  it('a listing moves its newest point only with points its gate keeps', () => {
    const now = 1_761_955_200;
    const gate = TimeGate.of(chainMetrics, {}, { startTimestamp: '0' }, { startTimestamp: '0' }, now);
    const l = new SeriesListing(undefined, true, (i) => (i as { t: number }).t, undefined, gate);
    l.paged([{ t: now - 3600 }, { t: now + 365 * 24 * HOUR }], undefined, 2, 1000);
    expect(l.top).toBe(now - 3600);
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
