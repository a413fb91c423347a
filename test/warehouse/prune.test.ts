// Pruning before DuckDB plans (warehouse/prune.ts): a query filtering erc_transfers on constants
// reads only the files whose manifest bounds can match. Shown on a copy of the demo lake whose
// file of the lowest blocks is made unreadable (its manifest entry kept): a query that cannot need
// it answers, through the library and `chainlake query`, with the count the intact lake gives; a
// query the pruning does not understand still reads every file (and so fails on it here), and on
// the intact lake every filtered query gives what DuckDB gives over all the files.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLake } from '../../src/index.js';
import { committedFiles } from '../../src/warehouse/rows.js';
import { BLOOMS, bloomProbe } from '../../src/warehouse/prune.js';
import { cliHere, sharedDemoLake } from '../lake-fixture.js';

let dir: string;
let lake: string;
let broken: string;
/** The first block after the file of the lowest blocks, and that file. */
let above: bigint;
let lowest: string;
let files: string[];

/** What DuckDB gives for `where` over every committed file of erc_transfers of `at`, read directly. */
async function direct(at: string, where: string): Promise<string> {
  const db = await DuckDBInstance.create(':memory:');
  try {
    const conn = await db.connect();
    await conn.run("SET TimeZone = 'UTC'");
    const list = files.map((f) => `'${join(at, f)}'`).join(', ');
    return String((await conn.runAndReadAll(`SELECT count(*) FROM read_parquet([${list}], union_by_name = true) WHERE ${where}`)).getRows()[0]![0]);
  } finally {
    db.closeSync();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cl-prune-'));
  lake = join(dir, 'lake');
  broken = join(dir, 'broken');
  cpSync(await sharedDemoLake(), lake, { recursive: true });
  files = committedFiles(lake, ['erc_transfers']).get('erc_transfers')!;
  expect(files.length).toBeGreaterThan(1);
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const list = files.map((f) => `'${join(lake, f)}'`).join(', ');
  const [file, hi] = (await conn.runAndReadAll(`SELECT filename, max(block_number) AS hi FROM read_parquet([${list}], union_by_name = true, filename = true) GROUP BY 1 ORDER BY hi LIMIT 1`)).getRows()[0]!;
  db.closeSync();
  lowest = String(file).slice(lake.length + 1);
  above = BigInt(String(hi)) + 1n;
  cpSync(lake, broken, { recursive: true });
  // The demo lake is made by the first file of a test run that asks for it: a minute and more on a busy machine.
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const count = (where: string) => `SELECT count(*) AS n FROM erc_transfers WHERE ${where}`;

/** The file of the lowest blocks made unreadable in the copy, or whole again. */
const breakLowest = () => writeFileSync(join(broken, lowest), 'not a parquet file');
const mendLowest = () => cpSync(join(lake, lowest), join(broken, lowest));

/** The library on the copy, opened whole (an open reads every footer once), then the file broken. */
async function openBroken() {
  mendLowest();
  const l = await openLake(broken, { warehouse: false });
  breakLowest();
  return l;
}

describe('a filtered query reads only the files that can match', () => {
  it('through the library and chainlake query, with the count of the intact lake', async () => {
    const where = `block_number >= ${above}`;
    const want = await direct(lake, where);
    expect(Number(want)).toBeGreaterThan(0);
    const l = await openBroken();
    try {
      expect(String((await l.query(count(where))).toArray()[0]!.toJSON().n)).toBe(want);
      // The same again, and a time and a token constraint beside it: the file stays unread.
      expect(String((await l.query(count(`${where} AND block_timestamp >= TIMESTAMPTZ '2000-01-01 00:00:00+00' AND token_address >= ''`))).toArray()[0]!.toJSON().n)).toBe(want);
    } finally {
      l.close();
    }
    const r = await cliHere(['query', '--lake', broken, '--no-warehouse', '--format', 'csv', count(where)]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`n\n${want}\n`);
    // The warehouse file's catalogue of bounds, as a run leaves it: enough without the manifests
    // (views only: with rows, the table would be read from them, not pruned).
    mendLowest();
    expect((await cliHere(['warehouse', '--lake', broken, '--no-rows'])).code).toBe(0);
    breakLowest();
    rmSync(join(broken, 'erc_transfers', 'metadata'), { recursive: true });
    const w = await cliHere(['query', '--lake', broken, '--format', 'csv', count(where)]);
    expect(w.stderr).toBe('');
    expect(w.stdout).toBe(`n\n${want}\n`);
    cpSync(join(lake, 'erc_transfers', 'metadata'), join(broken, 'erc_transfers', 'metadata'), { recursive: true });
  });

  it('what it does not understand reads every file; what it prunes gives what DuckDB gives over all the files', async () => {
    const b = await openBroken();
    try {
      for (const where of [`block_number >= ${above} OR log_index = 0`, 'log_index >= 0', `block_number + 0 >= ${above}`]) await expect(b.query(count(where)), where).rejects.toThrow(/magic bytes/);
      // The table read a second way: a join, its name in a string, a CTE of its name.
      await expect(b.query(`SELECT count(*) FROM erc_transfers a JOIN erc_transfers b USING (tx_hash, log_index) WHERE a.block_number >= ${above}`)).rejects.toThrow(/magic bytes/);
      await expect(b.query(`SELECT (SELECT count(*) FROM erc_transfers WHERE block_number >= ${above}) + (SELECT count(*) FROM query_table('erc_transfers'))`)).rejects.toThrow(/magic bytes/);
      await expect(b.query(`WITH erc_transfers AS (SELECT * FROM main.erc_transfers) SELECT count(*) FROM erc_transfers WHERE block_number >= ${above}`)).rejects.toThrow(/magic bytes/);
      // Pruned where every place reading it is filtered.
      const where = `block_number >= ${above}`;
      expect(String((await b.query(`SELECT (SELECT count(*) FROM erc_transfers WHERE ${where}) + (SELECT count(*) FROM erc_transfers t WHERE t.block_number > ${above} AND t.log_index >= 0) AS n`)).toArray()[0]!.toJSON().n)).toBe(String(2n * BigInt(await direct(lake, where)) - BigInt(await direct(lake, `block_number = ${above}`))));
    } finally {
      b.close();
    }
    const l = await openLake(lake, { warehouse: false });
    try {
      const edge = (await l.query('SELECT min(block_number) AS lo, max(block_number) AS hi, strftime(max(block_timestamp), \'%Y-%m-%d %H:%M:%S\') AS t, min(token_address) AS tok, min(tx_hash) AS tx FROM erc_transfers')).toArray()[0]!.toJSON();
      const wheres = [
        `block_number BETWEEN ${above - 1n} AND ${above}`,
        `block_number > ${above - 1n}`,
        `${above} <= block_number`,
        `block_number < ${edge.lo}`,
        `block_number = ${edge.hi}`,
        `block_number IN (${edge.lo}, ${edge.hi})`,
        `block_timestamp >= '${edge.t}'`,
        `block_timestamp >= TIMESTAMP '${edge.t}'`,
        `block_timestamp < DATE '2000-01-01'`,
        `token_address = '${edge.tok}'`,
        `token_address = '${String(edge.tok).toUpperCase()}'`,
        `tx_hash = '${edge.tx}' AND block_number >= 0`,
        `token_address > '${edge.tok}' AND block_number <= ${above}`,
      ];
      for (const where of wheres) expect(String((await l.query(count(where))).toArray()[0]!.toJSON().n), where).toBe(await direct(lake, where));
    } finally {
      l.close();
    }
  });

  it('an IN list of constants, and a lower bound on time from the clock, read only the files that can match', async () => {
    // A time inside the gap between the lowest file's last row and the lake's next one, written
    // as seconds before now: the query's now() comes a little after this one, minutes short of the gap's end.
    const db = await DuckDBInstance.create(':memory:');
    const list = files.map((f) => `'${join(lake, f)}'`).join(', ');
    const [first, last, next, top] = (await (await db.connect()).runAndReadAll(`WITH t AS (SELECT * FROM read_parquet([${list}], union_by_name = true, filename = true)) SELECT epoch(min(block_timestamp) FILTER (filename = '${join(lake, lowest)}')), epoch(max(block_timestamp) FILTER (filename = '${join(lake, lowest)}')), epoch(min(block_timestamp) FILTER (block_timestamp > (SELECT max(block_timestamp) FROM t WHERE filename = '${join(lake, lowest)}'))), max(block_number) FROM t`)).getRows()[0]!.map(Number);
    db.closeSync();
    expect(next! - last!).toBeGreaterThan(300);
    const ago = Math.floor(Date.now() / 1000 - (last! + next!) / 2);
    // The last: a list too long to bind value by value, taken from its least to its greatest value.
    const wheres = [`block_timestamp >= now() - INTERVAL ${ago} SECOND`, `current_timestamp - to_seconds(${ago}) < block_timestamp AND log_index >= 0`, `block_number IN (${above}, ${top})`, `block_number IN (${above}, ${top}) AND block_number IN ('${top}')`, `block_number IN (${[...Array.from({ length: 5000 }, (_, i) => above + BigInt(i)), top].join(', ')})`];
    const b = await openBroken();
    try {
      for (const where of wheres) {
        const want = await direct(lake, where);
        expect(Number(want), where).toBeGreaterThan(0);
        expect(String((await b.query(count(where))).toArray()[0]!.toJSON().n), where).toBe(want);
      }
      // The clock as an upper bound or an equality, or subtracted, is read earlier than the query
      // reads it: each would leave out the lowest file if taken as a bound, and every file is read.
      const before = Math.floor(Date.now() / 1000 - first! + 3600);
      const mid = new Date(((last! + next!) / 2) * 1000).toISOString().replace('T', ' ').replace('Z', '+00');
      for (const where of [`block_timestamp < now() - INTERVAL ${before} SECOND`, `block_timestamp = now() - INTERVAL ${ago} SECOND`, `block_timestamp >= TIMESTAMPTZ '${mid}' - (now() - now())`, `block_number IN (${above}, NULL)`, `block_number IN (${above}, '${top}')`, `block_number NOT IN (0)`]) {
        await expect(b.query(count(where)), where).rejects.toThrow(/magic bytes/);
      }
    } finally {
      b.close();
    }
    const r = await cliHere(['query', '--lake', broken, '--no-warehouse', '--format', 'csv', count(wheres[0]!)]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`n\n${await direct(lake, wheres[0]!)}\n`);
  });
});

describe('a tx hash reads only the files whose bloom may hold it', () => {
  /** A warehouse file of the copy, written with every file whole; views only, so that queries read the Parquet files. */
  let file: string;
  beforeAll(async () => {
    mendLowest();
    file = join(dir, 'broken.duckdb');
    expect((await cliHere(['warehouse', '--lake', broken, '--out', file, '--no-rows'])).code).toBe(0);
  }, 300_000);

  it('no file that holds a hash is ever left out by its bloom, and a pruned query gives what DuckDB gives', async () => {
    mendLowest();
    const db = await DuckDBInstance.create(':memory:');
    try {
      const conn = await db.connect();
      await conn.run(`ATTACH '${file}' AS w (READ_ONLY)`);
      expect(Number((await conn.runAndReadAll(`SELECT count(DISTINCT file) FROM w.main.${BLOOMS} WHERE table_name = 'erc_transfers' AND column_name = 'tx_hash'`)).getRows()[0]![0])).toBe(files.length);
      const list = files.map((f) => `'${join(broken, f)}'`).join(', ');
      const held = (await conn.runAndReadAll(`SELECT DISTINCT tx_hash, substr(filename, ${broken.length + 2}) FROM read_parquet([${list}], union_by_name = true, filename = true)`)).getRows().map(([h, f]) => [String(h), String(f)] as const);
      const hashes = [...new Set(held.map(([h]) => h))];
      const absent = await bloomProbe(conn, 'w')('erc_transfers', 'tx_hash', [...hashes, `0x${'0'.repeat(64)}`]);
      // Every file said not to hold a hash does not hold it.
      const wrong = held.filter(([h, f]) => absent.get(h)?.has(f));
      expect(wrong).toEqual([]);
      // And the blooms do leave files out (each hash is in one file or two of several).
      expect([...absent.values()].reduce((n, s) => n + s.size, 0)).toBeGreaterThan(hashes.length);
    } finally {
      db.closeSync();
    }
    const l = await openLake(broken, { warehouse: file });
    try {
      const some = (await l.query('SELECT DISTINCT tx_hash FROM erc_transfers ORDER BY tx_hash LIMIT 40')).toArray().map((r) => String(r.toJSON().tx_hash));
      const wheres = [...some.slice(0, 8).map((h) => `tx_hash = '${h}'`), `tx_hash IN (${some.map((h) => `'${h}'`).join(', ')})`, `tx_hash = '${some[0]!.toUpperCase()}'`, `tx_hash = '0x${'0'.repeat(64)}' AND block_number >= 0`];
      for (const where of wheres) expect(String((await l.query(count(where))).toArray()[0]!.toJSON().n), where).toBe(await direct(lake, where));
    } finally {
      l.close();
    }
  });

  it('a rewrite of the warehouse file keeps the blooms of the files it already had', async () => {
    // One file's bloom set to all ones in the file, and the file marked as made from other inputs:
    // the rewrite reads the blooms it keeps from the file it replaces, not from the data files.
    mendLowest();
    const other = files.find((f) => f !== lowest)!;
    const w = await DuckDBInstance.create(file);
    const conn = await w.connect();
    await conn.run(`UPDATE ${BLOOMS} SET bits = ~(bits & ~bits) WHERE file = '${other}'`);
    await conn.run("UPDATE _chainlake SET inputs = 'other'");
    const before = (await conn.runAndReadAll(`SELECT file, bits::VARCHAR AS bits FROM ${BLOOMS} ORDER BY ALL`)).getRows();
    // Closed with its connection: an instance whose connection is open keeps the file locked.
    conn.closeSync();
    w.closeSync();
    expect((await cliHere(['warehouse', '--lake', broken, '--out', file])).code).toBe(0);
    const r = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
    try {
      const after = (await (await r.connect()).runAndReadAll(`SELECT file, bits::VARCHAR AS bits FROM ${BLOOMS} ORDER BY ALL`)).getRows();
      expect(after).toEqual(before);
      expect(String(after.find(([f]) => f === other)![1])).toMatch(/^1+$/);
    } finally {
      r.closeSync();
    }
  });

  // Last: it takes the blooms out of the file.
  it('the blooms leave out a file that cannot hold the hash; without them every file is read', async () => {
    const others = files.filter((f) => f !== lowest).map((f) => `'${join(lake, f)}'`).join(', ');
    const db = await DuckDBInstance.create(':memory:');
    const [tx] = (await (await db.connect()).runAndReadAll(`SELECT tx_hash FROM read_parquet([${others}], union_by_name = true) WHERE tx_hash NOT IN (SELECT tx_hash FROM read_parquet('${join(lake, lowest)}')) ORDER BY block_number DESC LIMIT 1`)).getRows()[0]!;
    db.closeSync();
    const where = `tx_hash = '${String(tx)}'`;
    const want = await direct(lake, where);
    expect(Number(want)).toBeGreaterThan(0);
    breakLowest();
    const l = await openLake(broken, { warehouse: file });
    try {
      expect(String((await l.query(count(where))).toArray()[0]!.toJSON().n)).toBe(want);
      // A value that is not hex has no key: every file is read.
      await expect(l.query(count(`tx_hash = 'not a hash'`))).rejects.toThrow(/magic bytes/);
    } finally {
      l.close();
    }
    const r = await cliHere(['query', '--lake', broken, '--warehouse', file, '--format', 'csv', count(where)]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`n\n${want}\n`);
    // A warehouse file without blooms (written before them, or they were lost): every file is read.
    const w = await DuckDBInstance.create(file);
    const conn = await w.connect();
    await conn.run(`DROP TABLE ${BLOOMS}`);
    conn.closeSync();
    w.closeSync();
    const after = await cliHere(['query', '--lake', broken, '--warehouse', file, '--format', 'csv', count(where)]);
    expect(after.stderr).toMatch(/magic bytes/);
    expect(after.code).not.toBe(0);
  });
});
