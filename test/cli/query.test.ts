// `chainlake query` streams its result chunk by chunk: a result of any size comes out whole and
// exact in every format, in bounded memory (issue 24: the table crashed past ~120,000 rows, and every
// format held the whole result as JavaScript objects), and the streamed text equals what the whole
// result formatted at once gave.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC, Type, type Data, type Decimal } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { textTable } from '../../src/text.js';
import { inert } from '../../src/text.js';
import { openWarehouse } from '../../src/warehouse/views.js';
import { query, WIDTH_ROWS, writeQuery, type Format } from '../../src/warehouse/query.js';
import { cliHere, cliHereBytes, sharedDemoLake } from '../lake-fixture.js';
import { DIGITS, exactSums, SUM_PER_TOKEN, TOP_RECEIVERS } from '../warehouse/sums.js';
import { sqlAfterDashes } from '../../src/cli/main.js';
import yargs, { type CommandModule } from 'yargs';
import { LAKE_OPTION } from '../../src/cli/args.js';
import { plainQueryArgs, queryCommand } from '../../src/cli/query.js';

// A lake with no partition yet (readers refuse a folder holding none): the SQL here reads no table.
const lake = mkdtempSync(join(tmpdir(), 'cl-query-'));
mkdirSync(join(lake, '_state'));

