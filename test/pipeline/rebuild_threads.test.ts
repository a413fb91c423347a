// `rebuild` writes its batches with one DuckDB thread (the transform holds the other core), and
// gives the process's setting back; threads the user set win.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadPipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { rebuildTable } from '../../src/pipeline/rebuild.js';
import { startSimulator } from '../../src/simulator/server.js';
import { duck, ParquetWriter } from '../../src/load/parquet.js';
import { ENGINE_ENV } from '../../src/load/limits.js';
import { lakeContents, quiet } from '../helpers.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  delete process.env[ENGINE_ENV.threads];
  while (closers.length) await closers.pop()!();
});

async function threadsNow(): Promise<number> {
  const c = await (await duck()).connect();
  try {
    return Number((await c.runAndReadAll(`SELECT current_setting('threads')`)).getRows()[0]![0]);
  } finally {
    c.closeSync();
  }
}

describe('rebuild and DuckDB threads', () => {
  it('writes every batch with one thread and puts the setting back; threads the user set win', async () => {
    const sim = await startSimulator({ port: 0, seed: 6 });
    closers.push(() => sim.close());
    const p = loadPipeline('pipelines/demo.yaml');
    for (const s of Object.values(p.sources)) s.url = sim.url;
    p.streams = p.streams.filter((s) => s.table === 'erc_transfers');
    const lake = mkdtempSync(join(tmpdir(), 'cl-rebuild-threads-'));
    expect((await runPipeline(p, { lake, logger: quiet, flushRows: 200 })).status).toBe('ok');
    const landed = await lakeContents(lake);
    // The threads each batch of a rebuild is written with.
    let during: number[] = [];
    const write = ParquetWriter.prototype.write;
    vi.spyOn(ParquetWriter.prototype, 'write').mockImplementation(async function (this: ParquetWriter, ...args) {
      during.push(await threadsNow());
      return write.apply(this, args);
    });
    const before = await threadsNow();
    expect(before).toBeGreaterThan(1);
    await rebuildTable(lake, 'erc_transfers', { logger: quiet, flushRows: 200 });
    expect(during.length).toBeGreaterThan(1);
    expect(new Set(during)).toEqual(new Set([1]));
    expect(await threadsNow()).toBe(before);
    expect(await lakeContents(lake)).toEqual(landed);

    process.env[ENGINE_ENV.threads] = String(before);
    during = [];
    await rebuildTable(lake, 'erc_transfers', { logger: quiet, flushRows: 200 });
    expect(new Set(during)).toEqual(new Set([before]));
    expect(await lakeContents(lake)).toEqual(landed);
  }, 120_000);
});
