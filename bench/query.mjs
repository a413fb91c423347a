#!/usr/bin/env node
// Analytics on a big lake (issue 24): every bundled query and six ad-hoc ones, timed through
// `chainlake query`, the library (openLake) and the warehouse file, against the same rows in one
// native DuckDB table; on the lake as a run leaves it and after `chainlake compact`; each way over
// a warehouse file with the rows (what a run writes by default; its write is timed too) and over
// the Parquet files (a views-only file, `chainlake warehouse --no-rows`, its catalogue of bounds
// and blooms read by the library and `chainlake query`; --no-rows times that way alone). Prints
// the tables and peak RSS; asserts nothing.
//   1. builds (or, with the same --rows, reuses) a lake of about --rows erc_transfers rows: the
//      simulator scaled up (bench/common.mjs), its contracts of chain 43114 fetched as block ranges
//      at once (chunks), as a backfill is; `chainlake run` writes it as users get it;
//   2. copies the rows into one DuckDB table (the reference: DuckDB's own speed on them);
//   3. times each query, each way, the minimum of --repeat runs, interleaved (one round of every
//      way, then the next), so that the machine's other work falls on all of them alike. The
//      CLI's figure leaves out its start-up (the time of `SELECT 1`, measured the same way);
//   4. compacts a copy of the lake and times the same again.
// --no-cli leaves out every process of a query (`chainlake query` and the native table in a
// process of its own): the library and the warehouse file against the native table, in minutes.
// --hourly N builds the lake instead as N hourly incremental runs leave it (issue 38: 168, a week):
// a backfill of about --rows at the world's start, then N runs, each after the simulator's world
// has advanced an hour (`chainlake sim --now`), each compacting at its end as a run does by default.
// --build-only stops after the build and the reference table. --merged-only times only the lakes
// whose files are merged (as a run leaves it, compacted), not the lake of a file a batch they are made
// from. With --hourly the lake as the hourly runs left it is timed, then compacted (no rerun).
// Usage: node bench/query.mjs [--rows 10000000] [--lake data/bench-query] [--hourly 168 [--run-warehouse]] [--build-only] [--repeat 3] [--only q1,q2] [--no-compact | --merged-only] [--no-cli] [--no-rows]
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { arg, bin, fmt, plan, root, startSim, timed, transfersPipeline } from './common.mjs';
import { defaultQueryMemory } from '../dist/load/limits.js';
import { WORLD_NOW } from '../dist/simulator/index.js';

const ROWS = Number(arg('rows', '10000000'));
const LAKE_ROOT = resolve(arg('lake', join(root, 'data', 'bench-query')));
const REPEAT = Number(arg('repeat', '3'));
const ONLY = arg('only', '')?.split(',').filter(Boolean) ?? [];
const CHUNKS = 8;
const HOURLY = arg('hourly', undefined) === undefined ? undefined : Number(arg('hourly', undefined));
// --run-warehouse: the hourly runs keep the lake's default warehouse file (with rows) as users'
// runs do, so their times include its upkeep; without it they write none.
const RUN_WAREHOUSE = process.argv.includes('--run-warehouse');
if (HOURLY !== undefined && !(Number.isInteger(HOURLY) && HOURLY >= 1)) throw new Error(`--hourly ${arg('hourly', undefined)}: a whole number of hours`);
const CLI = !process.argv.includes('--no-cli');
const ROWS_WAY = !process.argv.includes('--no-rows');
/**
 * Every DuckDB of the bench (the native table, the warehouse file) under the memory limit that
 * chainlake gives a query by default here (src/load/limits.ts), so that each way has the same
 * bound; a query that needs more spills in all of them alike.
 */
const MEMORY = defaultQueryMemory();

