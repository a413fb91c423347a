// The warehouse file with rows (`chainlake warehouse --rows`, warehouse/rows.ts): every table's
// committed rows copied into DuckDB's own storage, equal to what its Parquet files hold after each
// change of the lake (files added, files gone, a column added, a column's type changed, most rows
// replaced), and read by `chainlake query` and the library only while they hold exactly the files
// the lake commits: a stale copy is never read.
import { cpSync, mkdtempSync, renameSync, statSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeWarehouse } from '../../src/warehouse/file.js';
import { FILES } from '../../src/warehouse/rows.js';
import { amountsOf } from '../../src/warehouse/amounts.js';
import { bundledQueries, LAKE_TABLES, openWarehouse } from '../../src/warehouse/views.js';
import { openLake } from '../../src/index.js';
import { cliHere, lakeOf, sharedDemoLake, sharedWholeLake } from '../lake-fixture.js';
import { openReader, read, rowsOf } from './reader.js';
import { DIGITS, exactSums, SUM_PER_TOKEN, TOP_RECEIVERS } from './sums.js';

let dir: string;
let lake: string;
let file: string;

beforeAll(async () => {
  // Not ASCII, and a character outside the BMP: the copy's file names are cut from DuckDB's paths.
  dir = mkdtempSync(join(tmpdir(), 'cl-rows-é😀-'));
  lake = join(dir, 'lake');
  file = join(dir, 'lake.warehouse.duckdb');
  cpSync(await sharedDemoLake(), lake, { recursive: true });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const one = async (conn: DuckDBConnection, sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson()[0]!;

/** Each table's rows in warehouse file `wh` against its Parquet files in `at`: names, types and rows (as multisets) equal. */
async function expectSameRows(tables = LAKE_TABLES.map((d) => d.table), at = lake, wh = file): Promise<void> {
  // The views of these tables only: binding the others reads footers for nothing.
  const conn = await openWarehouse(at, {}, new Set(tables));
  try {
    await conn.run(`ATTACH '${wh}' AS w (READ_ONLY)`);
    for (const t of tables) {
      const cols = async (from: string) => (await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${from}`)).getRows().map(([n, ty]) => `${String(n)} ${String(ty)}`);
      expect(await cols(`w.main."${t}"`), t).toEqual(await cols(`"${t}"`));
      const r = await one(conn, `SELECT (SELECT count(*) FROM "${t}") AS n, (SELECT count(*) FROM w.main."${t}") AS m,
        (SELECT count(*) FROM (SELECT * FROM "${t}" EXCEPT ALL SELECT * FROM w.main."${t}")) AS missing,
        (SELECT count(*) FROM (SELECT * FROM w.main."${t}" EXCEPT ALL SELECT * FROM "${t}")) AS extra`);
      expect(r, t).toEqual({ n: r.n, m: r.n, missing: '0', extra: '0' });
    }
  } finally {
    conn.closeSync();
  }
}

/** The ledger of the warehouse file: table -> files. */
async function ledger(): Promise<Record<string, string[]>> {
  const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  try {
    const conn = await db.connect();
    const rows = (await conn.runAndReadAll(`SELECT table_name, list(file ORDER BY file) AS files FROM ${FILES} GROUP BY 1 ORDER BY 1`)).getRowObjectsJson();
    conn.closeSync();
    return Object.fromEntries(rows.map((r) => [String(r.table_name), r.files as string[]]));
  } finally {
    db.closeSync();
  }
}

// erc_transfers' partition states, changed by hand as a commit changes them (its file list).
const stateDir = () => join(lake, '_state', 'erc_transfers');
const states = () => readdirSync(stateDir()).sort();
const readState = (f: string) => JSON.parse(readFileSync(join(stateDir(), f), 'utf8')) as { files: string[] };
const writeState = (f: string, s: unknown) => writeFileSync(join(stateDir(), f), JSON.stringify(s));
const parquetOf = (s: { files: string[] }) => s.files.filter((f) => f.endsWith('.parquet'));

/** Writes the rows of `select` (over the lake's views) as a new committed file of erc_transfers' first partition. */
async function commitFile(name: string, select: string): Promise<string> {
  const rel = `erc_transfers/chain=43114/${name}.parquet`;
  const conn = await openWarehouse(lake, {}, new Set(['erc_transfers']));
  try {
    await conn.run(`COPY (${select}) TO '${join(lake, rel)}' (FORMAT parquet)`);
  } finally {
    conn.closeSync();
  }
  const first = states()[0]!;
  const s = readState(first);
  writeState(first, { ...s, files: [...s.files, rel] });
  return rel;
}

/** Runs one statement on a DuckDB file of its own, and gives its rows. */
async function onFile(path: string, sql: string, mode: 'READ_ONLY' | 'READ_WRITE' = 'READ_WRITE'): Promise<unknown[][]> {
  const db = await DuckDBInstance.create(path, { access_mode: mode });
  try {
    const conn = await db.connect();
    try {
      return (await conn.runAndReadAll(sql)).getRows();
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}

const VIEW_SQL = "SELECT sql FROM duckdb_views() WHERE view_name = 'erc_transfers' AND database_name = current_database()";

/**
 * erc_transfers' view as `chainlake query`, with `args`, shows it: the CLI's main in this process,
 * which lets go of the file when it ends (the test of a process that lives on, below).
 */
async function viewOf(args: string[] = []): Promise<string> {
  const q = await cliHere(['query', '--lake', lake, '--format', 'json', ...args, VIEW_SQL]);
  expect(q).toMatchObject({ code: 0, stderr: '' });
  return String((JSON.parse(q.stdout) as Array<{ sql: string }>)[0]!.sql);
}

/** A program holding a DuckDB file open for writing (its lock) until its stdin ends. */
describe('the warehouse file with rows', () => {
  it("holds every table's committed rows, exactly (amounts, types, columns), and their files in its ledger", async () => {
    // A new file holds the rows without being asked to.
    const r = await writeWarehouse(lake, { flag: '--out' });
    expect(r.file).toBe(file);
    expect(r.rows).toMatchObject({ removed: 0 });
    expect(r.rows!.tables).toBe(r.rows!.copied);
    expect(r.rows!.tables).toBeGreaterThan(10);
    const held = await ledger();
    expect(Object.keys(held).length).toBe(r.rows!.tables);
    for (const t of Object.keys(held)) expect(readdirSync(lake)).toContain(t);
    expect(held.erc_transfers).toEqual(states().flatMap((f) => parquetOf(readState(f))).sort());
    await expectSameRows();
    // Its amounts are exact as over the files: the sums an analyst writes first.
    const [digits, perToken, top] = read(file, [DIGITS, SUM_PER_TOKEN, TOP_RECEIVERS]).map(rowsOf);
    const want = exactSums(digits!);
    expect(perToken).toEqual(want.perToken);
    expect(top).toEqual(want.top);
    // The copy holds each amount as its BIGNUM, cast once as the rows came in: the views cast none.
    const columns = await onFile(file, 'SELECT table_name, column_name, data_type FROM duckdb_columns()', 'READ_ONLY');
    const typeOf = new Map(columns.map(([t, c, type]) => [`${String(t)}.${String(c)}`, String(type)]));
    const amounts = LAKE_TABLES.flatMap((d) => amountsOf(d).map((a) => `_rows_${d.table}.${a}`)).filter((c) => typeOf.has(c));
    expect(amounts.length).toBeGreaterThan(2);
    for (const c of amounts) expect(typeOf.get(c), c).toBe('BIGNUM');
    const casts = await onFile(file, "SELECT view_name FROM duckdb_views() WHERE sql LIKE '%\\_raw AS BIGNUM)%' ESCAPE '\\' AND NOT internal", 'READ_ONLY');
    expect(casts.map(([v]) => String(v)).filter((v) => v in held)).toEqual([]);
  });

  it('a copy of the rows written before amounts were held as BIGNUM (DECIMAL) is still read exactly: its view casts', async () => {
    const old = join(dir, 'decimal-rows.duckdb');
    cpSync(file, old);
    // As the build before wrote erc_transfers' copy: the amount as the files hold it.
    await onFile(old, `CREATE OR REPLACE TABLE _rows_erc_transfers AS SELECT * REPLACE (CASE WHEN length(value_raw) <= 38 THEN CAST(value_raw AS DECIMAL(38,0)) END AS value) FROM _rows_erc_transfers`);
    expect(await onFile(old, "SELECT data_type FROM duckdb_columns() WHERE table_name = '_rows_erc_transfers' AND column_name = 'value'", 'READ_ONLY')).toEqual([['DECIMAL(38,0)']]);
    const lib = await openLake(lake, { warehouse: old });
    try {
      expect(String((await lib.query(VIEW_SQL)).get(0)!.sql)).toContain('chainlake_rows');
      const rows = async (sql: string) => (await lib.query(sql)).toArray().map((r) => r.toJSON() as Record<string, unknown>);
      expect(await rows(SUM_PER_TOKEN)).toEqual(exactSums(await rows(DIGITS)).perToken);
    } finally {
      lib.close();
    }
  });

  it("gives every bundled query's rows as the Parquet files do", async () => {
    const conn = await openWarehouse(lake);
    try {
      await conn.run(`ATTACH '${file}' AS w (READ_ONLY)`);
      const views = new Set((await conn.runAndReadAll("SELECT view_name FROM duckdb_views() WHERE database_name = 'w'")).getRows().map(([v]) => String(v)));
      let compared = 0;
      for (const q of bundledQueries()) {
        if (!views.has(q.name)) continue;
        const r = await one(conn, `WITH p AS (${q.sql}) SELECT (SELECT count(*) FROM p) AS n, (SELECT count(*) FROM w.main."${q.name}") AS m,
          (SELECT count(*) FROM (SELECT * FROM p EXCEPT ALL SELECT * FROM w.main."${q.name}")) AS missing,
          (SELECT count(*) FROM (SELECT * FROM w.main."${q.name}" EXCEPT ALL SELECT * FROM p)) AS extra`);
        expect(r, q.name).toEqual({ n: r.n, m: r.n, missing: '0', extra: '0' });
        compared++;
      }
      expect(compared).toBeGreaterThan(10);
    } finally {
      conn.closeSync();
    }
  });

  it('a rewrite that would change nothing leaves the file as it is; a first run report or another build does not', async () => {
    const stat = () => {
      const st = statSync(file);
      return `${st.ino}/${st.mtimeMs}`;
    };
    const before = stat();
    const same = await cliHere(['warehouse', '--lake', lake]);
    expect(same).toMatchObject({ code: 0, stderr: '' });
    expect(same.stdout).toContain(`the warehouse file ${file} is up to date`);
    expect(stat()).toBe(before);
    // A run's report (the _runs view is a placeholder while the lake has none).
    const runs = join(lake, '_runs');
    const reports = readdirSync(runs).filter((f) => f.endsWith('.json'));
    for (const f of reports) renameSync(join(runs, f), join(runs, `${f}.away`));
    try {
      expect((await writeWarehouse(lake, { flag: '--out' })).unchanged).toBeUndefined();
    } finally {
      for (const f of reports) renameSync(join(runs, `${f}.away`), join(runs, f));
    }
    expect((await writeWarehouse(lake, { flag: '--out' })).unchanged).toBeUndefined();
    expect((await writeWarehouse(lake, { flag: '--out' })).unchanged).toBe(true);
    // Another build (its bundled queries or declarations differ): rewritten.
    await onFile(file, "UPDATE _chainlake SET build = 'another'");
    expect((await writeWarehouse(lake, { flag: '--out' })).unchanged).toBeUndefined();
    // Once written by this build, it is up to date again (new commits: the tests below).
    const at = stat();
    expect((await writeWarehouse(lake, { flag: '--out' })).unchanged).toBe(true);
    expect(stat()).toBe(at);
  });

  it('is read by `chainlake query` and the library while current, and never once the lake has moved on', async () => {
    const count = async (args: string[] = []) => Number((JSON.parse((await cliHere(['query', '--lake', lake, '--format', 'json', ...args, 'SELECT count(*) AS n FROM erc_transfers'])).stdout) as Array<{ n: string }>)[0]!.n);
    expect(await viewOf()).toContain('chainlake_rows.main._rows_erc_transfers');
    expect(await viewOf(['--no-warehouse'])).toContain('read_parquet');
    const n = await count();
    expect(await count(['--no-warehouse'])).toBe(n);
    const lib = await openLake(lake);
    try {
      expect(String((await lib.query(VIEW_SQL)).get(0)!.sql)).toContain('chainlake_rows');
      // Read from the file's rows, the amounts sum exactly, as over the files.
      const libRows = async (sql: string) => (await lib.query(sql)).toArray().map((r) => r.toJSON() as Record<string, unknown>);
      const want = exactSums(await libRows(DIGITS));
      expect(await libRows(SUM_PER_TOKEN)).toEqual(want.perToken);
      expect(JSON.parse((await cliHere(['query', '--lake', lake, '--format', 'json', TOP_RECEIVERS])).stdout)).toEqual(want.top);
    } finally {
      lib.close();
    }

    // A commit the file does not hold yet: the table is read from its files, with the new rows.
    await commitFile('after', 'SELECT * FROM erc_transfers LIMIT 4');
    expect(await viewOf()).toContain('read_parquet');
    expect(await count()).toBe(n + 4);
    const stale = await openLake(lake);
    try {
      expect(Number((await stale.query('SELECT count(*) AS n FROM erc_transfers')).get(0)!.n)).toBe(n + 4);
      // Tables the commit did not touch are still read from the file.
      expect(String((await stale.query(VIEW_SQL.replace('erc_transfers', 'delegators'))).get(0)!.sql)).toContain('chainlake_rows');
    } finally {
      stale.close();
    }
    // A file elsewhere, named with --warehouse (the library's `warehouse`), is read the same way.
    const elsewhere = join(dir, 'elsewhere.duckdb');
    // A copy of the default file, brought up to date there: the rewrite adds the new file's rows
    // to erc_transfers' copy (its amounts cast to BIGNUM, as the copy holds them) and keeps the
    // other tables' rows, instead of copying any table whole (the whole copy is the first test's).
    cpSync(file, elsewhere);
    expect(await cliHere(['warehouse', '--lake', lake, '--out', elsewhere, '--rows'])).toMatchObject({ code: 0, stdout: expect.stringContaining('the rows of 1 files added, of 0 removed (0 tables copied whole)') });
    expect(await viewOf()).toContain('read_parquet');
    expect(await viewOf(['--warehouse', elsewhere])).toContain('chainlake_rows');
    expect(await count(['--warehouse', elsewhere])).toBe(n + 4);
    const named = await openLake(lake, { warehouse: elsewhere });
    try {
      expect(String((await named.query(VIEW_SQL)).get(0)!.sql)).toContain('chainlake_rows');
    } finally {
      named.close();
    }
    await writeWarehouse(lake, { flag: '--out' });
    expect(await viewOf()).toContain('chainlake_rows');
  });

  it('named by --warehouse or openLake, a file that is missing, is not DuckDB\'s or is not a warehouse is an error naming it (exit 2); not named, the default may be any of these', async () => {
    const place = mkdtempSync(join(tmpdir(), 'cl-rows-named-'));
    const missing = join(place, 'missing.duckdb');
    const text = join(place, 'notes.duckdb');
    writeFileSync(text, 'not a database');
    const foreign = join(place, 'mine.duckdb');
    await onFile(foreign, 'CREATE TABLE mine AS SELECT 42 AS answer');
    const cases: Array<[string, string]> = [
      [missing, 'no such file'],
      [text, 'cannot be read as a DuckDB database'],
      [foreign, "is a DuckDB database without chainlake's _chainlake table"],
    ];
    for (const [f, why] of cases) {
      const r = await cliHere(['query', '--lake', lake, '--warehouse', f, 'SELECT 1']);
      expect(r.code, f).toBe(2);
      expect(r.stderr).toContain(`--warehouse ${f}: ${why}`);
      expect(r.stdout).toBe('');
      await expect(openLake(lake, { warehouse: f })).rejects.toThrow(`openLake: warehouse ${f}: ${why}`);
    }
    // The foreign file is as it was.
    expect(await onFile(foreign, 'SELECT answer FROM mine', 'READ_ONLY')).toEqual([[42]]);
    // A lake whose default file is none of chainlake's: read from its Parquet files, as before.
    const other = mkdtempSync(join(tmpdir(), 'cl-rows-default-'));
    cpSync(lake, join(other, 'lake'), { recursive: true });
    writeFileSync(join(other, 'lake.warehouse.duckdb'), 'not a database');
    const plain = await cliHere(['query', '--lake', join(other, 'lake'), '--format', 'json', 'SELECT count(*) AS n FROM erc_transfers']);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
  });

  it('held open for writing by another program (DBeaver\'s default), it is not read: the Parquet files are, and the query succeeds', async () => {
    const holder = await openReader(file, 'READ_WRITE');
    try {
      const q = await cliHere(['query', '--lake', lake, '--format', 'json', `${VIEW_SQL}; SELECT count(*) AS n FROM erc_transfers`]);
      expect(q).toMatchObject({ code: 0, stderr: '' });
      const viewed = await cliHere(['query', '--lake', lake, '--format', 'json', VIEW_SQL]);
      expect(viewed.stdout).toContain('read_parquet');
      // Named, it is not read either: held, not wrong.
      expect((await cliHere(['query', '--lake', lake, '--warehouse', file, '--format', 'json', VIEW_SQL])).stdout).toContain('read_parquet');
      const plain = await cliHere(['query', '--lake', lake, '--no-warehouse', '--format', 'json', 'SELECT count(*) AS n FROM erc_transfers']);
      expect(JSON.parse(q.stdout)).toEqual(JSON.parse(plain.stdout));
    } finally {
      await holder.close();
    }
    expect(await viewOf()).toContain('chainlake_rows');
  });

  it("a query in a process that lives on (the CLI's main called in it) lets go of the file: another program then opens it for writing", async () => {
    expect(await cliHere(['warehouse', '--lake', lake, '--rows'])).toMatchObject({ code: 0 });
    const q = await cliHere(['query', '--lake', lake, '--format', 'json', `${VIEW_SQL}; SELECT count(*) AS n FROM erc_transfers`]);
    expect(q).toMatchObject({ code: 0, stderr: '' });
    expect(await cliHere(['query', '--lake', lake, '--format', 'json', 'SELECT 1 AS one'])).toMatchObject({ code: 0, stderr: '' });
    // Opening it for writing needs every other process to have closed it, this one included.
    const writer = await openReader(file, 'READ_WRITE');
    await writer.close();
  });

  it('a rewrite inserts the rows of new files only, deletes those of files gone, and adds a column a new file has, in the file itself when no program has it open', async () => {
    const ino = statSync(file).ino;
    const extra = await commitFile('extra-a', 'SELECT *, 42::INTEGER AS added_later FROM erc_transfers ORDER BY block_number LIMIT 7');
    // A partition's file no longer committed (and gone from the folder): its rows go, the others stay.
    const last = states().at(-1)!;
    const s = readState(last);
    const gone = parquetOf(s)[0]!;
    writeState(last, { ...s, files: s.files.filter((f) => f !== gone) });
    rmSync(join(lake, gone));
    // One rewrite for both: the counts say which file's rows went in and which came out.
    const r = await writeWarehouse(lake, { flag: '--out' });
    // Still a file with rows (not asked again); nothing else changed, so one file's rows were inserted and one's deleted.
    expect(r.rows).toEqual({ tables: expect.any(Number), kept: 0, added: 1, removed: 1, copied: 0 });
    expect(r.inPlace).toBe(true);
    expect(statSync(file).ino).toBe(ino);
    const held = (await ledger()).erc_transfers;
    expect(held).toContain(extra);
    expect(held).not.toContain(gone);
    await expectSameRows(['erc_transfers']);
  });

  it('a rewrite makes a copy when a program has the file open; a failure midway leaves the file answering its old state', async () => {
    const ino = statSync(file).ino;
    let r: Awaited<ReturnType<typeof writeWarehouse>>;
    // A reader has it open: a copy is renamed over it, and the reader keeps what it opened.
    const reader = await openReader(file, 'READ_ONLY');
    const count = 'SELECT count(*) AS n FROM _rows_erc_transfers';
    try {
      const before = rowsOf(await reader.ask(count));
      await commitFile('held', 'SELECT * FROM erc_transfers ORDER BY block_number LIMIT 3');
      r = await writeWarehouse(lake, { flag: '--out' });
      expect(r.rows).toMatchObject({ added: 1, removed: 0, copied: 0 });
      expect(r.inPlace).toBeUndefined();
      expect(statSync(file).ino).not.toBe(ino);
      expect(rowsOf(await reader.ask(count))).toEqual(before);
    } finally {
      await reader.close();
    }
    await expectSameRows(['erc_transfers']);

    // A failure midway: erc_transfers' new rows are in, then a later table's new file is no Parquet.
    const old = join(dir, 'old.duckdb');
    cpSync(file, old);
    const held = statSync(file).ino;
    await commitFile('before-failure', 'SELECT * FROM erc_transfers ORDER BY block_number LIMIT 2');
    const later = join(lake, '_state', 'internal_transactions');
    const stateFile = join(later, readdirSync(later).sort()[0]!);
    const kept = readFileSync(stateFile, 'utf8');
    const state = JSON.parse(kept) as { files: string[] };
    writeFileSync(join(lake, 'internal_transactions', 'broken.parquet'), 'not parquet');
    writeFileSync(stateFile, JSON.stringify({ ...state, files: [...state.files, 'internal_transactions/broken.parquet'] }));
    await expect(writeWarehouse(lake, { flag: '--out' })).rejects.toThrow(/not written/);
    expect(statSync(file).ino).toBe(held);
    // Every table of the file (rows, ledger, marker, catalogue) holds what it held, row for row.
    const db = await DuckDBInstance.create(':memory:');
    try {
      const conn = await db.connect();
      await conn.run(`ATTACH '${file}' AS now (READ_ONLY); ATTACH '${old}' AS was (READ_ONLY)`);
      const tables = async (db: string) => (await conn.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE database_name = '${db}' ORDER BY 1`)).getRows().map(([t]) => String(t));
      const names = await tables('was');
      expect(await tables('now')).toEqual(names);
      for (const t of names) {
        const differ = await one(conn, `SELECT (SELECT count(*) FROM (FROM now.main."${t}" EXCEPT ALL FROM was.main."${t}")) + (SELECT count(*) FROM (FROM was.main."${t}" EXCEPT ALL FROM now.main."${t}")) AS n`);
        expect(differ, t).toEqual({ n: '0' });
      }
      conn.closeSync();
    } finally {
      db.closeSync();
    }
    writeFileSync(stateFile, kept);
    rmSync(join(lake, 'internal_transactions', 'broken.parquet'));
    r = await writeWarehouse(lake, { flag: '--out' });
    expect(r).toMatchObject({ rows: { added: 1, removed: 0, copied: 0 }, inPlace: true });
    await expectSameRows(['erc_transfers', 'internal_transactions']);
    // Three rewrites of a file with every table's rows.
  }, 240_000);

  it("keeps the rows of the files a compacted file holds where its footer's account of them holds, else copies them", async () => {
    const first = states()[0]!;
    const src = join(lake, parquetOf(readState(first))[0]!);
    const rel = (name: string) => `erc_transfers/chain=43114/${name}.parquet`;
    const read = (files: string[]) => `SELECT * FROM read_parquet([${files.map((f) => `'${join(lake, f)}'`).join(', ')}], hive_partitioning = false)`;
    /**
     * A file of `select` in place of `from` in the first partition's state, its footer naming
     * `parts` (file, rows) as a compaction's does.
     */
    const commit = async (name: string, select: string, from: string[] = [], parts: Array<[string, number]> = []) => {
      const kv = parts.length ? `, KV_METADATA {'chainlake.merged_from': '${JSON.stringify(parts)}'}` : '';
      await onFile(':memory:', `COPY (${select}) TO '${join(lake, rel(name))}' (FORMAT parquet${kv})`);
      const s = readState(first);
      writeState(first, { ...s, files: [...s.files.filter((f) => !from.includes(f)), rel(name)] });
      for (const f of from) rmSync(join(lake, f));
      return rel(name);
    };
    const whole = relative(lake, src);
    await writeWarehouse(lake, { flag: '--out' });
    const a = await commit('part_a', `${read([whole])} LIMIT 5`);
    const b = await commit('part_b', `${read([whole])} OFFSET 5 LIMIT 4`);
    let r = await writeWarehouse(lake, { flag: '--out' });
    expect(r.rows).toMatchObject({ added: 2, removed: 0, kept: 0, copied: 0 });
    const ab = await commit('part_ab', read([a, b]), [a, b], [[a, 5], [b, 4]]);
    r = await writeWarehouse(lake, { flag: '--out' });
    expect(r.rows).toMatchObject({ added: 0, removed: 0, kept: 1, copied: 0 });
    expect((await ledger()).erc_transfers).toContain(ab);
    expect((await ledger()).erc_transfers).not.toContain(a);
    await expectSameRows(['erc_transfers']);
    // Merged with a file the copy never held (a run merges its own new files with older ones):
    // those rows are copied from their place in the merged file.
    const c = await commit('part_c', `${read([whole])} OFFSET 9 LIMIT 3`);
    const abc = await commit('part_abc', read([ab, c]), [ab, c], [[ab, 9], [c, 3]]);
    r = await writeWarehouse(lake, { flag: '--out' });
    expect(r.rows).toMatchObject({ added: 0, removed: 0, kept: 1, copied: 0 });
    expect((await ledger()).erc_transfers).toContain(abc);
    await expectSameRows(['erc_transfers']);
    // Footers whose account does not hold: one names a file with fewer rows than the copy holds
    // of it (one short), one names a file still committed. Each is copied as a new file, and the
    // rows of the file named and gone are deleted.
    await commit('part_short', `${read([abc])} LIMIT 11`, [abc], [[abc, 11]]);
    await commit('part_both', `${read([whole])} LIMIT 3`, [], [[whole, 3]]);
    r = await writeWarehouse(lake, { flag: '--out' });
    expect(r.rows).toMatchObject({ added: 2, removed: 1, kept: 0, copied: 0 });
    await expectSameRows(['erc_transfers']);
  });

  it('a table most of whose rows are replaced, or whose column changes type, is copied whole', async () => {
    // Every file of the table merged into one, as a compaction does.
    const before = states().flatMap((f) => parquetOf(readState(f)));
    const rel = 'erc_transfers/chain=43114/merged.parquet';
    const conn = await openWarehouse(lake, {}, new Set(['erc_transfers']));
    try {
      await conn.run(`COPY (SELECT * FROM erc_transfers ORDER BY block_number, log_index) TO '${join(lake, rel)}' (FORMAT parquet)`);
    } finally {
      conn.closeSync();
    }
    states().forEach((f, i) => {
      const s = readState(f);
      writeState(f, { ...s, files: [...s.files.filter((x) => !x.endsWith('.parquet')), ...(i === 0 ? [rel] : [])] });
    });
    for (const f of before) rmSync(join(lake, f));
    let r = await writeWarehouse(lake, { flag: '--out' });
    expect(r.rows).toMatchObject({ added: 1, removed: before.length, copied: 1 });
    await expectSameRows(['erc_transfers']);

    // A file whose block_number is text: the copy's column cannot take it as it is.
    await commitFile('retyped', 'SELECT * REPLACE (CAST(block_number AS VARCHAR) AS block_number) FROM erc_transfers LIMIT 3');
    r = await writeWarehouse(lake, { flag: '--out' });
    expect(r.rows).toMatchObject({ added: 2, removed: 1, copied: 1 });
    await expectSameRows(['erc_transfers']);
  });

  it('--no-rows makes it views only again', async () => {
    const r = await cliHere(['warehouse', '--lake', lake, '--no-rows']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).not.toContain('with the rows of');
    const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
    try {
      const conn = await db.connect();
      expect(await one(conn, `SELECT count(*) AS n FROM duckdb_tables() WHERE starts_with(table_name, '_rows_') OR table_name = '${FILES}'`)).toEqual({ n: '0' });
      conn.closeSync();
    } finally {
      db.closeSync();
    }
    const q = await cliHere(['query', '--lake', lake, '--format', 'json', VIEW_SQL]);
    expect(q.stdout).toContain('read_parquet');
    // The file keeps the mode it was given: a rewrite without the flag stays views only.
    const again = await writeWarehouse(lake, { flag: '--out' });
    expect(again.rows).toBeUndefined();
  });
});

