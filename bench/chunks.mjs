#!/usr/bin/env node
// One listing, the whole budget (issue 15): one contract's erc_transfers, fetched by a real
// `chainlake run` and by the official client's sequential loop (@avalanche-sdk/chainkit), side by
// side in one run, at 250 ms, 800 ms and 2 s a page, against the simulator with its rate limit on
// (6,000 CU a minute, the unauthenticated tier: five 20-CU transfer pages a second).
//
// Each side at each latency has its own simulator (a rate limit is per simulator) behind its own
// loopback proxy (proxy.mjs), which adds the latency and counts, by the time a request reached the
// simulator, the pages it answered (200) and the 429s. All of them run at once, for the same wall
// time. The simulators' one-minute windows are shifted (their `now` option) to open when the run
// starts, so the default 60 s is one whole window; --windows N measures N. A run shorter than a
// window (--seconds 20, a smoke run) is measured against its share of the window's budget.
//
// chainlake runs as a user runs it: bin/chainlake.js with a pipeline written to a temp folder (one
// erc_transfers stream of the contract, `tier: unauthenticated`), into a temp lake, stopped at the
// end by SIGTERM (it commits what it has). The client pages the same listing the way its docs page
// a listing, one page after another (`for await (const page of result)`), serverURL its proxy,
// telemetry off, 429s retried by its own retry option (which honours retry-after).
//
// Nothing leaves loopback: this process's fetch (the client's, and its telemetry's) refuses any
// other host, and the figures say how many it refused. Prints figures; exit 1 only when the harness
// broke (a run that failed or ran out of listing, the client erroring).
//
//   node bench/chunks.mjs [--seconds 60 | --windows N] [--latencies 250,800,2000] [--budget 6000] [--learn] [--keep]
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Avalanche } from '@avalanche-sdk/chainkit';
import { startSimulator } from '../dist/simulator/server.js';
import { buildWorld } from '../dist/simulator/world.js';
import { TIERS } from '../dist/sources/budget.js';
import { textTable } from '../dist/text.js';
import { latencyProxy, MINUTE, sumWindows } from './proxy.mjs';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string' },
    windows: { type: 'string' },
    latencies: { type: 'string', default: '250,800,2000' },
    budget: { type: 'string', default: String(TIERS.unauthenticated.cuPerMinute) },
    learn: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
const USAGE = 'node bench/chunks.mjs [--seconds 60 | --windows N] [--latencies 250,800,2000] [--budget CU_PER_MINUTE] [--learn] [--keep]';
if (args.help) {
  console.log(USAGE);
  console.log('  --learn: the pipeline gives no budget (chainlake learns it from 429s); --keep: keep the temp lakes and logs');
  process.exit(0);
}
function usage(message) {
  console.error(`bench/chunks.mjs: ${message}\n${USAGE}`);
  process.exit(2);
}
const whole = (name, v, min) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) usage(`--${name} must be a whole number >= ${min}, not ${JSON.stringify(v)}`);
  return n;
};
if (args.seconds !== undefined && args.windows !== undefined) usage('give --seconds or --windows, not both');
const SECONDS = args.windows !== undefined ? whole('windows', args.windows, 1) * 60 : whole('seconds', args.seconds ?? '60', 5);
const LATENCIES = args.latencies.split(',').map((x) => whole('latencies', x, 0));
if (new Set(LATENCIES).size !== LATENCIES.length) usage(`--latencies names a latency twice: ${args.latencies}`);
const BUDGET = whole('budget', args.budget, 20);
const CHAIN = '43114';
const PAGE_SIZE = 100;
const WEIGHT = 20;
/** Targets of issue 15. */
const TARGET = { share: 0.9, limited: 0.01, ratio: 3.5, ratioAt: 800 };

// What is measured: whole windows, or the run itself when it is shorter than one.
const measuredMs = SECONDS >= 60 ? Math.floor(SECONDS / 60) * MINUTE : SECONDS * 1000;
const windows = Math.ceil(measuredMs / MINUTE);
const budgetInSpan = (BUDGET * measuredMs) / MINUTE;

// The contract: the ERC-20 of the chain with the most transfers, the world scaled up (the
// simulator's `scale` option) so that no side can reach the end of its listing: twice what the
// budget allows in the windows the run touches.
const small = buildWorld({ seed: 1 });
const contract = small
  .contractsOf(CHAIN)
  .filter((c) => c.ercType === 'ERC-20')
  .map((c) => ({ ...c, count: small.transferCountFor(CHAIN, c.address) }))
  .sort((a, b) => b.count - a.count)[0];
const atBudget = Math.ceil(SECONDS / 60) * (BUDGET / WEIGHT) * PAGE_SIZE;
const SCALE = Math.ceil((2 * atBudget) / contract.count);
const transfers = buildWorld({ seed: 1, scale: SCALE }).transferCountFor(CHAIN, contract.address);