/** The lake of ROWS rows under LAKE_ROOT/run, built once; a marker says with what. */
async function buildLake() {
  const lake = join(LAKE_ROOT, 'run');
  const marker = join(LAKE_ROOT, 'built.json');
  const p = plan(ROWS);
  const want = { rows: ROWS, scale: p.scale, contracts: p.contracts.map((c) => c.address), chunks: CHUNKS, ...(HOURLY ? { hourly: HOURLY } : {}), ...(RUN_WAREHOUSE ? { runWarehouse: true } : {}) };
  if (existsSync(marker) && JSON.stringify(JSON.parse(readFileSync(marker, 'utf8')).want) === JSON.stringify(want)) {
    console.log(`reusing the lake in ${lake} (${fmt(p.total)} rows; delete ${LAKE_ROOT} to build it again)`);
    return lake;
  }
  rmSync(LAKE_ROOT, { recursive: true, force: true });
  mkdirSync(LAKE_ROOT, { recursive: true });
  if (HOURLY) {
    const built = await buildHourly(lake, p);
    writeFileSync(marker, JSON.stringify({ want, total: p.total, built }));
    return lake;
  }
  const sim = await startSim(p.scale);
  try {
    const pipeline = join(LAKE_ROOT, 'pipeline.yaml');
    writeFileSync(pipeline, transfersPipeline(sim.url, p.contracts, { chunks: CHUNKS }));
    console.log(`building a lake of ${fmt(p.total)} erc_transfers rows (${p.contracts.length} contracts, scale ${p.scale}) in ${lake} ...`);
    // Its batch files as they were committed: the other lakes are made from copies of it.
    const r = await timed(['run', pipeline, '--lake', lake, '--log-level', 'warn', '--no-warehouse', '--no-compact']);
    console.log(`  built in ${r.seconds.toFixed(0)} s, peak RSS ${fmt(r.rssMB)} MB`);
  } finally {
    sim.stop();
  }
  writeFileSync(marker, JSON.stringify({ want, total: p.total }));
  return lake;
}

/**
 * The lake as HOURLY hourly runs leave it: the backfill at the world's start (WORLD_NOW), then a
 * run an hour of the world later, each against a simulator whose world stands at that hour (a run
 * sees what the services serve then, nothing newer). Each run as a user's cron runs it: default
 * compaction at its end; no warehouse file, as the lake of the one backfill above (with
 * --run-warehouse: the default one, with rows, kept by each run).
 */
async function buildHourly(lake, p) {
  const pipeline = join(LAKE_ROOT, 'pipeline.yaml');
  const times = [];
  const t0 = performance.now();
  console.log(`building a lake of ${fmt(p.total)} erc_transfers rows then ${HOURLY} hourly runs (${p.contracts.length} contracts, scale ${p.scale}) in ${lake} ...`);
  for (let hour = 0; hour <= HOURLY; hour++) {
    const sim = await startSim(p.scale, ['--now', String(WORLD_NOW + hour * 3600)]);
    try {
      writeFileSync(pipeline, transfersPipeline(sim.url, p.contracts, { chunks: CHUNKS }));
      const r = await timed(['run', pipeline, '--lake', lake, '--log-level', 'warn', ...(RUN_WAREHOUSE ? [] : ['--no-warehouse'])]);
      times.push({ hour, seconds: r.seconds, cpuSeconds: r.cpuSeconds, rssMB: r.rssMB });
      if (hour === 0) console.log(`  backfill in ${r.seconds.toFixed(0)} s, peak RSS ${fmt(r.rssMB)} MB`);
      else if (hour % 24 === 0) console.log(`  hour ${hour}: ${filesOf(lake)} files, runs ${(times.slice(-24).reduce((s, t) => s + t.seconds, 0) / 24).toFixed(1)} s each over the last day`);
    } finally {
      sim.stop();
    }
  }
  const hourly = times.slice(1);
  const built = {
    seconds: (performance.now() - t0) / 1000,
    backfill: times[0],
    hourlyRuns: { count: hourly.length, seconds: hourly.reduce((s, t) => s + t.seconds, 0), cpuSeconds: hourly.reduce((s, t) => s + t.cpuSeconds, 0), maxRssMB: Math.max(...hourly.map((t) => t.rssMB)) },
    files: filesOf(lake),
  };
  console.log(`  built in ${built.seconds.toFixed(0)} s: ${HOURLY} hourly runs ${built.hourlyRuns.seconds.toFixed(0)} s (CPU ${built.hourlyRuns.cpuSeconds.toFixed(0)} s), ${built.files} Parquet files`);
  return built;
}

/** The lake's Parquet files, every table. */
function filesOf(lake) {
  return readdirSync(lake, { recursive: true }).filter((f) => String(f).endsWith('.parquet')).length;
}

