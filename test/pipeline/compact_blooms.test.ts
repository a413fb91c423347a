// `chainlake compact`, and a run's own merge at its end, write files whose row groups carry a
// Parquet bloom filter of each hash column, so that an equality on a hash skips the row groups that
// cannot hold it (in DuckDB and in any engine reading Parquet blooms); the rows stay the same.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactLake } from '../../src/pipeline/compact.js';
import { openLake } from '../../src/warehouse/lake.js';
import { sqlString } from '../../src/load/paths.js';
import { demoLake } from '../lake-fixture.js';
import { quiet } from '../helpers.js';

const TABLES = ['erc_transfers', 'internal_transactions'];

function parquetOf(lake: string, table: string): string[] {
  return readdirSync(join(lake, table), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.parquet'))
    .map((f) => join(lake, table, f));
}

/** Per hash column of `files`, how many of its column chunks (one a row group) have a bloom filter. */
async function blooms(conn: DuckDBConnection, files: string[]): Promise<Record<string, { chunks: number; blooms: number }>> {
  const r = await conn.runAndReadAll(`SELECT path_in_schema, count(*)::INTEGER, count(bloom_filter_offset)::INTEGER FROM parquet_metadata([${files.map(sqlString).join(', ')}]) WHERE path_in_schema IN ('tx_hash', 'block_hash') GROUP BY 1 ORDER BY 1`);
  return Object.fromEntries(r.getRows().map(([c, chunks, b]) => [String(c), { chunks: Number(chunks), blooms: Number(b) }]));
}

/** Every row of `table` through the library, as text lines in one order, and those of one hash. */
async function rowsOf(lake: string, table: string, hash: string): Promise<{ all: string[]; one: string[] }> {
  const l = await openLake(lake);
  try {
    const lines = async (sql: string) => (await l.query(sql)).toArray().map((r) => JSON.stringify(r.toJSON(), (_k, v) => (typeof v === 'bigint' ? String(v) : v)));
    return { all: await lines(`SELECT * FROM ${table} ORDER BY ALL`), one: await lines(`SELECT * FROM ${table} WHERE tx_hash = ${sqlString(hash)} ORDER BY ALL`) };
  } finally {
    l.close();
  }
}

describe('compact: row groups with hash blooms', () => {
  let lake: string;
  let conn: DuckDBConnection;
  beforeAll(async () => {
    // Batches of 50 rows, left as the run wrote them: many small files to merge.
    ({ lake } = await demoLake(TABLES, { run: { flushRows: 50, compactAfter: false } }));
    conn = await (await DuckDBInstance.create(':memory:')).connect();
  });
  afterAll(() => conn?.closeSync());

  it('gives each rewritten row group a bloom of tx_hash and block_hash, the rows unchanged', async () => {
    const before: Record<string, string[]> = {};
    const hashes: Record<string, string> = {};
    for (const table of TABLES) {
      const files = parquetOf(lake, table);
      // A run's batches: no bloom on a column of distinct hashes (DuckDB keeps it plain).
      const run = await blooms(conn, files);
      expect(run.tx_hash!.chunks).toBeGreaterThan(0);
      expect(run.tx_hash!.blooms).toBe(0);
      const r = await conn.runAndReadAll(`SELECT tx_hash FROM read_parquet([${files.map(sqlString).join(', ')}]) ORDER BY block_number DESC, tx_hash LIMIT 1`);
      hashes[table] = String(r.getRows()[0]![0]);
      before[table] = (await rowsOf(lake, table, hashes[table]!)).all;
    }

    const reports = await compactLake(lake, TABLES, { logger: quiet, targetRows: 1_000_000 });
    expect(reports.map((c) => c.rowsRewritten > 0)).toEqual(TABLES.map(() => true));

    for (const table of TABLES) {
      const files = parquetOf(lake, table);
      const compacted = files.filter((f) => relative(lake, f).includes('.compact-'));
      expect(compacted.length, table).toBeGreaterThan(0);
      const got = await blooms(conn, compacted);
      for (const column of Object.keys(got)) expect(got[column], `${table}.${column}`).toEqual({ chunks: got[column]!.chunks, blooms: got[column]!.chunks });
      expect(Object.keys(got)).toContain('tx_hash');
      const after = await rowsOf(lake, table, hashes[table]!);
      expect(after.all).toEqual(before[table]);
      // A lookup that the blooms let skip row groups still finds every row of its hash.
      expect(after.one.length).toBeGreaterThan(0);
      expect(after.one).toEqual(before[table]!.filter((line) => (JSON.parse(line) as { tx_hash: string }).tx_hash === hashes[table]));
    }
  });
});

describe("a run's own merge: row groups with hash blooms", () => {
  it('gives the files a run merges at its end a bloom of tx_hash and block_hash in every row group; its batches have none', async () => {
    // Batches of 50 rows, merged at the run's end wherever two or more would merge.
    const { lake, report } = await demoLake(TABLES, { run: { flushRows: 50, compactAfter: 2 } });
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      expect(report.compacted?.map((c) => c.table).sort()).toEqual([...TABLES].sort());
      for (const table of TABLES) {
        const files = parquetOf(lake, table);
        const merged = files.filter((f) => relative(lake, f).includes('.compact-'));
        expect(merged.length, table).toBeGreaterThan(0);
        const got = await blooms(conn, merged);
        expect(Object.keys(got)).toContain('tx_hash');
        for (const column of Object.keys(got)) expect(got[column], `${table}.${column}`).toEqual({ chunks: got[column]!.chunks, blooms: got[column]!.chunks });
        // A batch the merge left as it was (a partition of one file) keeps the writer's plain hashes.
        const batches = files.filter((f) => !merged.includes(f));
        if (batches.length) expect((await blooms(conn, batches)).tx_hash?.blooms ?? 0, table).toBe(0);
      }
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});