// Only loopback: the client's requests and anything else this process fetches.
const realFetch = globalThis.fetch;
let refused = 0;
const loopback = (host) => host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
globalThis.fetch = function loopbackOnly(input, init) {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  if (!loopback(url.hostname)) {
    refused++;
    // Thrown, not returned as a rejection: a fire-and-forget caller (telemetry) swallows it.
    throw new Error(`bench/chunks.mjs: refused a request beyond loopback (${url.host})`);
  }
  return realFetch(input, init);
};

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'chainlake.js');
const tmp = mkdtempSync(join(os.tmpdir(), 'chainlake-chunks-'));
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

function pipelineYaml(url, latency) {
  const budget = args.learn ? '' : BUDGET === TIERS.unauthenticated.cuPerMinute ? ', tier: unauthenticated' : `, cuPerMinute: ${BUDGET}`;
  return [
    `name: chunks-${latency}ms`,
    'sources:',
    `  data: { url: "${url}"${budget} }`,
    'streams:',
    '  - table: erc_transfers',
    `    chainId: "${CHAIN}"`,
    `    contracts: ["${contract.address}"]`,
    '',
  ].join('\n');
}

/** `chainlake run` as a program (its shebang's flags), logs to a file; stopped by stop(). */
function runChainlake(url, latency) {
  const dir = join(tmp, `${latency}ms`);
  mkdirSync(dir);
  const yaml = join(dir, 'pipeline.yaml');
  writeFileSync(yaml, pipelineYaml(url, latency));
  const lake = join(dir, 'lake');
  const log = join(dir, 'run.log');
  const out = { lake, log, stopped: false, code: undefined };
  const child = spawn(bin, ['run', yaml, '--lake', lake, '--no-warehouse', '--log-format', 'json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = [];
  child.stdout.on('data', (d) => lines.push(d));
  child.stderr.on('data', (d) => lines.push(d));
  out.exited = new Promise((resolve) => {
    child.on('error', (err) => {
      lines.push(Buffer.from(String(err)));
      resolve(-1);
    });
    child.on('exit', (code, signal) => {
      writeFileSync(log, Buffer.concat(lines));
      out.code = code ?? signal;
      resolve(out.code);
    });
  });
  out.stop = async () => {
    out.stopped = true;
    child.kill('SIGTERM');
    const code = await Promise.race([out.exited, sleep(60_000).then(() => 'timeout')]);
    if (code === 'timeout') {
      child.kill('SIGKILL');
      await out.exited;
      out.code = 'did not stop within 60 s of SIGTERM';
    }
  };
  return out;
}

/** Rows the stopped run committed, read back with `chainlake query`. */
function committedRows(lake) {
  const r = spawnSync(bin, ['query', '--lake', lake, '--format', 'csv', 'SELECT count(*) AS n FROM erc_transfers'], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.trim().split('\n')[1]) : `none (${r.stderr.trim().split('\n')[0]})`;
}

/** The client's loop as its docs page a listing; a listing that ends is a harness error. */
async function runClient(serverURL, signal) {
  const avalanche = new Avalanche({ enableTelemetry: false, chainId: CHAIN });
  const options = {
    // The SDK-level serverURL is not used by this operation (it takes its own server list); the
    // per-operation option is.
    serverURL,
    signal,
    // Its default retries cover 5XX only; a 429 would end the loop.
    retryCodes: ['429', '5XX'],
    retries: { strategy: 'backoff', backoff: { initialInterval: 500, maxInterval: 60_000, exponent: 1.5, maxElapsedTime: 3_600_000 }, retryConnectionErrors: true },
  };
  try {
    const result = await avalanche.data.evm.contracts.listTransfers({ address: contract.address, pageSize: PAGE_SIZE }, options);
    for await (const _ of result);
  } catch (err) {
    if (signal.aborted) return;
    throw err;
  }
  if (!signal.aborted) throw new Error('the client reached the end of the listing: the contract is too small for the run');
}

// Start everything at t0; the simulators' windows open then.
const t0 = Date.now() + 2000;
const shift = t0 % MINUTE;
const simNow = () => Date.now() - shift;
const firstWindow = Math.floor((t0 - shift) / MINUTE);
const until = t0 + measuredMs;

async function side(latency) {
  const sim = await startSimulator({ seed: 1, scale: SCALE, now: simNow, rateLimit: { data: { cuPerMinute: BUDGET } } });
  const proxy = await latencyProxy(sim.url, latency, { now: simNow, until });
  return { sim, proxy };
}
const scenarios = [];
for (const latency of LATENCIES) scenarios.push({ latency, ours: await side(latency), theirs: await side(latency) });

console.log(`chunks: one contract's transfers (${contract.symbol} ${contract.address} on ${CHAIN}, ${transfers.toLocaleString('en')} transfers: the simulator's world at scale ${SCALE}), pages of ${PAGE_SIZE}`);
console.log(`budget ${BUDGET.toLocaleString('en')} CU/min (${BUDGET / WEIGHT / 60} pages/s of ${WEIGHT} CU); chainlake's pipeline ${args.learn ? 'gives no budget (learnt from 429s)' : 'gives it'}`);
console.log(`${LATENCIES.length} ${LATENCIES.length === 1 ? 'latency' : 'latencies'} x (chainlake, chainkit), each on its own simulator and proxy, all at once for ${SECONDS} s; measured: ${measuredMs >= MINUTE ? `${windows} whole one-minute window${windows > 1 ? 's' : ''}` : `${SECONDS} s of a one-minute window (budget pro rata)`}`);
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${os.platform()}\n`);

await sleep(t0 - Date.now());
const stopClients = new AbortController();
for (const s of scenarios) {
  s.run = runChainlake(s.ours.proxy.url, s.latency);
  // Never awaited past the end: a retry's backoff sleep cannot be interrupted.
  s.client = runClient(s.theirs.proxy.url, stopClients.signal).catch((err) => {
    s.clientError = err;
  });
}
const early = await Promise.race([
  sleep(t0 + SECONDS * 1000 - Date.now()).then(() => undefined),
  ...scenarios.map((s) => s.run.exited.then(() => `chainlake at ${s.latency} ms exited before the end (${s.run.code}; log: ${s.run.log})`)),
  ...scenarios.map((s) => s.client.then(() => s.clientError && `the client at ${s.latency} ms: ${s.clientError.message}`)),
]);
stopClients.abort();
await Promise.all(scenarios.map((s) => s.run.stop()));

const pct = (x) => `${(100 * x).toFixed(2)}%`;
const figures = (counts) => {
  const pages = sumWindows(counts.pagesByWindow, firstWindow, windows);
  const requests = sumWindows(counts.requestsByWindow, firstWindow, windows);
  const limited = sumWindows(counts.limitedByWindow, firstWindow, windows);
  const share = sumWindows(counts.acceptedByWindow, firstWindow, windows) / budgetInSpan;
  return { pages, requests, limited, share };
};
const rows = [];
const broke = new Set(early ? [early] : []);
for (const s of scenarios) {
  const ours = figures(s.ours.proxy.counts);
  const theirs = figures(s.theirs.proxy.counts);
  const ratio = ours.pages / Math.max(1, theirs.pages);
  const limitedShare = ours.limited / Math.max(1, ours.requests);
  const met = [`budget ${ours.share >= TARGET.share ? 'yes' : 'no'}`, `429s ${limitedShare <= TARGET.limited ? 'yes' : 'no'}`];
  if (s.latency === TARGET.ratioAt) met.push(`ratio ${ratio >= TARGET.ratio ? 'yes' : 'no'}`);
  const stoppedCleanly = s.run.code === 0 || s.run.code === 1;
  if (!stoppedCleanly) broke.add(`chainlake at ${s.latency} ms: exit ${s.run.code} after SIGTERM (log: ${s.run.log})`);
  if (s.clientError) broke.add(`the client at ${s.latency} ms: ${s.clientError.message}`);
  rows.push([
    s.latency >= 1000 ? `${s.latency / 1000} s` : `${s.latency} ms`,
    ours.pages,
    theirs.pages,
    `${ratio.toFixed(2)}x`,
    ours.share.toFixed(3),
    `${pct(limitedShare)} (${ours.limited}/${ours.requests})`,
    committedRows(s.run.lake),
    theirs.share.toFixed(3),
    met.join(', '),
  ]);
}
console.log(textTable(['latency', 'chainlake pages', 'chainkit pages', 'ratio', 'budget used', '429 share', 'rows committed', 'chainkit budget used', 'targets met'], rows));
console.log(`\ntargets (issue 15): budget used >= ${TARGET.share} at every latency, 429 share <= ${pct(TARGET.limited)}, >= ${TARGET.ratio}x the client's pages at ${TARGET.ratioAt} ms`);
console.log('budget used: CU the simulator accepted over the measured span / the budget of that span; pages: 200 answers in it');
console.log(`requests beyond loopback refused: ${refused}`);

for (const s of scenarios) {
  await s.ours.proxy.close();
  await s.theirs.proxy.close();
  await s.ours.sim.close();
  await s.theirs.sim.close();
}
if (broke.size) {
  for (const b of broke) console.error(`bench/chunks.mjs: harness: ${b}`);
  for (const s of scenarios) {
    try {
      console.error(`--- ${s.run.log} (tail)\n${readFileSync(s.run.log, 'utf8').slice(-1500)}`);
    } catch {}
  }
}
if (args.keep || broke.size) console.log(`kept: ${tmp}`);
else rmSync(tmp, { recursive: true, force: true });
// A client still in a retry's backoff sleep would hold the process open.
process.exit(broke.size ? 1 : 0);