/** The bundled queries that read erc_transfers, and six an analyst types, on values of this lake. */
function queries(params) {
  const bundled = ['top_senders', 'top_receivers', 'transfers_per_day', 'daily_token_flows', 'large_transfers'].map((name) => ({
    name,
    sql: readFileSync(join(root, 'sql', `${name}.sql`), 'utf8').trim().replace(/;$/, ''),
  }));
  const { address, token, lo, hi, since, tx } = params;
  const adhoc = [
    { name: 'one address by time', sql: `SELECT * FROM erc_transfers WHERE from_address = '${address}' OR to_address = '${address}' ORDER BY block_timestamp, log_index` },
    { name: 'one token, 1% of the blocks', sql: `SELECT count(*) AS transfers, count(DISTINCT from_address) AS senders, max(value) AS largest FROM erc_transfers WHERE token_address = '${token}' AND block_number BETWEEN ${lo} AND ${hi}` },
    { name: 'one token, last 7 days', sql: `SELECT count(*) AS transfers, count(DISTINCT to_address) AS receivers, max(value) AS largest FROM erc_transfers WHERE token_address = '${token}' AND block_timestamp >= TIMESTAMPTZ '${since}'` },
    { name: 'per token, last 7 days', sql: `SELECT token_address, count(*) AS transfers, count(DISTINCT to_address) AS receivers, max(value) AS largest FROM erc_transfers WHERE block_timestamp >= TIMESTAMPTZ '${since}' GROUP BY token_address ORDER BY token_address` },
    { name: 'one tx hash', sql: `SELECT * FROM erc_transfers WHERE tx_hash = '${tx}'` },
    // The sum an analyst writes first: exact over uint256 amounts (BIGNUM in the views).
    { name: 'sum per token', sql: 'SELECT token_address, sum(value) AS total FROM erc_transfers GROUP BY token_address ORDER BY token_address' },
  ];
  return [...bundled, ...adhoc].filter((q) => !ONLY.length || ONLY.some((o) => q.name.includes(o)));
}

/** All Parquet files of the lake's erc_transfers, as one read. */
const readLake = (lake) => `read_parquet('${join(lake, 'erc_transfers', '**', '*.parquet')}', union_by_name = true, hive_partitioning = false)`;

/** The reference: the lake's rows in one table of a DuckDB file, in block order; and the queries' parameters from it. */
async function reference(lake, duckdb) {
  const file = join(LAKE_ROOT, 'native.duckdb');
  const fresh = !existsSync(file);
  if (fresh) {
    const made = await duckdb.DuckDBInstance.create(file, { memory_limit: MEMORY });
    const c = await made.connect();
    // Amounts as chainlake's views give them (BIGNUM, exact: src/warehouse/amounts.ts), stored so.
    await c.run(`CREATE TABLE erc_transfers AS SELECT * REPLACE (CAST(value_raw AS BIGNUM) AS value) FROM ${readLake(lake)} ORDER BY block_number, log_index`);
    c.closeSync();
    made.closeSync();
  }
  // Read-only, as the other processes that open it (nativeProcess) need it.
  const db = await duckdb.DuckDBInstance.create(file, { access_mode: 'READ_ONLY', memory_limit: MEMORY });
  const conn = await db.connect();
  await conn.run("SET TimeZone = 'UTC'");
  const one = async (sql) => (await conn.runAndReadAll(sql)).getRowObjectsJson()[0];
  const busiest = await one(`SELECT a AS address, count(*) AS n FROM (SELECT from_address AS a FROM erc_transfers UNION ALL SELECT to_address FROM erc_transfers) GROUP BY a ORDER BY abs(n - 150000), a LIMIT 1`);
  const token = await one(`SELECT token_address AS token FROM erc_transfers GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`);
  const span = await one(`SELECT min(block_number) AS lo, max(block_number) AS hi, strftime(max(block_timestamp) - INTERVAL 7 DAY, '%Y-%m-%d %H:%M:%S+00') AS since, count(*) AS n FROM erc_transfers`);
  const tx = await one(`SELECT tx_hash FROM erc_transfers WHERE block_number >= ${Math.floor((Number(span.lo) + Number(span.hi)) / 2)} ORDER BY block_number LIMIT 1`);
  const width = Math.max(1, Math.round((Number(span.hi) - Number(span.lo)) / 100));
  const mid = Math.floor((Number(span.lo) + Number(span.hi)) / 2);
  const params = { address: busiest.address, addressRows: busiest.n, token: token.token, lo: mid, hi: mid + width, since: span.since, tx: tx.tx_hash, rows: Number(span.n) };
  return { db, conn, params };
}

