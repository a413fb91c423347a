#!/usr/bin/env node
// Several `chainlake run` processes on one API key, sharing its budget through PostgreSQL
// (--budget-db), against the simulator with its rate limit on: how much of the budget they spend
// together, and how many of their requests get a 429. Each run pages test/cluster/hungry.yaml
// (three token contracts' transfers, ten to a page: a run alone would spend the budget several
// times over; 30,000 CU a minute, the simulator's budget too) through the latency proxy of
// bench/proxy.mjs, which counts by the simulator's clock what it accepted in each of its windows.
// Only the whole windows in which every run was at work are reported. Prints figures; asserts
// nothing (test/cluster/two-pipelines.test.ts asserts). Each scenario uses a key of its own, so
// that one scenario's learnt budget is not the next one's; the database may be any PostgreSQL the
// user can create a schema in.
//   node bench/shared-budget.mjs --db postgres://user:password@127.0.0.1:5432/db [--window-s 2]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadPipeline } from '../dist/config/pipeline.js';
import { redactUrl } from '../dist/cluster/url.js';
import { startSimulator } from '../dist/simulator/server.js';
import { latencyProxy } from './proxy.mjs';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    'window-s': { type: 'string', default: '2' },
    help: { type: 'boolean', default: false },
  },
});
const USAGE = 'node bench/shared-budget.mjs --db postgres://user:password@host:port/db [--window-s SECONDS]';
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!args.db) {
  console.error(`--db is required: the PostgreSQL the runs share their budget in\n${USAGE}`);
  process.exit(2);
}
const HUNGRY = fileURLToPath(new URL('../test/cluster/hungry.yaml', import.meta.url));
const BUDGET = loadPipeline(HUNGRY).sources.data.cuPerMinute;
const WINDOW_MS = Number(args['window-s']) * 1000;
const QUOTA = Math.floor((BUDGET * WINDOW_MS) / 60_000);
const KEY = 'bench-shared-key';
const BIN = fileURLToPath(new URL('../bin/chainlake.js', import.meta.url));

const scenarios = [
  { name: 'two runs, 40 ms latency', runs: 2, latencyMs: 40 },
  { name: 'three runs, 40 ms latency', runs: 3, latencyMs: 40 },
  { name: 'two runs, 250 ms latency', runs: 2, latencyMs: 250 },
];

function run(args, key) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, CHAINLAKE_API_KEY: key }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** Each scenario on a key of its own: one scenario's learnt budget is not the next one's. */
async function scenario(s, db, key) {
  const root = mkdtempSync(join(tmpdir(), 'cl-bench-shared-'));
  const sim = await startSimulator({ seed: 1, apiKeys: [key], rateLimit: { data: { cuPerMinute: BUDGET, windowSeconds: WINDOW_MS / 1000 }, blockAfterLimitedRequests: 1e9 } });
  const proxies = [];
  try {
    for (let i = 0; i < s.runs; i++) proxies.push(await latencyProxy(sim.url, s.latencyMs, { windowMs: WINDOW_MS }));
    const results = await Promise.all(
      proxies.map((p, i) => run(['run', HUNGRY, '--data-url', p.url, '--lake', join(root, `lake${i}`), '--budget-db', db, '--log-level', 'error'], key)),
    );
    for (const r of results) if (r.code !== 0) throw new Error(`a run exited ${r.code}: ${r.stderr.slice(-2000)}`);
    const windowsOf = (p) => [...p.counts.requestsByWindow.keys()];
    const first = Math.max(...proxies.map((p) => Math.min(...windowsOf(p)))) + 1;
    const last = Math.min(...proxies.map((p) => Math.max(...windowsOf(p)))) - 1;
    const accepted = new Map();
    for (const p of proxies) for (const [w, cu] of p.counts.acceptedByWindow) accepted.set(w, (accepted.get(w) ?? 0) + cu);
    const whole = [];
    for (let w = first; w <= last; w++) whole.push(accepted.get(w) ?? 0);
    const requests = proxies.reduce((n, p) => n + p.counts.requests, 0);
    const limited = proxies.reduce((n, p) => n + p.counts.limited, 0);
    const use = whole.reduce((n, cu) => n + cu, 0) / (whole.length * QUOTA);
    console.log(
      `${s.name}: ${requests} data requests (${proxies.map((p) => p.counts.requests).join(' / ')}), ${limited} 429s (${((100 * limited) / requests).toFixed(2)}%), ` +
        `most accepted in a window ${Math.max(...accepted.values())} of ${QUOTA}; ${whole.length} whole windows all ran: ${whole.join(', ')} (use ${use.toFixed(3)})`,
    );
  } finally {
    for (const p of proxies) await p.close();
    await sim.close();
    rmSync(root, { recursive: true, force: true });
  }
}

console.log(`shared budget on ${redactUrl(args.db)}: ${QUOTA} CU per ${WINDOW_MS / 1000}-second window, ${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}`);
for (const [i, s] of scenarios.entries()) await scenario(s, args.db, `${KEY}-${i}-${randomBytes(4).toString('hex')}`);
