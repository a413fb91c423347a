// The library's fixed cost of a selective query (issue 38): a query run again does not parse its
// SQL, evaluate its constants, bind its files' columns nor ask whether the warehouse file is
// attached again, and a hash query keeps the warehouse file attached for its blooms, attaching it
// anew when a new file replaces it. Shown by the statements the library sends DuckDB, and by a
// copy of the demo lake whose file of the lowest blocks is made unreadable: a query the blooms
// keep off it answers with the count of the intact lake.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as DuckDB from '@duckdb/node-api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLake } from '../../src/index.js';
import { committedFiles } from '../../src/warehouse/rows.js';
import { cli, cliHere, sharedDemoLake } from '../lake-fixture.js';

// The module the library loads (warehouse/duckdb.ts requires it): its prototype is the one spied on.
const duckdb = createRequire(import.meta.url)('@duckdb/node-api') as typeof DuckDB;

let dir: string;
let lake: string;
let broken: string;
let files: string[];
let lowest: string;
/** A tx hash of a file other than the lowest one that the lowest does not hold. */
let tx: string;

/** What DuckDB gives for `where` over every committed file of erc_transfers of the intact lake. */
async function direct(where: string): Promise<string> {
  const db = await duckdb.DuckDBInstance.create(':memory:');
  try {
    const conn = await db.connect();
    await conn.run("SET TimeZone = 'UTC'");
    const list = files.map((f) => `'${join(lake, f)}'`).join(', ');
    return String((await conn.runAndReadAll(`SELECT count(*) FROM read_parquet([${list}], union_by_name = true) WHERE ${where}`)).getRows()[0]![0]);
  } finally {
    db.closeSync();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cl-repeat-'));
  lake = join(dir, 'lake');
  broken = join(dir, 'broken');
  cpSync(await sharedDemoLake(), lake, { recursive: true });
  files = committedFiles(lake, ['erc_transfers']).get('erc_transfers')!;
  expect(files.length).toBeGreaterThan(1);
  const db = await duckdb.DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const list = files.map((f) => `'${join(lake, f)}'`).join(', ');
  lowest = String((await conn.runAndReadAll(`SELECT filename FROM read_parquet([${list}], union_by_name = true, filename = true) GROUP BY 1 ORDER BY max(block_number) LIMIT 1`)).getRows()[0]![0]).slice(lake.length + 1);
  const others = files.filter((f) => f !== lowest).map((f) => `'${join(lake, f)}'`).join(', ');
  tx = String((await conn.runAndReadAll(`SELECT tx_hash FROM read_parquet([${others}], union_by_name = true) WHERE tx_hash NOT IN (SELECT tx_hash FROM read_parquet('${join(lake, lowest)}')) ORDER BY block_number DESC LIMIT 1`)).getRows()[0]![0]);
  db.closeSync();
  cpSync(lake, broken, { recursive: true });
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every statement the library sends DuckDB while `spying` is on. */
const sent: string[] = [];
let spying = false;
const originals = { run: duckdb.DuckDBConnection.prototype.run, runAndReadAll: duckdb.DuckDBConnection.prototype.runAndReadAll };
for (const m of ['run', 'runAndReadAll'] as const) {
  const orig = originals[m] as (this: DuckDB.DuckDBConnection, sql: string, ...rest: unknown[]) => Promise<unknown>;
  (duckdb.DuckDBConnection.prototype as unknown as Record<string, unknown>)[m] = function (this: DuckDB.DuckDBConnection, sql: string, ...rest: unknown[]) {
    if (spying) sent.push(sql);
    return orig.call(this, sql, ...rest);
  };
}
afterAll(() => Object.assign(duckdb.DuckDBConnection.prototype, originals));
afterEach(() => {
  spying = false;
});

/** The statements the library sends DuckDB for `sql`. */
async function statementsOf(l: Awaited<ReturnType<typeof openLake>>, sql: string): Promise<{ statements: string[]; n: string }> {
  sent.length = 0;
  spying = true;
  const n = String((await l.query(sql)).toArray()[0]!.toJSON().n);
  spying = false;
  return { statements: [...sent], n };
}

const count = (where: string) => `SELECT count(*) AS n FROM erc_transfers WHERE ${where}`;

describe('a selective query run again through the library', () => {
  it('makes its view and runs, and gives what DuckDB gives over every file; a bound from the clock is evaluated each time', async () => {
    const l = await openLake(lake, { warehouse: false });
    try {
      const where = `token_address >= '0x' AND block_number >= 0 AND block_timestamp >= TIMESTAMPTZ '2000-01-01 00:00:00+00'`;
      const want = await direct(where);
      expect(Number(want)).toBeGreaterThan(0);
      const first = await statementsOf(l, count(where));
      expect(first.n).toBe(want);
      expect(first.statements.some((s) => s.includes('json_serialize_sql'))).toBe(true);
      const again = await statementsOf(l, count(where));
      expect(again.n).toBe(want);
      expect(again.statements.filter((s) => /json_serialize_sql|^DESCRIBE|duckdb_databases|^SELECT CAST/.test(s))).toEqual([]);
      // now() moves: its bound is taken again at each query.
      const clock = `block_timestamp >= now() - INTERVAL 36500 DAY`;
      await statementsOf(l, count(clock));
      const later = await statementsOf(l, count(clock));
      expect(later.n).toBe(await direct(clock));
      expect(later.statements.some((s) => s.includes('now()'))).toBe(true);
    } finally {
      l.close();
    }
  });
});

describe('hash queries through the library', () => {
  it('attach the warehouse file once for its blooms, and anew when a new file replaces it', async () => {
    const file = join(dir, 'broken.duckdb');
    // In this process: nothing has the file open yet (the rewrite below, while the library has it attached, is another program's).
    // Views only: the hash is looked up in the Parquet files, through the blooms.
    expect((await cliHere(['warehouse', '--lake', broken, '--out', file, '--no-rows'])).code).toBe(0);
    const where = `tx_hash = '${tx}'`;
    const want = await direct(where);
    expect(Number(want)).toBeGreaterThan(0);
    const breakLowest = () => writeFileSync(join(broken, lowest), 'not a parquet file');
    // The attachments for the blooms (the first query also attaches it for its rows, and detaches it: none current).
    const attaches = (s: string[]) => s.filter((x) => /^ATTACH .* AS chainlake_catalogue/.test(x)).length;
    // Named: the file is checked, and its rows' binding for a table named later must not meet the blooms' attachment.
    const l = await openLake(broken, { warehouse: file });
    try {
      breakLowest();
      const first = await statementsOf(l, count(where));
      expect(first.n).toBe(want);
      expect(attaches(first.statements)).toBe(1);
      const again = await statementsOf(l, count(`${where} AND block_number >= 0`));
      expect(again.n).toBe(want);
      expect(attaches(again.statements)).toBe(0);
      // A rewrite renames a new file over it (with rows now: not the file it was).
      cpSync(join(lake, lowest), join(broken, lowest));
      expect(cli(['warehouse', '--lake', broken, '--out', file, '--rows']).code).toBe(0);
      breakLowest();
      const replaced = await statementsOf(l, count(where));
      expect(replaced.n).toBe(want);
      expect(attaches(replaced.statements)).toBe(1);
      // Another table's view, bound now: the file is attached for its rows, not refused as attached already.
      expect(Number((await l.query('SELECT count(*) AS n FROM blocks')).toArray()[0]!.toJSON().n)).toBeGreaterThanOrEqual(0);
    } finally {
      l.close();
    }
  });
});