/** Seconds to run `sql` to its last row in DuckDB, nothing converted to JavaScript values. */
async function duckSeconds(conn, sql) {
  const t0 = performance.now();
  const reader = await conn.runAndReadAll(sql);
  const rows = reader.currentRowCount;
  return { seconds: (performance.now() - t0) / 1000, rows };
}

/** The CLI: `chainlake query --file --format arrow` of the SQL, to nowhere (`warehouse`: its --warehouse flags); wall time and peak RSS. */
function cliRun(lake, sql, warehouse) {
  const file = join(LAKE_ROOT, 'query.sql');
  writeFileSync(file, sql);
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'maxrss_kb=%M', process.execPath, bin, 'query', '--lake', lake, '--format', 'arrow', ...warehouse, '--file', file], { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 26 });
  const seconds = (performance.now() - t0) / 1000;
  const err = String(r.stderr);
  if (r.status !== 0) throw new Error(`chainlake query exited ${r.status}: ${err.slice(-2000)}`);
  return { seconds, rssMB: Number(/maxrss_kb=(\d+)/.exec(err)?.[1] ?? NaN) / 1024 };
}

/**
 * The native table from a fresh process, as `chainlake query` runs (Node, DuckDB, the file opened
 * read-only, the query to its last row, nothing converted): what DuckDB itself costs when each
 * query is a process of its own, its buffers cold. Wall time.
 */
const NATIVE_PROCESS = `
import { readFileSync } from 'node:fs';
const { DuckDBInstance } = await import('@duckdb/node-api');
const [file, sqlFile, memory] = process.argv.slice(1);
const conn = await (await DuckDBInstance.create(file, { access_mode: 'READ_ONLY', memory_limit: memory })).connect();
await conn.run("SET TimeZone = 'UTC'");
await conn.runAndReadAll(readFileSync(sqlFile, 'utf8'));`;

function nativeProcess(sql) {
  const file = join(LAKE_ROOT, 'native-query.sql');
  writeFileSync(file, sql);
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', NATIVE_PROCESS, join(LAKE_ROOT, 'native.duckdb'), file, MEMORY], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`the native table in a process: ${r.stderr}`);
  return (performance.now() - t0) / 1000;
}

/** A copy of `lake` under LAKE_ROOT/name, changed by `make` (a timed CLI) once; reused after. */
async function derived(name, lake, make) {
  const dir = join(LAKE_ROOT, name);
  if (existsSync(join(dir, '.made'))) return dir;
  rmSync(dir, { recursive: true, force: true });
  cpSync(lake, dir, { recursive: true });
  const r = await make(dir);
  console.log(`\n${name}: made from a copy in ${r.seconds.toFixed(1)} s, peak RSS ${fmt(r.rssMB)} MB`);
  writeFileSync(join(dir, '.made'), '');
  return dir;
}

/** `chainlake warehouse` of `lake` into `file` (`--rows` or not), timed, with peak RSS. */
function writeWarehouseFile(lake, file, rows) {
  const t0 = performance.now();
  const w = spawnSync('/usr/bin/time', ['-f', 'maxrss_kb=%M', process.execPath, bin, 'warehouse', '--lake', lake, '--out', file, rows ? '--rows' : '--no-rows'], { encoding: 'utf8' });
  if (w.status !== 0) throw new Error(`chainlake warehouse exited ${w.status}: ${w.stderr}`);
  return { seconds: (performance.now() - t0) / 1000, rssMB: Number(/maxrss_kb=(\d+)/.exec(w.stderr)?.[1] ?? NaN) / 1024 };
}

/**
 * The ways a query is timed besides the native table, over the Parquet files (a warehouse file of
 * views, as a run leaves it: the library and the CLI read its catalogue, as they do by default)
 * and over a warehouse file with the rows.
 */
async function waysOf(label, lake, duckdb, openLake) {
  const ways = [];
  for (const rows of ROWS_WAY ? [false, true] : [false]) {
    const file = join(LAKE_ROOT, `${label}.${rows ? 'rows' : 'views'}.duckdb`);
    // A file with rows kept from a run before is brought up to date, as after a run.
    if (!rows) rmSync(file, { force: true });
    const written = writeWarehouseFile(lake, file, rows);
    const db = await duckdb.DuckDBInstance.create(file, { access_mode: 'READ_ONLY', memory_limit: MEMORY });
    const conn = await db.connect();
    await conn.run("SET TimeZone = 'UTC'");
    const library = await openLake(lake, { warehouse: file });
    ways.push({ rows, file, written, db, conn, library, cliFlags: ['--warehouse', file] });
  }
  return ways;
}

