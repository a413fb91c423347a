// `rebuild` writes its batches with one DuckDB thread (the transform holds the other core), and
// gives the process's setting back; threads the user set win. The setting is that of the process's
// one DuckDB, which the writers a run opens at once share.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rebuildTable } from '../../src/pipeline/rebuild.js';
import { duck, ParquetWriter } from '../../src/load/parquet.js';
import { ENGINE_ENV } from '../../src/load/limits.js';
import { duckThreads, lakeContents, quiet } from '../helpers.js';
import { demoLake } from '../lake-fixture.js';

// The suite's own setting (test/tmpdir.setup.ts) is put back for the files that follow in this worker.
const suiteThreads = process.env[ENGINE_ENV.threads];
afterEach(() => {
  vi.restoreAllMocks();
  if (suiteThreads === undefined) delete process.env[ENGINE_ENV.threads];
  else process.env[ENGINE_ENV.threads] = suiteThreads;
});

describe('rebuild and DuckDB threads', () => {
  it('writes every batch with one thread and puts the setting back; threads the user set win', async () => {
    const { lake, report } = await demoLake(['erc_transfers'], { seed: 6, run: { flushRows: 200 } });
    expect(report.status).toBe('ok');
    // No threads set by the user, and the process's DuckDB on more than one (it may have been made
    // under the suite's setting by an earlier file of this worker).
    delete process.env[ENGINE_ENV.threads];
    const c = await (await duck()).connect();
    await c.run('SET threads = 2');
    c.closeSync();
    const landed = await lakeContents(lake);
    // The threads each batch of a rebuild is written with.
    let during: number[] = [];
    const write = ParquetWriter.prototype.write;
    vi.spyOn(ParquetWriter.prototype, 'write').mockImplementation(async function (this: ParquetWriter, ...args) {
      during.push(await duckThreads());
      return write.apply(this, args);
    });
    const before = await duckThreads();
    expect(before).toBeGreaterThan(1);
    await rebuildTable(lake, 'erc_transfers', { logger: quiet, flushRows: 200 });
    expect(during.length).toBeGreaterThan(1);
    expect(new Set(during)).toEqual(new Set([1]));
    expect(await duckThreads()).toBe(before);
    expect(await lakeContents(lake)).toEqual(landed);

    process.env[ENGINE_ENV.threads] = String(before);
    during = [];
    await rebuildTable(lake, 'erc_transfers', { logger: quiet, flushRows: 200 });
    expect(new Set(during)).toEqual(new Set([before]));
    expect(await lakeContents(lake)).toEqual(landed);
    if (suiteThreads !== undefined) {
      const back = await (await duck()).connect();
      await back.run(`SET threads = ${Number(suiteThreads)}`);
      back.closeSync();
    }
  }, 120_000);

  it('gives the writers that ask at once one DuckDB, so that a setting made through one is every writer\'s', async () => {
    // A module of its own: the DuckDB of this worker's earlier files is made already.
    vi.resetModules();
    const fresh = await import('../../src/load/parquet.js');
    const dbs = await Promise.all(Array.from({ length: 8 }, () => fresh.duck()));
    try {
      expect(new Set(dbs).size).toBe(1);
      expect(await fresh.duck()).toBe(dbs[0]);
    } finally {
      for (const db of new Set(dbs)) db.closeSync();
      // The files after this one in the worker import their own modules, not this closed DuckDB's.
      vi.resetModules();
    }
  });
});
