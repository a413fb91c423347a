// The suite runs DuckDB on one thread (test/tmpdir.setup.ts); users run it on one a core. The writes
// whose row order could change when DuckDB splits the work run here on four threads, over inputs of
// many small row groups (DuckDB hands a thread a row group at a time): compaction keeps the files'
// order and each file's rows as they are, and a merge by key keeps the newest row of each key, in
// key order.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duck, ParquetWriter } from '../../src/load/parquet.js';
import { ENGINE_ENV } from '../../src/load/limits.js';
import { STREAMS } from '../../src/streams/index.js';
import { duckThreads } from '../helpers.js';

const suiteThreads = process.env[ENGINE_ENV.threads];
const dir = mkdtempSync(join(tmpdir(), 'cl-threads-'));
let w: ParquetWriter;

/** A Parquet file of `rows` rows from block `from` on, three logs a block, in row groups of 250 rows. */
async function blocks(name: string, from: number, rows: number, v: string): Promise<string> {
  const file = join(dir, `${name}.parquet`);
  const c = await (await duck()).connect();
  try {
    await c.run(`COPY (SELECT (${from} + i // 3)::BIGINT AS block_number, (i % 3)::INTEGER AS log_index, '${v}' AS v, md5(i::VARCHAR) AS tx_hash
      FROM range(${rows}) t(i) ORDER BY i) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 250)`);
  } finally {
    c.closeSync();
  }
  return file;
}

async function rowsOf(file: string): Promise<Array<[number, number, string]>> {
  const c = await (await duck()).connect();
  try {
    const r = await c.runAndReadAll(`SELECT block_number, log_index, v FROM read_parquet('${file}', file_row_number = true) ORDER BY file_row_number`);
    return r.getRows().map(([b, l, v]) => [Number(b), Number(l), String(v)]);
  } finally {
    c.closeSync();
  }
}

/** The first row out of place, not a diff of thousands. */
function sameRows(got: Array<[number, number, string]>, expected: Array<[number, number, string]>): void {
  const at = got.findIndex((r, i) => r.join() !== expected[i]?.join());
  expect(at === -1 ? 'in order' : `row ${at}: ${got[at]} where ${expected[at]} belongs`).toBe('in order');
  expect(got.length).toBe(expected.length);
}

beforeAll(async () => {
  delete process.env[ENGINE_ENV.threads];
  w = await ParquetWriter.open();
});

afterAll(() => {
  w.close();
  if (suiteThreads !== undefined) process.env[ENGINE_ENV.threads] = suiteThreads;
});

describe('DuckDB on four threads', () => {
  it('compaction keeps the order of the files and of each file\'s rows', async () => {
    const files = [await blocks('a', 0, 12_000, 'a'), await blocks('b', 4_000, 12_000, 'b'), await blocks('c', 8_000, 12_000, 'c')];
    const expected = [...(await rowsOf(files[0]!)), ...(await rowsOf(files[1]!)), ...(await rowsOf(files[2]!))];
    const [out] = await w.withThreads(4, async () => {
      expect(await duckThreads()).toBe(4);
      return w.rewrite(files, dir, 'compacted');
    });
    sameRows(await rowsOf(out!.staged), expected);
  }, 120_000);

  it('a merge by key keeps the newest row of each key, in key order', async () => {
    const decl = { ...STREAMS.find((d) => d.table === 'erc_transfers')!, key: ['block_number', 'log_index'] };
    const old = [await blocks('old', 0, 12_000, 'old')];
    // Two fresh files in fetch order over parts of the old rows, the second over part of the first.
    const fresh = [await blocks('f1', 1_000, 6_000, 'f1'), await blocks('f2', 2_000, 3_000, 'f2')];
    const [out] = await w.withThreads(4, () => w.merge(decl, fresh, old, dir, 'merged'));
    const got = await rowsOf(out!.staged);
    const expected: Array<[number, number, string]> = [];
    for (let i = 0; i < 12_000; i++) {
      const [b, l] = [Math.floor(i / 3), i % 3];
      expected.push([b, l, b >= 2_000 && b < 3_000 ? 'f2' : b >= 1_000 && b < 3_000 ? 'f1' : 'old']);
    }
    sameRows(got, expected);
  }, 120_000);
});