/** Every query each way, the minimum of REPEAT rounds, interleaved. */
async function timeAll(label, lake, ref, duckdb, openLake) {
  const ways = await waysOf(label, lake, duckdb, openLake);
  const files = spawnSync('find', [join(lake, 'erc_transfers'), '-name', '*.parquet'], { encoding: 'utf8' }).stdout.trim().split('\n').length;
  const qs = queries(ref.params);
  const best = new Map(qs.map((q) => [q.name, { native: Infinity, nativeProcess: Infinity, rows: 0, ways: ways.map(() => ({ warehouse: Infinity, library: Infinity, cli: Infinity, cliRss: 0 })) }]));
  let startup = Infinity;
  let bare = Infinity;
  // Each process's start-up with the table ready to read and nothing read: `chainlake query` with
  // the table's view made (the footers bound, or the warehouse file attached and found current),
  // the native process with its file open; a query's own cost is what it takes beyond that.
  const NOTHING = 'SELECT count(*) FROM erc_transfers WHERE false';
  const bound = ways.map(() => Infinity);
  let nativeOpen = Infinity;
  for (let round = 0; round < REPEAT; round++) {
    if (CLI) {
      startup = Math.min(startup, cliRun(lake, 'SELECT 1', []).seconds);
      bare = Math.min(bare, bareStartup(1));
      nativeOpen = Math.min(nativeOpen, nativeProcess(NOTHING));
      for (const [i, w] of ways.entries()) bound[i] = Math.min(bound[i], cliRun(lake, NOTHING, w.cliFlags).seconds);
    }
    for (const q of qs) {
      process.stderr.write(`  ${label}, round ${round + 1}: ${q.name}\n`);
      const b = best.get(q.name);
      const n = await duckSeconds(ref.conn, q.sql);
      b.native = Math.min(b.native, n.seconds);
      b.rows = n.rows;
      if (CLI) b.nativeProcess = Math.min(b.nativeProcess, nativeProcess(q.sql));
      for (const [i, w] of ways.entries()) {
        const m = b.ways[i];
        m.warehouse = Math.min(m.warehouse, (await duckSeconds(w.conn, q.sql)).seconds);
        const t0 = performance.now();
        const table = await w.library.query(q.sql);
        m.library = Math.min(m.library, (performance.now() - t0) / 1000);
        if (table.numRows !== n.rows) throw new Error(`${q.name}: the library gave ${table.numRows} rows, the native table ${n.rows}`);
        if (!CLI) continue;
        const c = cliRun(lake, q.sql, w.cliFlags);
        m.cli = Math.min(m.cli, c.seconds);
        m.cliRss = Math.max(m.cliRss, c.rssMB);
      }
    }
  }
  for (const w of ways) {
    w.library.close();
    w.conn.closeSync();
    w.db.closeSync();
  }
  const rowsWay = ways.find((w) => w.rows);
  // What each later run pays when it brings the file with rows up to date (here: nothing new).
  const again = rowsWay && writeWarehouseFile(lake, rowsWay.file, true);
  const sec = (t) => `${t.toFixed(3)} s`;
  // Start-up is timed only with the processes (not --no-cli).
  const started = CLI ? ` start-up: chainlake query of SELECT 1 ${sec(startup)} against ${sec(bare)} for Node with DuckDB; with erc_transfers ready to read ${ways.map((w, i) => `${sec(bound[i])} ${w.rows ? 'by default (rows)' : 'views only (--no-rows)'}`).join(', ')}, against ${sec(nativeOpen)} for Node with DuckDB and the native file open;` : '';
  console.log(`\n${label}: ${files} files;${started} ${ways.map((w) => `\`chainlake warehouse ${w.rows ? '--rows' : '--no-rows'}\` ${w.written.seconds.toFixed(1)} s (peak RSS ${fmt(w.written.rssMB)} MB)`).join(', ')}${again ? `, again with nothing new ${again.seconds.toFixed(1)} s (${fmt(again.rssMB)} MB)` : ''}`);
  console.log('The warehouse file and the library against the native table in the bench\'s process; `chainlake query` (less its start-up with the table ready) against the native table in a process of its own (less its start-up with the file open).');
  // Without processes (--no-cli) their columns are left out, not printed empty.
  const processes = (cells) => cells.filter((_, i) => CLI || !(i === 0 || (i - 1) % 4 >= 2));
  const heads = ['native, a process', ...ways.flatMap((w) => [`${w.rows ? 'by default (rows)' : 'views only'}: warehouse file`, 'library', 'chainlake query', 'peak RSS'])];
  console.log(`| query | rows | native | ${processes(heads).join(' | ')} |`);
  console.log(`|---|---:|---:|${processes(heads.map(() => '---:')).join('|')}|`);
  const out = [];
  for (const q of qs) {
    const b = best.get(q.name);
    // A floor of a millisecond: below it, the difference of two process times is noise.
    const own = Math.max(0.001, b.nativeProcess - nativeOpen);
    const x = (t, ref = b.native) => `${t.toFixed(3)} s (${(t / ref).toFixed(2)}x)`;
    const cells = b.ways.flatMap((m, i) => [x(m.warehouse), x(m.library), x(Math.max(0.001, m.cli - bound[i]), own), `${fmt(m.cliRss)} MB`]);
    console.log(`| ${q.name} | ${fmt(b.rows)} | ${b.native.toFixed(3)} s | ${processes([`${own.toFixed(3)} s`, ...cells]).join(' | ')} |`);
    out.push({ query: q.name, rows: b.rows, native: b.native, nativeProcess: own, ways: ways.map((w, i) => ({ rows: w.rows, warehouse: b.ways[i].warehouse, library: b.ways[i].library, cli: Math.max(0.001, b.ways[i].cli - bound[i]), cliRssMB: b.ways[i].cliRss })) });
  }
  return { label, files, startup, bare, bound, nativeOpen, written: ways.map((w) => ({ rows: w.rows, ...w.written })), rowsRewrite: again, queries: out };
}

/** Node alone with DuckDB: import, open in memory, SELECT 1 (the floor of any CLI start-up). */
function bareStartup(times = 5) {
  const code = "const { DuckDBInstance } = await import('@duckdb/node-api'); const c = await (await DuckDBInstance.create(':memory:')).connect(); await c.run('SELECT 1');";
  let best = Infinity;
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root });
    if (r.status !== 0) throw new Error(`node + duckdb: ${r.stderr}`);
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  return best;
}

async function main() {
  console.log(`query bench: ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${new Date().toISOString().slice(0, 10)}`);
  const lake = await buildLake();
  const duckdb = await import('@duckdb/node-api');
  const { openLake } = await import('../dist/index.js');
  const ref = await reference(lake, duckdb);
  console.log(`reference: ${fmt(ref.params.rows)} rows in one native table; the address queried has ${fmt(ref.params.addressRows)} rows`);
  if (process.argv.includes('--build-only')) {
    ref.conn.closeSync();
    ref.db.closeSync();
    return;
  }
  console.log(`node + DuckDB alone (import, open, SELECT 1): ${bareStartup().toFixed(2)} s`);
  // The lake as built: a backfill run with --no-compact, or (--hourly) as the hourly runs left it.
  const built = HOURLY ? `as ${HOURLY} hourly runs leave it (each merging its small files at its end)` : 'a run with --no-compact (a file a batch)';
  const results = process.argv.includes('--merged-only') && !HOURLY ? [] : [await timeAll(built, lake, ref, duckdb, openLake)];
  if (!process.argv.includes('--no-compact') && !HOURLY) {
    // As a run leaves it: the same lake run again (nothing new in the world), which compacts at its end.
    const rerun = await derived('rerun', lake, async (dir) => {
      const p = plan(ROWS);
      const sim = await startSim(p.scale);
      try {
        const pipeline = join(LAKE_ROOT, 'pipeline-rerun.yaml');
        writeFileSync(pipeline, transfersPipeline(sim.url, p.contracts, { chunks: CHUNKS }));
        return await timed(['run', pipeline, '--lake', dir, '--log-level', 'warn', '--no-warehouse']);
      } finally {
        sim.stop();
      }
    });
    results.push(await timeAll('as a run leaves it (its small files merged at its end)', rerun, ref, duckdb, openLake));
  }
  if (!process.argv.includes('--no-compact')) {
    const compacted = await derived('compacted', lake, (dir) => timed(['compact', '--lake', dir, '--no-warehouse']));
    results.push(await timeAll('after chainlake compact', compacted, ref, duckdb, openLake));
  }
  ref.conn.closeSync();
  ref.db.closeSync();
  writeFileSync(join(LAKE_ROOT, 'results.json'), JSON.stringify(results, null, 1));
}

await main();
