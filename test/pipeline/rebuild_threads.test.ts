// `rebuild` writes its batches with one DuckDB thread (the transform holds the other core), and
// gives the process's setting back; threads the user set win.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rebuildTable } from '../../src/pipeline/rebuild.js';
import { duck, ParquetWriter } from '../../src/load/parquet.js';
import { ENGINE_ENV } from '../../src/load/limits.js';
import { lakeContents, quiet } from '../helpers.js';
import { demoLake } from '../lake-fixture.js';

afterEach(() => {
  vi.restoreAllMocks();
  delete process.env[ENGINE_ENV.threads];
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
    const { lake, report } = await demoLake(['erc_transfers'], { seed: 6, run: { flushRows: 200 } });
    expect(report.status).toBe('ok');
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
