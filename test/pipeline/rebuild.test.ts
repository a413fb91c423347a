// `rebuild` re-derives every table from the raw pages alone, equal to what the runs landed.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { rebuildTable } from '../../src/pipeline/rebuild.js';
import { startSimulator } from '../../src/simulator/server.js';
import { DEMO } from '../../src/simulator/world.js';
import { lakeContents, lakeRows, quiet } from '../helpers.js';
import { icebergOutOfStep } from '../iceberg-reader.js';
import { demoLake, lakeOf } from '../lake-fixture.js';
import { RunError } from '../../src/errors.js';
import { LakeLock } from '../../src/state/lock.js';
import { StateStore } from '../../src/state/store.js';

describe('rebuild from raw pages', () => {
  // Two runs a day apart on a moving world, made once for the file: the first test rebuilds it table
  // by table, the second stops a rebuild of its erc_transfers on a copy taken before the first
  // touched it.
  let world: Promise<{ p: Pipeline; lake: string; transfers: string; damaged: string; monday: number; weekly: string[] }> | undefined;
  const movingWorld = () => (world ??= (async () => {
    const clock = { t: DEMO.now + 3600 };
    const sim = await startSimulator({ port: 0, seed: 4, worldNow: () => clock.t });
    // The metrics service's world, 23 hours ahead of the data service's (the same seed): its second
    // run falls on Monday 00:00 UTC, where a weekly series' running point becomes final and the
    // new week's begins. The data service's day stays the short one: its every hour is more P-Chain
    // blocks and X-Chain transactions to fetch and replay, a metrics day a point a series.
    const AHEAD = 23 * 3600;
    const metrics = await startSimulator({ port: 0, seed: 4, worldNow: () => clock.t + AHEAD });
    try {
      const p = loadPipeline('pipelines/demo.yaml');
      for (const s of Object.values(p.sources)) s.url = sim.url;
      p.sources.metrics!.url = metrics.url;
      // internal_transactions as one listing a window, erc_transfers in chunks: both replay as the
      // runs fetched them.
      for (const s of p.streams) if (s.table === 'internal_transactions') s.chunks = 1;
      const lake = mkdtempSync(join(tmpdir(), 'cl-rebuild-'));
      // A day apart, a UTC midnight between them (a daily series closes a day): each day of the world
      // is more blocks and transactions to fetch and replay, and the claim needs no second one.
      const monday = DEMO.now + 2 * 86400;
      expect(new Date(monday * 1000).getUTCDay()).toBe(1);
      for (const t of [monday - 86400 - AHEAD, monday - AHEAD]) {
        clock.t = t;
        expect((await runPipeline(p, { lake, logger: quiet, flushRows: 300 })).status).toBe('ok');
      }
      const transfers = lakeOf(['erc_transfers'], lake, mkdtempSync(join(tmpdir(), 'cl-rebuild-stop-')));
      const damaged = lakeOf(['erc_transfers'], lake, mkdtempSync(join(tmpdir(), 'cl-rebuild-damaged-')));
      const weekly = [...metrics.world.metricPoints('43114', 'txCount', { timeInterval: 'week' })].sort((a, b) => a.timestamp - b.timestamp).map((x) => `${x.timestamp}|${x.value}`);
      return { p, lake, transfers, damaged, monday, weekly };
    } finally {
      await sim.close();
      await metrics.close();
    }
  })());

  it('gives back every table exactly, after incremental runs on a moving world', async () => {
    const { p, lake, monday, weekly } = await movingWorld();
    expect(readdirSync(join(lake, '_raw')).length).toBeGreaterThan(0);
    const landed = await lakeContents(lake);
    const tables = [...new Set(p.streams.map((s) => s.table))];
    const skipped: Record<string, number> = {};
    for (const table of tables) {
      const r = await rebuildTable(lake, table, { logger: quiet, flushRows: 500 });
      expect(r.rows, table).toBe(landed[table]!.length);
      expect(r.replayed).toBeGreaterThanOrEqual(r.rows);
      skipped[table] = r.skipped;
    }
    // The later runs refetched the newest block of each window: the replay skipped those rows as
    // the runs did (no merge by key behind it), one listing or chunks, and the tables still equal.
    expect(skipped.erc_transfers).toBeGreaterThan(0);
    expect(skipped.internal_transactions).toBeGreaterThan(0);
    expect(await lakeContents(lake)).toEqual(landed);
    // Each rebuild was one more snapshot of its table, naming its new files.
    expect(await icebergOutOfStep(lake)).toEqual([]);
    // The weekly series as the world has it at the second run: the week the first run saw under
    // way is final, and Monday's week is there.
    expect(weekly.at(-1)!.split('|')[0]).toBe(String(monday));
    const rows = await lakeRows(lake, `SELECT epoch(timestamp)::BIGINT AS ts, value FROM chain_metrics WHERE chain_id = '43114' AND metric = 'txCount' AND time_interval = 'week' ORDER BY timestamp`);
    expect(rows.map((r) => `${r.ts}|${r.value}`)).toEqual(weekly);
  }, 300_000);

  it('stops between raw files when told to: the table stays as it was and the lock goes', async () => {
    // The moving world's erc_transfers, in batches of 300 rows: raw files enough to stop at the fourth.
    const lake = (await movingWorld()).transfers;
    const landed = await lakeContents(lake);
    // Aborted from the fourth raw file on, with a batch of the third still being written.
    let reads = 0;
    const signal = {
      get aborted() {
        return ++reads > 3;
      },
      throwIfAborted() {
        throw new RunError('stopped by SIGTERM');
      },
    } as unknown as AbortSignal;
    await expect(rebuildTable(lake, 'erc_transfers', { logger: quiet, flushRows: 20, signal })).rejects.toThrow(/stopped by SIGTERM/);
    expect(await LakeLock.held(lake)).toBe(false);
    expect(await lakeContents(lake)).toEqual(landed);
    expect(await icebergOutOfStep(lake)).toEqual([]);
    await rebuildTable(lake, 'erc_transfers', { logger: quiet });
    expect(await lakeContents(lake)).toEqual(landed);
    expect(await icebergOutOfStep(lake)).toEqual([]);
  }, 300_000);

  it('fails on a damaged raw file of a later partition, naming it, with the table as it was and the lock gone', async () => {
    // The previous partitions' last batches are being written when it is met.
    const lake = (await movingWorld()).damaged;
    const landed = await lakeContents(lake);
    const states = new StateStore(lake).statesOf('erc_transfers');
    expect(states.length).toBeGreaterThan(1);
    const raw = states.at(-1)!.files.find((f) => f.startsWith('_raw/'))!;
    const kept = readFileSync(join(lake, raw));
    writeFileSync(join(lake, raw), Buffer.from('not brotli'));
    await expect(rebuildTable(lake, 'erc_transfers', { logger: quiet, flushRows: 20 })).rejects.toThrow(new RegExp(`raw file .*${raw.split('/').at(-1)!.replace(/[.]/g, '[.]')}: Decompression failed`));
    expect(await LakeLock.held(lake)).toBe(false);
    writeFileSync(join(lake, raw), kept);
    expect(await lakeContents(lake)).toEqual(landed);
    expect(await icebergOutOfStep(lake)).toEqual([]);
  }, 300_000);

  it('refuses a table without raw pages (--no-raw)', async () => {
    const { lake } = await demoLake(['avg_tps'], { run: { keepRaw: false } });
    expect(existsSync(join(lake, '_raw'))).toBe(false);
    await expect(rebuildTable(lake, 'avg_tps', { logger: quiet })).rejects.toThrow(/avg_tps has no raw pages/);
    await expect(rebuildTable(lake, 'nope', { logger: quiet })).rejects.toThrow(/"nope" is not a table/);
  });
});