describe('a lake with rows in its warehouse file, changed by a command', () => {
  it('the rewrite after `rebuild` brings the file up to date, still with rows, equal to the lake', async () => {
    const other = join(dir, 'other');
    // The table rebuilt and one it leaves: the rewrite's whole copy of one and keeping of the other
    // are what a lake of every table would show too.
    const at = lakeOf(['erc_transfers', 'delegators'], await sharedDemoLake(), join(other, 'lake'));
    const wh = join(other, 'lake.warehouse.duckdb');
    expect(await cliHere(['warehouse', '--lake', at, '--rows'])).toMatchObject({ code: 0, stderr: '' });
    // The table re-derived from its raw pages into new files: the copy's rows of the old ones go.
    const rebuilt = await cliHere(['rebuild', 'erc_transfers', '--lake', at]);
    expect(rebuilt).toMatchObject({ code: 0 });
    expect(rebuilt.stdout).toMatch(/with the rows of \d+ tables: the rows of [1-9]\d* files added, of [1-9]\d* removed \(1 tables copied whole\)/);
    await expectSameRows(undefined, at, wh);
  });

  it('the rewrite after `compact` keeps the rows of the files it merged, under the merged files\' names', async () => {
    const other = join(dir, 'compacted');
    // Flushes of 200 rows: several small files a partition.
    const at = lakeOf(['erc_transfers'], (await sharedWholeLake()).lake, join(other, 'lake'));
    const wh = join(other, 'lake.warehouse.duckdb');
    // The copy made while each partition's last two files were not committed yet: the merges
    // that follow join files the copy holds with files it never held, as a run's own merge does.
    const stateAt = join(at, '_state', 'erc_transfers');
    const saved = new Map(readdirSync(stateAt).map((f) => [f, readFileSync(join(stateAt, f), 'utf8')]));
    for (const [f, text] of saved) {
      const s = JSON.parse(text) as { files: string[] };
      const data = parquetOf(s);
      writeFileSync(join(stateAt, f), JSON.stringify({ ...s, files: s.files.filter((x) => !data.slice(-2).includes(x)) }));
    }
    expect(await cliHere(['warehouse', '--lake', at])).toMatchObject({ code: 0, stderr: '' });
    for (const [f, text] of saved) writeFileSync(join(stateAt, f), text);
    const compacted = await cliHere(['compact', 'erc_transfers', '--lake', at]);
    expect(compacted).toMatchObject({ code: 0 });
    expect(compacted.stdout).toMatch(/the rows of 0 files added, of 0 removed, of [1-9]\d* compacted files kept as they were \(0 tables copied whole\)/);
    await expectSameRows(['erc_transfers'], at, wh);
  });
});
