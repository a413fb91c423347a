#!/usr/bin/env node
// Start-up (issue 38): how long a process takes to answer `SELECT 1` through chainlake, against
// Node answering it with DuckDB alone. Each way is a fresh process, timed whole by GNU time
// (wall, CPU = user + sys, peak RSS); the ways run interleaved, one round of each after another,
// so that the machine's other work falls on all of them alike; min and median of --runs rounds.
//   - node + DuckDB (require): the CLI's floor (it loads DuckDB with require, src/warehouse/duckdb.ts);
//   - node + DuckDB (import): the library's floor, as a program importing '@duckdb/node-api' pays it;
//   - `chainlake query "SELECT 1" --lake L` for each lake of --lakes (default: an empty lake made
//     here, the demo lake data/lake, and bench/query.mjs's lake data/bench-query/run where they exist);
//   - `openLake(L)` then `query('SELECT 1')` for the same lakes.
// --vs DIR adds the same ways through another checkout's build (DIR/bin/chainlake.js, DIR/dist),
// e.g. the commit before, unpacked and built beside this one.
// Asserts nothing. Usage: node bench/startup.mjs [--runs 10] [--lakes a,b] [--vs DIR]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { arg, root } from './common.mjs';

const RUNS = Number(arg('runs', '10'));
const VS = arg('vs', undefined);

function lakes() {
  const given = arg('lakes', undefined);
  if (given) return given.split(',').map((l) => resolve(l));
  const empty = mkdtempSync(join(tmpdir(), 'cl-startup-'));
  mkdirSync(join(empty, '_state'));
  return [empty, join(root, 'data', 'lake'), join(root, 'data', 'bench-query', 'run')].filter((l) => existsSync(l));
}

const duckdbAlone = (how) => `
${how === 'require' ? `const { DuckDBInstance } = (await import('node:module')).createRequire(${JSON.stringify(join(root, 'package.json'))})('@duckdb/node-api');` : `const { DuckDBInstance } = await import(${JSON.stringify(join(root, 'node_modules', '@duckdb', 'node-api', 'lib', 'index.js'))});`}
const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
(await conn.runAndReadAll('SELECT 1')).getRows();
conn.closeSync();
db.closeSync();`;

const library = (dir, lake) => `
const { openLake } = await import(${JSON.stringify(join(dir, 'dist', 'index.js'))});
const lake = await openLake(${JSON.stringify(lake)});
(await lake.query('SELECT 1')).toArray();
lake.close();`;

/** One process, timed: wall and CPU seconds, peak RSS in MB. */
function timeOne(argv) {
  const r = spawnSync('/usr/bin/time', ['-f', 'timed %e %U %S %M', ...argv], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  const line = r.stderr.split('\n').find((l) => l.startsWith('timed '));
  if (r.status !== 0 || !line) throw new Error(`${argv.join(' ')}: exit ${r.status}\n${r.stderr}`);
  const [wall, user, sys, kb] = line.split(' ').slice(1).map(Number);
  return { wall, cpu: user + sys, rss: kb / 1024 };
}

const ways = [
  { name: 'node + DuckDB (require), SELECT 1', argv: [process.execPath, '--input-type=module', '-e', duckdbAlone('require')] },
  { name: 'node + DuckDB (import), SELECT 1', argv: [process.execPath, '--input-type=module', '-e', duckdbAlone('import')] },
];
const builds = [{ label: '', dir: root }, ...(VS ? [{ label: ' [vs]', dir: resolve(VS) }] : [])];
for (const lake of lakes()) {
  for (const b of builds) ways.push({ name: `chainlake query "SELECT 1" --lake ${lake}${b.label}`, argv: [join(b.dir, 'bin', 'chainlake.js'), 'query', 'SELECT 1', '--lake', lake] });
  for (const b of builds) ways.push({ name: `openLake(${lake}) + query('SELECT 1')${b.label}`, argv: [process.execPath, '--input-type=module', '-e', library(b.dir, lake)] });
}

console.log(`start-up bench: ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}, ${new Date().toISOString().slice(0, 10)}, ${RUNS} rounds`);
const times = ways.map(() => []);
for (let round = 0; round < RUNS; round++) ways.forEach((w, i) => times[i].push(timeOne(w.argv)));
const min = (xs) => Math.min(...xs);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const s = (x) => `${x.toFixed(2)} s`;
console.log('\n| way | wall min / median | CPU min / median | peak RSS max |\n|---|---:|---:|---:|');
ways.forEach((w, i) => {
  const t = times[i];
  const wall = t.map((x) => x.wall);
  const cpu = t.map((x) => x.cpu);
  console.log(`| ${w.name} | ${s(min(wall))} / ${s(median(wall))} | ${s(min(cpu))} / ${s(median(cpu))} | ${Math.round(Math.max(...t.map((x) => x.rss)))} MB |`);
});
console.log(`\nload average at the end ${loadavg()[0].toFixed(1)}`);
