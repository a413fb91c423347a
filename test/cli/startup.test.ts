// Start-up (issue 38). `chainlake query` of plainly valid arguments starts without yargs and the
// other commands' modules (src/cli/plain.ts): loading them and letting yargs parse was most of its
// start-up past DuckDB's own. yargs fails here: a query that went through it would fail with it.
// The library makes a table's view when a query first names it, not every view at the open.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';

vi.mock('yargs', () => ({
  default: () => {
    throw new Error('yargs loaded');
  },
}));

// The modules a query of SQL naming no table has no use for, and that cost its start-up (node:crypto,
// p-queue, the state files' code): each records that it was loaded, and is otherwise itself. The
// library (which reads state) and yargs' commands load them: the test of the query comes first.
const heavy = vi.hoisted(() => [] as string[]);
vi.mock('../../src/state/s3.js', async (original) => (heavy.push('state/s3'), original()));
vi.mock('../../src/state/cache.js', async (original) => (heavy.push('state/cache'), original()));
vi.mock('../../src/state/store.js', async (original) => (heavy.push('state/store'), original()));
vi.mock('../../src/pipeline/report.js', async (original) => (heavy.push('pipeline/report'), original()));

const lake = mkdtempSync(join(tmpdir(), 'cl-startup-'));
mkdirSync(join(lake, '_state'));

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

/** main's exit code and what it wrote. */
async function run(argv: string[]): Promise<{ code: unknown; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((stdout += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((stderr += String(s)), true));
  await main(argv);
  return { code: process.exitCode, stdout, stderr };
}

it('a query of SQL naming no table loads neither the object store, the state files nor the run report, and still refuses a missing lake', async () => {
  expect(await run(['query', 'SELECT 42 AS answer', '--lake', lake, '--format', 'csv'])).toEqual({ code: 0, stdout: 'answer\n42\n', stderr: '' });
  expect(heavy).toEqual([]);
  expect(await run(['query', 'SELECT 1', '--lake', join(lake, 'missing')])).toEqual({ code: 2, stdout: '', stderr: `chainlake: --lake ${join(lake, 'missing')}: no such folder\n` });
  expect(await run(['query', 'SELECT 1', '--lake', tmpdir()])).toMatchObject({ code: 2, stderr: expect.stringContaining('no lake there') });
});

it('a query of plainly valid arguments runs without loading yargs', async () => {
  expect(await run(['query', 'SELECT 42 AS answer', '--lake', lake, '--format', 'csv', '--no-warehouse'])).toEqual({ code: 0, stdout: 'answer\n42\n', stderr: '' });
  expect(await run(['query', '--lake', lake, '-- the answer\nSELECT 42 AS answer', '--format=json'])).toEqual({ code: 0, stdout: '[\n {\n  "answer": 42\n }\n]\n', stderr: '' });
});

it('a query with a mistake in its arguments goes to yargs', async () => {
  const r = await run(['query', 'SELECT 1', '--lake', lake, '--format', 'xml']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('yargs loaded');
});

it("the library reads no table's files before a query names it: a query of one table succeeds beside another's unreadable file", async () => {
  const other = mkdtempSync(join(tmpdir(), 'cl-startup-'));
  for (const dir of ['_state', 'erc_transfers', 'internal_transactions']) mkdirSync(join(other, dir));
  const db = await DuckDBInstance.create(':memory:');
  try {
    const conn = await db.connect();
    await conn.run(`COPY (SELECT range AS block_number, 'tx' || range AS tx_hash FROM range(5)) TO '${join(other, 'erc_transfers', 'a.parquet')}' (FORMAT parquet)`);
    conn.closeSync();
  } finally {
    db.closeSync();
  }
  writeFileSync(join(other, 'internal_transactions', 'broken.parquet'), 'not parquet');
  const { openLake } = await import('../../src/index.js');
  const lake = await openLake(other, { warehouse: false });
  try {
    const count = async () => (await lake.query('SELECT count(*) AS n FROM erc_transfers')).toArray().map((r) => Number(r.n));
    expect(await count()).toEqual([5]);
    await expect(lake.query('SELECT count(*) FROM internal_transactions')).rejects.toThrow(/broken\.parquet/);
    expect(await count()).toEqual([5]);
  } finally {
    lake.close();
  }
});

it("`chainlake query` and the library load DuckDB's JavaScript from one bundled file, not the package's files one by one", () => {
  // A preloaded script lists, as the process exits, the CommonJS files it loaded from DuckDB's
  // JavaScript package and the bundled copy beside the CLI's and the library's bundles.
  const dir = mkdtempSync(join(tmpdir(), 'cl-startup-'));
  const hook = join(dir, 'loaded.cjs');
  writeFileSync(
    hook,
    `process.on('exit', () => process.stderr.write('LOADED ' + JSON.stringify(Object.keys(require.cache).filter((f) => /node-api|duckdb-api/.test(f)).map((f) => f.replace(/.*node_modules\\//, '')))));`,
  );
  const loaded = (args: string[]): string[] => {
    const r = spawnSync(process.execPath, ['--require', hook, ...args], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(/LOADED (.*)$/s.exec(r.stderr)![1]!) as string[];
  };
  const bin = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));
  const cli = loaded([bin, 'query', 'SELECT 1', '--lake', lake, '--format', 'csv']);
  expect(cli.map((f) => relative(process.cwd(), f))).toEqual([join('dist', 'bin', 'duckdb-api.cjs')]);
  const library = join(dir, 'library.mjs');
  writeFileSync(library, `const { openLake } = await import(${JSON.stringify(pathToFileURL(join(process.cwd(), 'dist', 'index.js')).href)}); const l = await openLake(${JSON.stringify(lake)}); await l.query('SELECT 1'); l.close();`);
  expect(loaded([library]).map((f) => relative(process.cwd(), f))).toEqual([join('dist', 'lib', 'duckdb-api.cjs')]);
});