// The formatting of the whole result at once, as `chainlake query` had it before it streamed: the
// reference the streamed text must equal.
function wholeCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}
function wholeCsvCell(v: unknown): string {
  const s = wholeCell(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
function wholeFormat(result: { columns: string[]; rows: Array<Record<string, unknown>> }, f: Format): string {
  if (f === 'json') return JSON.stringify(result.rows, null, 1);
  if (f === 'csv') return [result.columns.map(wholeCsvCell).join(','), ...result.rows.map((r) => result.columns.map((c) => wholeCsvCell(r[c])).join(','))].join('\n');
  if (result.columns.length === 0) return '(no result)';
  return textTable(result.columns.map((c) => inert(c)), result.rows.map((r) => result.columns.map((c) => inert(wholeCell(r[c]))))) + `\n(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`;
}

/** Equal texts; else the first line that differs (a diff of megabytes of text takes minutes to print). */
function expectSameText(actual: string, expected: string, what: string): void {
  if (actual === expected) return;
  const a = actual.split('\n');
  const e = expected.split('\n');
  let i = 0;
  while (i < a.length && a[i] === e[i]) i++;
  expect({ line: i + 1, text: a[i] }, what).toEqual({ line: i + 1, text: e[i] });
}

async function streamed(conn: DuckDBConnection, sql: string, f: Format): Promise<string> {
  let text = '';
  await writeQuery(conn, sql, f, (t) => {
    text += t;
  });
  return text;
}

/**
 * Every landed type of the lake (VARCHAR with what CSV quotes and a terminal acts on, BIGINT,
 * UBIGINT, INTEGER, DOUBLE, BOOLEAN, TIMESTAMPTZ, an amount as DECIMAL(38,0) and its `_raw` digits
 * of a uint256, VARCHAR[], INTEGER[], JSON) and what queries make of them (HUGEINT, DATE, a STRUCT,
 * an integer-like column name, which JSON objects put first), NULLs in each, over 3 chunks.
 */
const EVERY_TYPE = `SELECT
    range AS i,
    CASE WHEN range % 7 = 3 THEN NULL ELSE 'tok "' || range || '", a,b' || chr(10) || 'line' || chr(27) || '[2K' || chr(8238) END AS name,
    CASE WHEN range % 5 = 1 THEN NULL ELSE 9223372036854775807 - range END AS big,
    CAST(18446744073709551615 - range AS UBIGINT) AS ubig,
    CAST(range AS INTEGER) - 2147483 AS small,
    CASE range % 4 WHEN 0 THEN range / 3.0 WHEN 1 THEN -0.1 WHEN 2 THEN 1e300 ELSE NULL END AS ratio,
    range % 3 = 0 AS flag,
    TIMESTAMPTZ '2024-02-29 23:59:59.123456+00' + range * INTERVAL 1 SECOND AS at,
    CASE WHEN range % 6 = 2 THEN NULL ELSE CAST('99999999999999999999999999999999999999' AS DECIMAL(38,0)) - range END AS value,
    '115792089237316195423570985008687907853269984665640564039457584007913129639' || lpad(CAST(range % 1000 AS VARCHAR), 3, '0') AS value_raw,
    CASE WHEN range % 9 = 4 THEN NULL ELSE ['a', NULL, 'b,"c"'] END AS tags,
    [range, -1, NULL]::INTEGER[] AS ids,
    CAST('{"k": [1, 2.5, "x"], "n": null, "big": 123456789012345678901234567890}' AS JSON) AS doc,
    CAST(range AS HUGEINT) * 170141183460469231731687303715 AS huge,
    DATE '2024-01-01' + CAST(range AS INTEGER) AS day,
    {'amount': CAST(range AS DECIMAL(38,0)) * 1000000000000000000000, 'when': TIMESTAMPTZ '2024-01-01 00:00:00+00', 'list': [range]} AS nested,
    7 AS "1"
  FROM range(5000)`;

describe('query streamed chunk by chunk', () => {
  let conn: DuckDBConnection;
  beforeAll(async () => {
    conn = await openWarehouse(lake);
  });
  afterAll(() => conn.closeSync());

  it('writes csv, json and the table exactly as the whole result formatted at once, for every type of the lake', async () => {
    const whole = await query(conn, EVERY_TYPE);
    expect(whole.rows.length).toBe(5000);
    for (const f of ['csv', 'json', 'table'] as const) expectSameText(await streamed(conn, EVERY_TYPE, f), wholeFormat(whole, f) + '\n', f);
    const rows = JSON.parse(await streamed(conn, EVERY_TYPE, 'json')) as Array<Record<string, unknown>>;
    expect(rows[0]).toMatchObject({ value: '99999999999999999999999999999999999999', value_raw: '115792089237316195423570985008687907853269984665640564039457584007913129639000', big: '9223372036854775807' });
    expect(Object.keys(rows[0]!)[0]).toBe('1');
  });

  it('gives an empty result, a statement without rows and the last of several statements as a whole result would', async () => {
    for (const sql of ['', '-- nothing', 'SELECT 1 AS a WHERE false', 'CREATE OR REPLACE TABLE t AS SELECT 1 AS x; SELECT x + 1 AS y FROM t'])
      for (const f of ['csv', 'json', 'table'] as const) expectSameText(await streamed(conn, sql, f), wholeFormat(await query(conn, sql), f) + '\n', `${f}: ${sql}`);
    await expect(streamed(conn, 'SELEC 1', 'csv')).rejects.toThrow(/^Parser Error: syntax error at or near "SELEC"/);
  });

  it('hands the text over a chunk at a time and waits for each piece to be taken before making the next', async () => {
    const n = 3 * 2048 + 5;
    let pieces = 0;
    let longest = 0;
    let taking = false;
    const text: string[] = [];
    await writeQuery(conn, `SELECT range AS i, repeat('x', 50) AS pad FROM range(${n})`, 'csv', async (t) => {
      expect(taking).toBe(false);
      taking = true;
      pieces++;
      longest = Math.max(longest, t.length);
      text.push(t);
      await new Promise((r) => setTimeout(r, 1));
      taking = false;
    });
    expect(pieces).toBeGreaterThan(3);
    // One chunk's rows at most (~60 bytes each), not the whole result.
    expect(longest).toBeLessThan(2048 * 70);
    expect(text.join('').split('\n').length).toBe(n + 2);
  });

  it(`lays a table out from its first ${WIDTH_ROWS} rows, then prints wider cells whole`, async () => {
    const n = WIDTH_ROWS + 2500;
    const sql = `SELECT range AS i, CASE WHEN range = ${WIDTH_ROWS + 7} THEN repeat('w', 40) ELSE 'n' END AS label, 'end' AS last FROM range(${n})`;
    const lines = (await streamed(conn, sql, 'table')).split('\n');
    expect(lines.length).toBe(n + 4);
    // Widths of the first block: `i` is 4 wide (up to 9999), `label` 5 (its header).
    expect(lines[0]).toBe('i     label  last');
    expect(lines[1]).toBe('----  -----  ----');
    expect(lines[2]).toBe('0     n      end');
    expect(lines[WIDTH_ROWS + 1]).toBe(`${WIDTH_ROWS - 1}  n      end`);
    expect(lines[WIDTH_ROWS + 2]).toBe(`${WIDTH_ROWS}  n      end`);
    expect(lines[WIDTH_ROWS + 9]).toBe(`${WIDTH_ROWS + 7}  ${'w'.repeat(40)}  end`);
    expect(lines.at(-2)).toBe(`(${n} rows)`);
    expect(lines.at(-1)).toBe('');
  });
});

/**
 * A query that fails after its first chunks were handed over: DuckDB's Node client ends such a
 * stream as it ends a finished one, so only checkStreamEnd tells the two apart.
 */
const FAILS_LATE = "SELECT CASE WHEN range < 500000 THEN range ELSE error('boom at ' || range) END AS v FROM range(2000000)";

describe('a query that fails while its result is being read', () => {
  it('is an error in every format, with DuckDB\'s reason, after some rows and before the text that closes the result', async () => {
    for (const f of ['csv', 'json', 'table', 'arrow'] as const) {
      const r = await cliHereBytes(['query', '--lake', lake, '--format', f, FAILS_LATE]);
      expect(r.code, f).toBe(2);
      expect(r.stderr, f).toMatch(/^chainlake: query: the query failed after \d+ rows of its result had been read, and what was read is not the whole result: Invalid Input Error: boom at \d+\n$/);
      // Some rows went out before it failed (a stream cannot take them back), but not the end.
      const text = r.stdout.toString('latin1');
      if (f === 'json') expect(text.trimEnd().endsWith(']')).toBe(false);
      if (f === 'table') expect(text).not.toMatch(/\(\d+ rows\)/);
    }
  });

  it('one statement of several: the error, and why it has no reason', async () => {
    const r = await cliHere(['query', '--lake', lake, '--format', 'csv', `SELECT 1 AS a; ${FAILS_LATE}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the query failed after \d+ rows .*: DuckDB's Node client does not pass on the reason \(run that statement alone to see it\)/);
  });

  it('a query that ends normally is not taken for one that failed', async () => {
    const r = await cliHere(['query', '--lake', lake, '--format', 'csv', 'SELECT count(*) AS n FROM (SELECT range FROM range(2000000))']);
    expect(r).toMatchObject({ code: 0, stdout: 'n\n2000000\n', stderr: '' });
  });
});

describe('textTable', () => {
  it('lays out 300,000 rows (a spread of their cells into Math.max overflowed the stack)', () => {
    const rows = Array.from({ length: 300_000 }, (_, i) => [String(i), i]);
    const lines = textTable(['name', 'n'], rows).split('\n');
    expect(lines.length).toBe(300_002);
    expect(lines[0]).toBe('name         n');
    expect(lines.at(-1)).toBe('299999  299999');
  });
});

describe('chainlake query with a result of 200,000 rows', () => {
  const N = 200_000;
  // A uint256 amount as digits, a DECIMAL(38,0) and a HUGEINT past 2^53, a TIMESTAMPTZ.
  const SQL = `SELECT range AS i,
      CAST(range AS DECIMAL(38,0)) * 100000000000000000000 + 7 AS amount,
      CAST(range AS HUGEINT) * 1000000000000000000000000000000 + 1 AS huge,
      '1157920892373161954235709850086879078532699846656405640394575840079131296' || lpad(CAST(range AS VARCHAR), 6, '0') AS value_raw,
      TIMESTAMPTZ '2024-01-01 00:00:00+00' + range * INTERVAL 1 SECOND AS at
    FROM range(${N})`;
  const LAST = { i: '199999', amount: '19999900000000000000000007', huge: '199999000000000000000000000000000001', value_raw: '1157920892373161954235709850086879078532699846656405640394575840079131296199999', at: '2024-01-03 07:33:19+00' };
  const MIDDLE = { i: '123456', amount: '12345600000000000000000007', huge: '123456000000000000000000000000000001', value_raw: '1157920892373161954235709850086879078532699846656405640394575840079131296123456', at: '2024-01-02 10:17:36+00' };

  it('table: every row, exact, the count last', async () => {
    const r = await cliHere(['query', '--lake', lake, SQL]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.length).toBe(N + 4);
    expect(lines[0]!.split(/ +/)).toEqual(['i', 'amount', 'huge', 'value_raw', 'at']);
    expect(lines[2]!.split(/  +/)).toEqual(['0', '7', '1', '1157920892373161954235709850086879078532699846656405640394575840079131296000000', '2024-01-01 00:00:00+00']);
    expect(lines[123456 + 2]!.split(/  +/)).toEqual(Object.values(MIDDLE));
    expect(lines[N + 1]!.split(/  +/)).toEqual(Object.values(LAST));
    expect(lines[N + 2]).toBe(`(${N} rows)`);
  });

  it('csv and json: every row, big numbers exact (as strings in JSON)', async () => {
    const csv = await cliHere(['query', '--lake', lake, '--format', 'csv', SQL]);
    expect(csv.code, csv.stderr).toBe(0);
    const lines = csv.stdout.split('\n');
    expect(lines.length).toBe(N + 2);
    expect(lines[0]).toBe('i,amount,huge,value_raw,at');
    expect(lines[1]).toBe('0,7,1,1157920892373161954235709850086879078532699846656405640394575840079131296000000,2024-01-01 00:00:00+00');
    expect(lines[123456 + 1]).toBe(Object.values(MIDDLE).join(','));
    expect(lines[N]).toBe(Object.values(LAST).join(','));
    expect(lines[N + 1]).toBe('');

    const json = await cliHere(['query', '--lake', lake, '--format', 'json', SQL]);
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    expect(rows.length).toBe(N);
    expect(rows[0]).toEqual({ i: '0', amount: '7', huge: '1', value_raw: '1157920892373161954235709850086879078532699846656405640394575840079131296000000', at: '2024-01-01 00:00:00+00' });
    expect(rows[123456]).toEqual(MIDDLE);
    expect(rows[N - 1]).toEqual(LAST);
  });

  it('arrow: every row, the decimals exact', async () => {
    const r = await cliHereBytes(['query', '--lake', lake, '--format', 'arrow', SQL]);
    expect(r.code, r.stderr).toBe(0);
    const t = tableFromIPC(r.stdout);
    expect(t.numRows).toBe(N);
    expect(t.getChild('i')!.get(N - 1)).toBe(BigInt(N - 1));
    expect(t.getChild('value_raw')!.get(123456)).toBe(MIDDLE.value_raw);
    // The unscaled 128-bit integer of row 123456's amount, from its little-endian words.
    let at = 123456;
    for (const d of t.getChild('amount')!.data as Data<Decimal>[]) {
      if (at >= d.length) {
        at -= d.length;
        continue;
      }
      const words = new DataView(d.values.buffer, d.values.byteOffset + at * 16, 16);
      expect((words.getBigInt64(8, true) << 64n) | words.getBigUint64(0, true)).toBe(BigInt(MIDDLE.amount));
      break;
    }
  });
});

describe('the first sums an analyst writes, through chainlake query', () => {
  let demo: string;
  beforeAll(async () => {
    demo = await sharedDemoLake();
  });
  const json = async (sql: string) => {
    const r = await cliHere(['query', '--lake', demo, '--format', 'json', sql]);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Array<Record<string, unknown>>;
  };

  it('sum(value) per token is the exact sum of the digits received, and the top receivers by amount are those of the amounts over 38 digits; JSON gives the digits as strings', async () => {
    const want = exactSums(await json(DIGITS));
    const perToken = await json(SUM_PER_TOKEN);
    expect(perToken).toEqual(want.perToken);
    expect(perToken.some((r) => typeof r.total === 'string')).toBe(true);
    expect(await json(TOP_RECEIVERS)).toEqual(want.top);
    // The other formats print the same digits.
    const csv = await cliHere(['query', '--lake', demo, '--format', 'csv', TOP_RECEIVERS]);
    expect(csv.stdout).toBe(['to_address,received', ...want.top.map((r) => `${r.to_address},${r.received}`), ''].join('\n'));
    const table = await cliHere(['query', '--lake', demo, TOP_RECEIVERS]);
    for (const r of want.top) expect(table.stdout).toMatch(new RegExp(`${r.to_address}  +${r.received}\n`));
  });

  it('arrow: an amount and its sums are Utf8 of their digits (a uint256 needs 78, Decimal256 holds 76)', async () => {
    const r = await cliHereBytes(['query', '--lake', demo, '--format', 'arrow', `${TOP_RECEIVERS.replace(' LIMIT 5', '')}`]);
    expect(r.code, r.stderr).toBe(0);
    const t = tableFromIPC(r.stdout);
    expect(t.schema.fields.find((f) => f.name === 'received')!.type.typeId).toBe(Type.Utf8);
    const want = exactSums(await json(DIGITS)).top;
    expect(t.toArray().slice(0, 5).map((row) => ({ to_address: row.to_address, received: row.received }))).toEqual(want);
  });
});

describe('SQL that opens with a comment', () => {
  it('is the query, not a flag', async () => {
    expect(sqlAfterDashes(['query', '-- top senders\nSELECT 1', '--format', 'csv'])).toEqual(['query', '--format', 'csv', '--', '-- top senders\nSELECT 1']);
    expect(sqlAfterDashes(['query', '--format', 'csv', 'SELECT 1'])).toEqual(['query', '--format', 'csv', 'SELECT 1']);
    expect(sqlAfterDashes(['status', '-- x'])).toEqual(['status', '-- x']);
    const r = await cliHere(['query', '--lake', lake, '-- the answer\nSELECT 42 AS answer', '--format', 'csv']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('answer\n42\n');
  });
});

describe("query's arguments read without yargs (start-up)", () => {
  /** What yargs hands query's handler for `args`, as main.ts declares the command. */
  async function byYargs(args: string[]): Promise<unknown> {
    let got: Record<string, unknown> | undefined;
    const command = { ...queryCommand(() => {}), handler: (a: Record<string, unknown>) => void (got = a) };
    await yargs(args).scriptName('chainlake').option('lake', LAKE_OPTION).command(command as unknown as CommandModule).strict().exitProcess(false).parseAsync();
    return got;
  }

  it('are what yargs hands the handler, flag for flag', async () => {
    const plain = [
      ['query', 'SELECT 1'],
      ['query', 'SELECT 1', '--lake', 'x', '--format=csv', '-i', '--no-warehouse'],
      ['query', '--file', 'f.sql', '--warehouse', 'w.duckdb', '--format', 'arrow'],
      ['query', '--interactive', '--lake=s3://b/p'],
      ['query', '--format', 'json', '--', '-- a comment\nSELECT 1'],
    ];
    for (const args of plain) expect(plainQueryArgs(args), args.join(' ')).toEqual(await byYargs(args));
  });

  it('leaves to yargs every argument it would not read as yargs does (yargs then says what is wrong)', () => {
    const left = [
      ['query', 'SELECT 1', '--help'],
      ['query', '--version'],
      ['query', 'SELECT 1', '--format', 'xml'],
      ['query', 'SELECT 1', '--formt', 'csv'],
      ['query', '--file'],
      ['query', '--file', '--format', 'csv'],
      ['query', 'SELECT 1', '--lake', 'a', '--lake', 'b'],
      ['query', '-i', '--interactive'],
      ['query', 'SELECT 1', 'SELECT 2'],
      ['query', '--interactive=true'],
      ['query', 'SELECT 1', '--', 'SELECT 2'],
      ['status', '--lake', 'x'],
    ];
    for (const args of left) expect(plainQueryArgs(args), args.join(' ')).toBeUndefined();
  });
});
