// The rewrite of a views-only warehouse file after the lake changed (warehouse/file.ts, update): it
// starts from a copy of the old file and makes again only the views whose files now read otherwise,
// and the file it gives is the one a whole write gives: the same views (their SQL, columns, types
// and comments), bundled query views, catalogue of bounds and blooms, and marker.
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeWarehouse } from '../../src/warehouse/file.js';
import { demoLake } from '../lake-fixture.js';

/**
 * A view's SQL as DuckDB gives it, with the items of its REPLACE list in order of name: DuckDB keeps
 * them in a hash map, which prints them in one order or another for the same view.
 */
const viewText = (sql: string): string => sql.replace(/REPLACE \(((?:CAST\([^()]*\) AS \w+(?:, )?)+)\)/g, (_, items: string) => `REPLACE (${items.split(', ').sort().join(', ')})`);

/** What a reader sees of a warehouse file: everything but the time it was written. */
async function contents(file: string): Promise<Record<string, unknown[]>> {
  const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  try {
    const conn = await db.connect();
    try {
      const rows = async (sql: string) => (await conn.runAndReadAll(sql)).getRows().map((r) => r.map(String));
      return {
        views: (await rows(`SELECT view_name, sql, comment FROM duckdb_views() WHERE NOT internal ORDER BY view_name`)).map(([v, sql, c]) => [v, viewText(sql!), c]),
        columns: await rows(`SELECT table_name, column_index, column_name, data_type, comment FROM duckdb_columns() WHERE NOT internal ORDER BY table_name, column_index`),
        tables: await rows(`SELECT table_name, comment FROM duckdb_tables() WHERE NOT internal ORDER BY table_name`),
        bounds: await rows(`SELECT * FROM _chainlake_bounds ORDER BY ALL`),
        blooms: await rows(`SELECT table_name, file, column_name, bits::VARCHAR FROM _chainlake_blooms ORDER BY ALL`),
        marker: await rows(`SELECT * EXCLUDE (written_at) FROM _chainlake`),
        files: (await rows(`SELECT count(*) FROM duckdb_tables() WHERE table_name = '_chainlake_files'`))[0]![0] === '1' ? await rows(`SELECT * FROM _chainlake_files ORDER BY ALL`) : [],
      };
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}

const count = async (file: string, view: string): Promise<number> => {
  const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  try {
    const conn = await db.connect();
    try {
      return Number((await conn.runAndReadAll(`SELECT count(*) FROM ${view}`)).getRows()[0]![0]);
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
};

describe('a rewrite of the warehouse file after the lake changed', () => {
  let dir: string;
  let lake: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cl-rewrite-'));
    lake = join(dir, 'lake');
    await demoLake(['avg_tps', 'erc_transfers'], { lake });
  }, 600_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('makes again only the views whose files read otherwise now, and gives the file a whole write gives', async () => {
    const first = await writeWarehouse(lake, { flag: '--out', rows: false });
    // No file to start from: written whole.
    expect(first.remade).toBeUndefined();
    expect(first.skipped).toEqual([]);
    // A second run: validators' first files (its view was empty), avg_tps's anew, erc_transfers as it was.
    await demoLake(['avg_tps', 'validators'], { lake, seed: 6 });
    const again = await writeWarehouse(lake, { flag: '--out', rows: false });
    expect(again.remade).toEqual(['validators']);
    expect(await count(again.file, 'validators')).toBeGreaterThan(0);
    const whole = await writeWarehouse(lake, { out: join(dir, 'whole.duckdb'), flag: '--out', rows: false });
    expect(whole.remade).toBeUndefined();
    expect(await contents(again.file)).toEqual(await contents(whole.file));
    expect({ queries: again.queries, skipped: again.skipped }).toEqual({ queries: whole.queries, skipped: whole.skipped });
  }, 600_000);

  it('a rewrite that fails midway leaves the old file as it was, and the next one starts from it', async () => {
    const file = `${lake}.warehouse.duckdb`;
    const before = readFileSync(file);
    // A new file of erc_transfers that is not Parquet: its table is looked at, and reading it fails.
    const table = join(lake, 'erc_transfers');
    const [one] = readdirSync(table, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.parquet'));
    const broken = join(table, one!.replace(/\.parquet$/, '-broken.parquet'));
    writeFileSync(broken, 'not parquet');
    await expect(writeWarehouse(lake, { flag: '--out', rows: false })).rejects.toThrow(`the warehouse file ${file}: not written`);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
    // A good file in its place: the rewrite starts from the old file, and gives what a whole write gives.
    copyFileSync(join(table, one!), broken);
    const again = await writeWarehouse(lake, { flag: '--out', rows: false });
    expect(again.remade).toEqual([]);
    const whole = await writeWarehouse(lake, { out: join(dir, 'whole-again.duckdb'), flag: '--out', rows: false });
    expect(await contents(again.file)).toEqual(await contents(whole.file));
  }, 600_000);

  it('with rows, in place: makes again only the views whose statement or columns changed, keeping the others and their comments', async () => {
    const file = join(dir, 'rows.duckdb');
    const first = await writeWarehouse(lake, { out: file, flag: '--out', rows: true });
    expect(first.rows).toMatchObject({ copied: first.rows!.tables });
    // A run: delegators' first files (its view was an empty one over no files), avg_tps's rows anew
    // (both copied whole: the view of avg_tps reads the new copy as it read the old).
    await demoLake(['avg_tps', 'delegators'], { lake, seed: 7 });
    const sql = async (text: string, mode = 'READ_WRITE') => {
      const db = await DuckDBInstance.create(file, { access_mode: mode });
      try {
        const conn = await db.connect();
        try {
          return (await conn.runAndReadAll(text)).getRows().map((r) => r.map(String));
        } finally {
          conn.closeSync();
        }
      } finally {
        db.closeSync();
      }
    };
    const viewComment = "SELECT view_name, comment FROM duckdb_views() WHERE view_name IN ('avg_tps', 'delegators', 'erc_transfers') ORDER BY 1";
    const docs = await sql(viewComment, 'READ_ONLY');
    // A comment put on by hand stays on a view that is kept, and goes with one made again.
    await sql("COMMENT ON VIEW avg_tps IS 'kept'; COMMENT ON VIEW delegators IS 'kept'; COMMENT ON VIEW erc_transfers IS 'kept'");
    const again = await writeWarehouse(lake, { out: file, flag: '--out' });
    expect(again).toMatchObject({ inPlace: true, remade: ['delegators'], rows: { added: 2, copied: 2 } });
    expect(await sql(viewComment, 'READ_ONLY')).toEqual([['avg_tps', 'kept'], docs[1], ['erc_transfers', 'kept']]);
    // The kept view of avg_tps reads its new rows.
    const whole = await writeWarehouse(lake, { out: join(dir, 'whole-rows.duckdb'), flag: '--out', rows: true });
    expect(await sql('SELECT count(*) FROM avg_tps EXCEPT ALL SELECT count(*) FROM _rows_avg_tps', 'READ_ONLY')).toEqual([]);
    expect(await count(file, 'avg_tps')).toBe(await count(whole.file, 'avg_tps'));
    await sql(docs.map(([v, c]) => `COMMENT ON VIEW ${v} IS '${c!.replace(/'/g, "''")}'`).join(';\n'));
    expect(await contents(file)).toEqual(await contents(whole.file));
  }, 600_000);
});
