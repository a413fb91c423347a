#!/usr/bin/env node
// The CPU of a run (issues 38, 39): `chainlake run pipelines/demo.yaml` (every stream, a few MB of
// rows) into a fresh lake, against the simulator in its own process, so that the figures are the
// run's alone. Each run is a fresh process timed whole by GNU time: CPU = user + sys, which a
// loaded machine disturbs less than the wall time, and peak RSS. With --vs DIR, the same run
// through another checkout's build (DIR/bin/chainlake.js), one after the other each round, so that
// the machine's other work falls on both alike; min and median of --runs rounds.
// --env K=V (repeatable) sets a variable for the runs of this build only (e.g. DuckDB's allocator).
// Asserts nothing. Usage: node bench/demo-cpu.mjs [--runs 3] [--vs DIR] [--env K=V]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { arg, fmt, root, startSim } from './common.mjs';

const RUNS = Number(arg('runs', '3'));
const VS = arg('vs', undefined);
const env = Object.fromEntries(process.argv.flatMap((a, i) => (a === '--env' ? [process.argv[i + 1].split(/=(.*)/s).slice(0, 2)] : [])));

function parquetFiles(dir) {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile() && e.name.endsWith('.parquet')) n++;
  return n;
}

/** One demo run through the build in `dir`: its CPU, peak RSS, wall time and the Parquet files it left. */
function run(dir, url, extra) {
  const lake = mkdtempSync(join(tmpdir(), 'cl-demo-cpu-'));
  try {
    const args = ['-f', 'cpu=%U+%S rss=%M', join(dir, 'bin', 'chainlake.js'), 'run', join(root, 'pipelines', 'demo.yaml'), '--data-url', url, '--metrics-url', url, '--node-url', url, '--lake', lake, '--no-warehouse', '--quiet'];
    const t0 = performance.now();
    const r = spawnSync('/usr/bin/time', args, { env: { ...process.env, CHAINLAKE_API_KEY: 'bench', ...extra }, encoding: 'utf8', maxBuffer: 64 << 20 });
    const seconds = (performance.now() - t0) / 1000;
    if (r.status !== 0) throw new Error(`the demo run through ${dir} exited ${r.status}:\n${String(r.stderr).slice(-2000)}`);
    const cpu = /cpu=([\d.]+)\+([\d.]+) rss=(\d+)/.exec(r.stderr);
    return { user: Number(cpu[1]), sys: Number(cpu[2]), rssMB: Number(cpu[3]) / 1024, seconds, files: parquetFiles(lake) };
  } finally {
    rmSync(lake, { recursive: true, force: true });
  }
}

const sim = await startSim(1);
const ways = [{ name: Object.keys(env).length ? `this build, ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}` : 'this build', dir: root, env }];
if (VS) ways.push({ name: `--vs ${VS}`, dir: resolve(VS), env: {} });
const got = new Map(ways.map((w) => [w.name, []]));
console.log(`demo run, ${cpus().length} cores, load ${loadavg()[0].toFixed(1)} at the start`);
try {
  for (let i = 0; i < RUNS; i++)
    for (const w of ways) {
      const r = run(w.dir, sim.url, w.env);
      got.get(w.name).push(r);
      console.log(`  ${w.name}: CPU ${(r.user + r.sys).toFixed(2)} s (user ${r.user.toFixed(2)} + sys ${r.sys.toFixed(2)}), peak ${fmt(r.rssMB)} MB, wall ${r.seconds.toFixed(1)} s, ${r.files} Parquet files, load ${loadavg()[0].toFixed(1)}`);
    }
} finally {
  sim.stop();
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
for (const [name, rs] of got) {
  const cpu = rs.map((r) => r.user + r.sys);
  console.log(`${name}: CPU min ${Math.min(...cpu).toFixed(2)} s, median ${median(cpu).toFixed(2)} s (sys median ${median(rs.map((r) => r.sys)).toFixed(2)}), peak RSS median ${fmt(median(rs.map((r) => r.rssMB)))} MB`);
}
