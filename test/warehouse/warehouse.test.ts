// The warehouse file (`chainlake warehouse`, and the rewrite after run, compact and rebuild), read
// as an analyst's tool reads it: from a new DuckDB instance in a separate Node process that imports
// only @duckdb/node-api, opened read-only, in a time zone other than UTC. What it shows is what
// `chainlake query` shows. Someone else's file at the path is never replaced, and a connection open
// on the old file keeps working across a rewrite.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parse, stringify } from 'yaml';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { METRICS } from '../../src/streams/chain_metrics.js';
import { openWarehouse, LAKE_TABLES } from '../../src/warehouse/views.js';
import { query } from '../../src/warehouse/query.js';
import { writeWarehouse } from '../../src/warehouse/file.js';
import { lakeFile } from '../../src/state/cache.js';
import { StateStore } from '../../src/state/store.js';
import { cliHere, DEMO_TABLES, lakeOf, sharedDemoLake } from '../lake-fixture.js';
import { openReader, openReaders, rowsOf, type Answer, type Row } from './reader.js';
import { DIGITS, exactSums, SUM_PER_TOKEN, TOP_RECEIVERS } from './sums.js';


const SQL_FILES = readdirSync('sql').filter((f) => f.endsWith('.sql')).sort();
const VIEWS = [...LAKE_TABLES.map((d) => d.table), '_runs', '_rejects'];
const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const readers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (readers.length) await readers.pop()!.close();
});
// The outside reader of every test's file but those a test holds open: one process, each file opened anew.
let outside: Awaited<ReturnType<typeof openReaders>>;
beforeAll(async () => {
  outside = await openReaders();
});
afterAll(() => outside.close());

/** The pipeline of the demo's streams of `tables`, as a YAML file (for `chainlake run --simulator`). */
function pipelineFile(dir: string, name: string, tables: string[]): string {
  const doc = parse(readFileSync('pipelines/demo.yaml', 'utf8')) as { name: string; streams: Array<{ table: string }> };
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, stringify({ ...doc, name, streams: doc.streams.filter((s) => tables.includes(s.table)) }));
  return file;
}

/** The row count of each of `views` over `lake`'s files (the views of those alone bound: the others read footers for nothing). */
async function counts(lake: string, views: readonly string[] = VIEWS): Promise<Record<string, number>> {
  const conn = await openWarehouse(lake, {}, views === VIEWS ? undefined : new Set(views));
  try {
    const out: Record<string, number> = {};
    for (const v of views) out[v] = Number((await query(conn, `SELECT count(*) AS n FROM "${v}"`)).rows[0]!.n);
    return out;
  } finally {
    conn.closeSync();
  }
}

const countSql = (v: string) => `SELECT count(*) AS n FROM "${v}"`;
const listing = (dir: string) => readdirSync(dir).sort();
const QUERY_NAMES = SQL_FILES.map((f) => f.replace(/\.sql$/, ''));

/**
 * What the tests of the file `chainlake warehouse` writes ask the outside reader, by test: they read
 * the same file, unchanged, so one reader process answers them all.
 */
const ASKED = {
  counts: VIEWS.map(countSql),
  queries: QUERY_NAMES.map((n) => `SELECT * FROM "${n}"`),
  zone: [`SELECT count(*) AS n FROM chain_metrics WHERE time_interval = 'day' AND CAST(timestamp AS DATE) <> CAST(timestamp AT TIME ZONE 'UTC' AS DATE)`],
  pivot: ["SELECT column_name FROM duckdb_columns() WHERE table_name = 'metrics_daily_pivot' ORDER BY column_index"],
  amounts: ['SELECT value, value_raw FROM erc_transfers WHERE value_raw IS NOT NULL'],
  sums: [DIGITS, SUM_PER_TOKEN, TOP_RECEIVERS],
  marker: [
    'SELECT lake, chainlake_version, written_at <= now() AS past FROM _chainlake',
    "SELECT view_name, comment FROM duckdb_views() WHERE view_name IN ('top_senders', 'erc_transfers') ORDER BY view_name",
  ],
};

/** The reader's answers to ASKED's SQL of `file`, by test, from one reader process. */
async function readAsked(file: string): Promise<Record<keyof typeof ASKED, Answer[]>> {
  const all = await outside.read(file, Object.values(ASKED).flat());
  let at = 0;
  return Object.fromEntries(Object.entries(ASKED).map(([k, sqls]) => [k, all.slice(at, (at += sqls.length))])) as Record<keyof typeof ASKED, Answer[]>;
}

describe('chainlake warehouse', () => {
  let dir: string;
  let lake: string;
  let file: string;
  let asked: Awaited<ReturnType<typeof readAsked>>;

  beforeAll(async () => {
    // The tests' own files go in `dir`; the lake, which they only read, is shared, and the file
    // goes where `chainlake warehouse` puts it by default, next to it.
    dir = mkdtempSync(join(tmpdir(), 'cl-warehouse-'));
    lake = await sharedDemoLake();
    // Views only: these tests hold the views over the Parquet files (a new file's default, rows,
    // is rows.test.ts's).
    const r = await cliHere(['warehouse', '--lake', lake, '--no-rows']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    file = `${lake}.warehouse.duckdb`;
    expect(r.stdout).toBe(`wrote the warehouse file ${file} (${VIEWS.length} table views, ${SQL_FILES.length} bundled query views)\n`);
    asked = await readAsked(file);
  });

  it('holds a view per table, _runs and _rejects, with the rows `chainlake query` sees', async () => {
    const expected = await counts(lake);
    // The demo tables have rows, so equal counts are not zeros agreeing.
    for (const t of [...DEMO_TABLES, '_runs']) expect(expected[t], t).toBeGreaterThan(0);
    const got = asked.counts.map((a) => Number(rowsOf(a)[0]!.n));
    expect(Object.fromEntries(VIEWS.map((v, i) => [v, got[i]]))).toEqual(expected);
  });

  it('holds every bundled query as a view of its name, with the rows of `chainlake query --file`, in another time zone', async () => {
    const conn = await openWarehouse(lake);
    const expected: Row[][] = [];
    try {
      for (const f of SQL_FILES) expected.push((await query(conn, readFileSync(join('sql', f), 'utf8'))).rows);
    } finally {
      conn.closeSync();
    }
    const got = asked.queries.map(rowsOf);
    for (const [i, n] of QUERY_NAMES.entries()) {
      expect(expected[i]!.length, n).toBeGreaterThan(0);
      expect(got[i], n).toEqual(expected[i]);
    }
    // And as the CLI prints it.
    const r = await cliHere(['query', '--lake', lake, '--file', 'sql/top_senders.sql', '--format', 'json']);
    expect(r.code).toBe(0);
    expect(got[QUERY_NAMES.indexOf('top_senders')]).toEqual(JSON.parse(r.stdout));
  });

  it("the reader's zone moves day boundaries of SQL that does not name UTC (so the equality above is a real check)", () => {
    const [moved] = asked.zone.map(rowsOf);
    expect(Number(moved![0]!.n)).toBeGreaterThan(0);
  });

  it('metrics_daily_pivot has a column per declared metric, whatever the lake holds', () => {
    const [cols] = asked.pivot.map(rowsOf);
    expect(cols!.map((c) => c.column_name)).toEqual(['chain_id', 'day', ...METRICS]);
  });

  it('keeps amounts exact: every value equals its _raw digits, over 38 digits too', () => {
    const [rows] = asked.amounts.map(rowsOf);
    expect(rows!.length).toBeGreaterThan(0);
    // Digits beyond a double's precision, and beyond DECIMAL(38,0): a rounded copy, or a NULL, would not match.
    expect(rows!.some((r) => String(r.value).length > 38)).toBe(true);
    for (const r of rows!) expect(BigInt(r.value as string)).toBe(BigInt(r.value_raw as string));
  });

  it('sums amounts as an analyst writes them: sum(value) per token and the top receivers by amount are exact', () => {
    const [digits, perToken, top] = asked.sums.map(rowsOf);
    const want = exactSums(digits!);
    expect(perToken).toEqual(want.perToken);
    expect(top).toEqual(want.top);
  });

  it('a rewrite that would change nothing leaves the file as it is; a new file in a table folder, or the first run report, is rewritten in', async () => {
    const copy = join(dir, 'unchanged');
    const at = lakeOf(['avg_tps'], lake, join(copy, 'lake'));
    const out = `${at}.warehouse.duckdb`;
    const write = async () => (await writeWarehouse(at, { flag: '--out', rows: false })).unchanged;
    const stat = () => `${statSync(out).ino}/${statSync(out).mtimeMs}`;
    expect(await write()).toBeUndefined();
    const first = stat();
    expect(await write()).toBe(true);
    const same = await cliHere(['warehouse', '--lake', at]);
    expect(same).toMatchObject({ code: 0, stderr: '' });
    expect(same.stdout).toBe(`the warehouse file ${out} is up to date: it was written for the lake's committed files as they are, so it was left as it is\n`);
    // Another run's report: the _runs view reads every report there is, so nothing to rewrite.
    const runs = join(at, '_runs');
    const reports = readdirSync(runs).filter((f) => f.endsWith('.json'));
    cpSync(join(runs, reports[0]!), join(runs, `z-${reports[0]}`));
    expect(await write()).toBe(true);
    expect(stat()).toBe(first);
    expect(rowsOf((await outside.read(out, [countSql('_runs')]))[0])[0]!.n).toBe(String(reports.length + 1));
    // The lake's first report (the view was a placeholder without one): rewritten.
    rmSync(runs, { recursive: true });
    expect(await write()).toBeUndefined();
    cpSync(join(lake, '_runs'), runs, { recursive: true });
    expect(await write()).toBeUndefined();
    expect(await write()).toBe(true);
    // A new file in a table's folder: rewritten, and read.
    const n = Number(rowsOf((await outside.read(out, [countSql('avg_tps')]))[0])[0]!.n);
    const [one] = readdirSync(join(at, 'avg_tps'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.parquet'));
    cpSync(join(at, 'avg_tps', one!), join(at, 'avg_tps', `${one!.replace(/\.parquet$/, '')}-again.parquet`));
    expect(await write()).toBeUndefined();
    expect(Number(rowsOf((await outside.read(out, [countSql('avg_tps')]))[0])[0]!.n)).toBeGreaterThan(n);
    expect(await write()).toBe(true);
  });

  it('carries its marker and the queries\' comments', () => {
    const [marker, comments] = asked.marker.map(rowsOf);
    expect(marker).toEqual([{ lake: resolve(lake), chainlake_version: VERSION, past: true }]);
    const topSenders = readFileSync('sql/top_senders.sql', 'utf8').split('\n')[0]!.replace(/^-- /, '');
    expect(comments![0]).toEqual({ view_name: 'erc_transfers', comment: LAKE_TABLES.find((d) => d.table === 'erc_transfers')!.doc });
    expect(String(comments![1]!.comment)).toContain(topSenders);
    expect(String(comments![1]!.comment)).toContain('sql/top_senders.sql');
  });

  it('refuses to replace a file chainlake did not write, and leaves it as it was', async () => {
    const text = join(dir, 'notes.duckdb');
    writeFileSync(text, 'my notes\n');
    const own = join(dir, 'own.duckdb');
    const db = await DuckDBInstance.create(own);
    const conn = await db.connect();
    await conn.run('CREATE TABLE mine AS SELECT 42 AS answer');
    conn.closeSync();
    db.closeSync();
    for (const [f, why] of [
      [text, 'is not a DuckDB database'],
      [own, "is a DuckDB database without chainlake's _chainlake table"],
    ] as const) {
      const before = readFileSync(f);
      const files = listing(dir);
      const r = await cliHere(['warehouse', '--lake', lake, '--out', f]);
      expect(r.code, f).toBe(2);
      expect(r.stderr).toContain(`--out ${f}: ${why}`);
      expect(r.stderr).toContain('refusing to replace it');
      expect(readFileSync(f).equals(before)).toBe(true);
      expect(listing(dir)).toEqual(files);
    }
    expect(rowsOf((await outside.read(own, ['SELECT answer FROM mine']))[0])).toEqual([{ answer: 42 }]);
    // A run checks before it starts: nothing fetched, no lake made.
    const newLake = join(dir, 'lake-refused');
    const r = await cliHere(['run', pipelineFile(dir, 'refused', ['avg_tps']), '--simulator', '--lake', newLake, '--warehouse', own]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--warehouse ${own}: is a DuckDB database without chainlake's _chainlake table`);
    expect(existsSync(newLake)).toBe(false);
  });

  it('exits 2 on an --out in a missing folder or in the lake, naming it, and writes nothing', async () => {
    const files = listing(dir);
    const missing = join(dir, 'no-such-folder', 'w.duckdb');
    expect(await cliHere(['warehouse', '--lake', lake, '--out', missing])).toMatchObject({ code: 2, stderr: expect.stringContaining(`--out ${missing}: the folder ${join(dir, 'no-such-folder')} does not exist`) });
    const inLake = join(lake, 'w.duckdb');
    expect(await cliHere(['warehouse', '--lake', lake, '--out', inLake])).toMatchObject({ code: 2, stderr: expect.stringContaining(`--out ${inLake}: is inside the lake`) });
    expect(await cliHere(['warehouse', '--lake', lake, '--out', dir])).toMatchObject({ code: 2, stderr: expect.stringContaining('is a folder') });
    expect(await cliHere(['warehouse', '--lake', join(dir, 'no-lake')])).toMatchObject({ code: 2, stderr: expect.stringContaining('no such folder') });
    expect(listing(dir)).toEqual(files);
    expect(existsSync(inLake)).toBe(false);
  });

  it('a failure while building leaves the old file and no temporary file (exit 1)', async () => {
    const broken = lakeOf(['avg_tps'], lake, join(dir, 'broken'));
    const out = join(dir, 'broken.duckdb');
    expect((await cliHere(['warehouse', '--lake', broken, '--out', out, '--no-rows'])).code).toBe(0);
    const before = readFileSync(out);
    // Not Parquet: making the view reads every file's schema, and this one has none.
    writeFileSync(join(broken, 'avg_tps', 'garbage.parquet'), 'not parquet');
    const files = listing(dir);
    const r = await cliHere(['warehouse', '--lake', broken, '--out', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`--out ${out}: not written:`);
    expect(readFileSync(out).equals(before)).toBe(true);
    expect(listing(dir)).toEqual(files);
  });
});

describe("an outside reader after compact --retention and a rerun: the README's way", () => {
  let dir: string;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the warehouse file, as the README opens it, gives exactly the committed rows; a glob over the table folder does not, and the README no longer says it does', async () => {
    dir = mkdtempSync(join(tmpdir(), 'cl-outside-'));
    const lake = join(dir, 'lake');
    const pipeline = pipelineFile(dir, 'kept', ['erc_transfers']);
    // Small batches: many files for the compaction to replace, kept for the older snapshots.
    const run = async (...more: string[]) => expect(await cliHere(['run', pipeline, '--simulator', '--quiet', '--flush-rows', '50', '--lake', lake, ...more])).toMatchObject({ code: 0, stderr: '' });
    // The file the recipe reads is the last run's: the commands before it write none.
    await run('--no-warehouse');
    expect((await cliHere(['compact', '--lake', lake, '--retention', '6h', '--no-warehouse'])).code).toBe(0);
    await run();
    const committed = new StateStore(lake).statesOf('erc_transfers').reduce((n, s) => n + s.rows, 0);
    expect(committed).toBeGreaterThan(0);
    expect((await counts(lake, ['erc_transfers'])).erc_transfers).toBe(committed);
    const [globbed] = (await outside.read(`${lake}.warehouse.duckdb`, [`SELECT count(*) AS n FROM read_parquet('${join(lake, 'erc_transfers', '**', '*.parquet')}')`])).map(rowsOf);
    expect(Number(globbed![0]!.n)).toBeGreaterThan(committed);

    const readme = readFileSync('README.md', 'utf8');
    expect(readme).not.toMatch(/\*\*\/\*\.parquet'\)[^.]*\s+see exactly the committed rows/);
    const recipe = /duckdb -readonly data\/lake\.warehouse\.duckdb -c "(SELECT count\(\*\) FROM erc_transfers)"/.exec(readme);
    expect(recipe).not.toBeNull();
    const [answer] = (await outside.read(`${lake}.warehouse.duckdb`, [recipe![1]!])).map(rowsOf);
    expect(Object.values(answer![0]!).map(Number)).toEqual([committed]);
  });
});

describe('two lakes in one folder', () => {
  let dir: string;
  let a: string;
  let b: string;

  beforeAll(async () => {
    // Lake b: lake a without erc_transfers (its states and files gone).
    dir = mkdtempSync(join(tmpdir(), 'cl-two-lakes-'));
    const shared = await sharedDemoLake();
    a = lakeOf(['erc_transfers', 'avg_tps'], shared, join(dir, 'a'));
    b = lakeOf(['avg_tps'], shared, join(dir, 'b'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const transfers = async (file: string) => Number(rowsOf((await outside.read(file, [countSql('erc_transfers')]))[0])[0]!.n);
  const lakeIn = async (file: string) => rowsOf((await outside.read(file, ['SELECT lake FROM _chainlake']))[0])[0]!.lake;

  it('get a warehouse file and a report each, named after the lake, each answering for its own lake', async () => {
    for (const l of [a, b]) {
      expect(await cliHere(['warehouse', '--lake', l])).toMatchObject({ code: 0, stderr: '', stdout: expect.stringContaining(`wrote the warehouse file ${l}.warehouse.duckdb (`) });
      expect(await cliHere(['report', '--lake', l])).toMatchObject({ code: 0, stderr: '', stdout: expect.stringContaining(`wrote ${l}.report.html (`) });
    }
    expect(listing(dir)).toEqual(['a', 'a.report.html', 'a.warehouse.duckdb', 'b', 'b.report.html', 'b.warehouse.duckdb']);
    const rows = (await counts(a, ['erc_transfers'])).erc_transfers;
    expect(rows).toBeGreaterThan(0);
    expect(await transfers(`${a}.warehouse.duckdb`)).toBe(rows);
    expect(await transfers(`${b}.warehouse.duckdb`)).toBe(0);
    expect([await lakeIn(`${a}.warehouse.duckdb`), await lakeIn(`${b}.warehouse.duckdb`)]).toEqual([a, b]);
    expect(readFileSync(`${a}.report.html`, 'utf8')).toContain(`lake ${a} `);
    expect(readFileSync(`${b}.report.html`, 'utf8')).toContain(`lake ${b} `);
    // The query's default file is the lake's own: a's copy of the rows is never read for b.
    expect(await cliHere(['query', '--lake', b, '--format', 'csv', 'SELECT count(*) AS n FROM erc_transfers'])).toMatchObject({ code: 0, stdout: 'n\n0\n' });
  });

  it("another lake's file is refused, named or default, before any work, naming both lakes; the file is untouched", async () => {
    const file = `${a}.warehouse.duckdb`;
    const before = readFileSync(file);
    const files = listing(dir);
    const refused = (flag: string) => `${flag} ${file}: is the warehouse file of another lake, ${a} (this one is ${b}); refusing to replace it (name another file`;
    const w = await cliHere(['warehouse', '--lake', b, '--out', file]);
    expect(w).toMatchObject({ code: 2, stdout: '' });
    expect(w.stderr).toContain(refused('--out'));
    expect(w.stderr).toContain(`or delete the file if ${a} no longer needs it)`);
    const c = await cliHere(['compact', '--lake', b, '--warehouse', file]);
    expect(c).toMatchObject({ code: 2, stdout: '' });
    expect(c.stderr).toContain(refused('--warehouse'));
    // The default file of b, copied over from a (a lake's files copied by hand): refused too.
    cpSync(file, `${b}.warehouse.duckdb`);
    const d = await cliHere(['warehouse', '--lake', b]);
    expect(d).toMatchObject({ code: 2, stdout: '' });
    expect(d.stderr).toContain(`the warehouse file ${b}.warehouse.duckdb: is the warehouse file of another lake, ${a} (this one is ${b}); refusing to replace it (name another file with --out FILE`);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readFileSync(`${b}.warehouse.duckdb`).equals(before)).toBe(true);
    expect(listing(dir)).toEqual(files);
    expect(await transfers(file)).toBeGreaterThan(0);
  });

  it('an s3:// lake has its own names too, in the current folder: per bucket, prefix and endpoint', () => {
    const names = ['s3://one/team/lake', 's3://two/team/lake', 's3://one/other/lake', 's3://one/team/lake/'].map((u) => lakeFile(u, 'report.html'));
    expect(names[0]).toMatch(new RegExp(`^${process.cwd()}/lake-[0-9a-f]{8}\\.report\\.html$`));
    expect(new Set(names.slice(0, 3)).size).toBe(3);
    expect(names[3]).toBe(names[0]);
    const at = (endpoint: string) => {
      const was = process.env.AWS_ENDPOINT_URL_S3;
      process.env.AWS_ENDPOINT_URL_S3 = endpoint;
      try {
        return lakeFile('s3://one/team/lake', 'report.html');
      } finally {
        if (was === undefined) delete process.env.AWS_ENDPOINT_URL_S3;
        else process.env.AWS_ENDPOINT_URL_S3 = was;
      }
    };
    expect(at('http://127.0.0.1:9000')).not.toBe(at('http://127.0.0.1:9001'));
    expect(lakeFile('s3://one', 'warehouse.duckdb')).toMatch(/\/one-[0-9a-f]{8}\.warehouse\.duckdb$/);
  });
});

describe('the warehouse file across runs, compaction, rebuilds and a moved lake', () => {
  let dir: string;
  let lake: string;
  let file: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cl-warehouse-runs-'));
    lake = join(dir, 'lake');
    file = join(dir, 'lake.warehouse.duckdb');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('`chainlake run` writes it, and a later run rewrites it; a connection open on the old file keeps working', async () => {
    const first = await cliHere(['run', pipelineFile(dir, 'first', ['avg_tps']), '--simulator', '--quiet', '--lake', lake]);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toContain(`wrote the warehouse file ${file} (`);
    // A new lake's file holds its rows.
    expect(first.stdout).toContain('  with the rows of 1 tables: the rows of ');
    const [avg, transfers] = (await outside.read(file, [countSql('avg_tps'), countSql('erc_transfers')])).map((a) => Number(rowsOf(a)[0]!.n));
    expect(avg).toBe((await counts(lake, ['avg_tps'])).avg_tps);
    expect(avg).toBeGreaterThan(0);
    expect(transfers).toBe(0);

    const open = await openReader(file, 'READ_ONLY');
    readers.push(open);
    const writtenAt = rowsOf(await open.ask('SELECT written_at FROM _chainlake'))[0]!.written_at;

    const second = await cliHere(['run', pipelineFile(dir, 'second', ['erc_transfers']), '--simulator', '--quiet', '--lake', lake]);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    const expected = (await counts(lake, ['erc_transfers'])).erc_transfers;
    expect(expected).toBeGreaterThan(0);
    // A new reader sees the table the second run added.
    expect(Number(rowsOf((await outside.read(file, [countSql('erc_transfers')]))[0])[0]!.n)).toBe(expected);
    // The open connection still reads the file it opened (its view of erc_transfers was made when
    // the table had no files): no error, the old marker, the old empty view.
    expect(rowsOf(await open.ask('SELECT written_at FROM _chainlake'))).toEqual([{ written_at: writtenAt }]);
    expect(rowsOf(await open.ask(countSql('erc_transfers')))).toEqual([{ n: '0' }]);
    expect(Number(rowsOf(await open.ask(countSql('avg_tps')))[0]!.n)).toBe(avg);
    // Reopened, it sees the new file.
    rowsOf(await open.ask('reopen'));
    expect(Number(rowsOf(await open.ask(countSql('erc_transfers')))[0]!.n)).toBe(expected);
    expect(rowsOf(await open.ask('SELECT written_at FROM _chainlake'))).not.toEqual([{ written_at: writtenAt }]);
    // No temporary file is left next to it.
    expect(readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('compact and rebuild rewrite it when the lake changed, else leave it; --warehouse names another file and --no-warehouse skips it', async () => {
    const mark = async () => rowsOf((await outside.read(file, ['SELECT written_at FROM _chainlake']))[0])[0]!.written_at as string;
    expect((await cliHere(['compact', '--lake', lake])).code).toBe(0);
    const before = await mark();
    // Compacted already: nothing to merge, and the file is the lake's as it is.
    const idle = await cliHere(['compact', '--lake', lake]);
    expect(idle.code).toBe(0);
    expect(idle.stdout).toContain(`the warehouse file ${file} is up to date`);
    expect(await mark()).toBe(before);

    const other = join(dir, 'other.duckdb');
    const rebuilt = await cliHere(['rebuild', 'avg_tps', '--lake', lake, '--warehouse', other]);
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stdout).toContain(`wrote the warehouse file ${other} (`);
    expect(await mark()).toBe(before);
    expect(Number(rowsOf((await outside.read(other, [countSql('avg_tps')]))[0])[0]!.n)).toBeGreaterThan(0);
    // The rebuild's new files are not what the default file was written for: the next command rewrites it.
    const compacted = await cliHere(['compact', '--lake', lake]);
    expect(compacted.code).toBe(0);
    expect(compacted.stdout).toContain(`wrote the warehouse file ${file} (`);
    expect((await mark()) > before).toBe(true);

    const mtime = statSync(file).mtimeMs;
    const skipped = await cliHere(['compact', '--lake', lake, '--no-warehouse']);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).not.toContain('warehouse');
    expect(statSync(file).mtimeMs).toBe(mtime);
  });

  it('a file open for writing elsewhere: `chainlake warehouse` exits 1 naming it; a run still succeeds, with a warning', async () => {
    const writer = await openReader(file, 'READ_WRITE');
    readers.push(writer);
    const r = await cliHere(['warehouse', '--lake', lake]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the warehouse file ${file}: is open for writing in another program`);
    const run = await cliHere(['run', pipelineFile(dir, 'third', ['avg_tps']), '--simulator', '--quiet', '--lake', lake]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^run \S+ of third: ok/);
    expect(run.stderr).toContain(`chainlake: warning: the warehouse file ${file}: is open for writing in another program`);
    expect(run.stderr).toContain(`\`chainlake warehouse --lake ${lake}\` writes the file`);
    // What the writer holds is untouched.
    expect(rowsOf(await writer.ask('SELECT count(*) AS n FROM _chainlake'))).toEqual([{ n: '1' }]);
  });

  it('after the lake moves, the old file fails naming the old path, and `chainlake warehouse --lake NEW` fixes it', async () => {
    // A views-only file reads the lake's files by path; the default file holds the rows.
    const views = join(dir, 'views.duckdb');
    expect(await cliHere(['warehouse', '--lake', lake, '--out', views, '--no-rows'])).toMatchObject({ code: 0, stderr: '' });
    const held = Number(rowsOf((await outside.read(file, [countSql('avg_tps')]))[0])[0]!.n);
    const moved = join(dir, 'moved', 'lake');
    mkdirSync(join(dir, 'moved'));
    cpSync(lake, moved, { recursive: true });
    rmSync(lake, { recursive: true });
    const [gone] = await outside.read(views, [countSql('avg_tps')]);
    expect(gone).toMatchObject({ error: expect.stringContaining(join(lake, 'avg_tps')) });
    expect((gone as { error: string }).error).toMatch(/No files found/);
    // The rows are the file's own: it still answers, as of its last rewrite.
    expect(Number(rowsOf((await outside.read(file, [countSql('avg_tps')]))[0])[0]!.n)).toBe(held);

    const r = await cliHere(['warehouse', '--lake', moved, '--out', file]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    // The file was of the lake at its old place, which holds no lake now: replaced, and said so.
    expect(r.stdout).toContain(`\n  it replaced the warehouse file of ${lake}, which holds no lake any more (moved or deleted)\n`);
    const [n, marker] = (await outside.read(file, [countSql('avg_tps'), 'SELECT lake FROM _chainlake'])).map(rowsOf);
    expect(Number(n![0]!.n)).toBeGreaterThan(0);
    expect(marker).toEqual([{ lake: moved }]);
  });
});
