#!/usr/bin/env node
// Rate-bound benchmark: how much of a service's compute-unit budget chainlake's scheduler turns into
// pages, against the simulator with its production rate limit on (fixed one-minute windows, or
// 5-second ones announced in ratelimit-policy, per-endpoint weights, 429 + retry-after, a block for
// clients that keep sending while limited).
//
// Every scenario gets its own simulator behind a loopback proxy that adds latency (the services
// answer in a few hundred ms; the simulator in under one) and counts, by the time each request
// reached the simulator, the CU it accepted in each of its windows. All scenarios run at once, in
// the same wall time, until a number of whole windows have passed; only whole windows are
// reported, since a run that starts inside a window may get more than a window's budget in its
// first minute. Real one-minute windows, real time: nothing is scaled. A minute holds exactly twelve
// 5-second windows, so the share of the budget per minute is that of its twelve windows.
//
//   node bench/rate.mjs [--windows 3] [--latency-ms 250] [--budget 6000] [--concurrency 4]
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startSimulator } from '../dist/simulator/server.js';
import { contractAddress } from '../dist/simulator/evm.js';
import { DEMO } from '../dist/simulator/world.js';
import { Client } from '../dist/sources/client.js';
import { newRequestStats } from '../dist/decl/request.js';
import { paginate } from '../dist/extract/paginate.js';
import { TIERS } from '../dist/sources/budget.js';
import { latencyProxy, MINUTE } from './proxy.mjs';

const { values: args } = parseArgs({
  options: {
    windows: { type: 'string', default: '3' },
    'latency-ms': { type: 'string', default: '250' },
    budget: { type: 'string', default: String(TIERS.unauthenticated.cuPerMinute) },
    concurrency: { type: 'string', default: '4' },
    only: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log('node bench/rate.mjs [--windows N] [--latency-ms MS] [--budget CU_PER_MINUTE] [--concurrency N] [--only NAME-PART]');
  process.exit(0);
}
const WINDOWS = Number(args.windows);
const LATENCY = Number(args['latency-ms']);
const BUDGET = Number(args.budget);
const CONCURRENCY = Number(args.concurrency);
const KEY = 'bench-key';

const transfers = [0, 1, 2, 3, 4, 5].map((i) => {
  const address = contractAddress('43114', i);
  return { path: `/v1/chains/43114/tokens/${address}/transfers`, query: { pageSize: '1' }, items: 'transfers', endpoint: '/v1/chains/{chainId}/tokens/{address}/transfers', weight: 20 };
});
const rewards = DEMO.nodeIds.map((nodeId) => ({
  path: '/v1/networks/mainnet/rewards',
  query: { nodeIds: nodeId, pageSize: '1' },
  items: 'historicalRewards',
  endpoint: '/v1/networks/{network}/rewards',
  weight: 100,
}));
/** Six transfer listings (20 CU a page) and two reward listings (100 CU a page), as in a pipeline. */
const MIXED = [...transfers, ...rewards];

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** chainlake: every partition pages concurrently through one client, as a run does. */
async function chainlake(url, partitions, until, source = {}) {
  const client = new Client('data', { url, concurrency: CONCURRENCY, requestsPerSecond: 0, timeoutMs: 30_000, retries: 10, ...source });
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(new Error('bench over')), until - Date.now());
  let pages = 0;
  await Promise.all(
    partitions.map(async (p) => {
      // A listing that ends starts over: the partition keeps the service busy for the whole run.
      while (!stop.signal.aborted) {
        try {
          for await (const _ of paginate(client, { ...p, stats: newRequestStats(), signal: stop.signal })) pages++;
        } catch (err) {
          if (!stop.signal.aborted) throw err;
        }
      }
    }),
  );
  clearTimeout(timer);
  return { pages, budget: client.budgetState() };
}

/**
 * The way the official SDK ends up used: one page after another, partition after partition; a
 * 429 is retried after an exponential backoff (1 s, doubling up to 32 s) that knows nothing of
 * retry-after, since the SDK does not surface it.
 */
async function naive(url, partitions, until) {
  let pages = 0;
  for (;;) {
    for (const p of partitions) {
      let token;
      do {
        let backoff = 1000;
        for (;;) {
          if (Date.now() >= until) return { pages };
          const q = new URLSearchParams({ ...p.query, ...(token ? { pageToken: token } : {}) });
          const res = await fetch(`${url}${p.path}?${q}`);
          if (res.status === 429) {
            await res.text();
            await sleep(Math.min(backoff, until - Date.now()));
            backoff = Math.min(backoff * 2, 32_000);
            continue;
          }
          if (!res.ok) throw new Error(`naive loop: ${res.status} ${await res.text()}`);
          const body = await res.json();
          pages++;
          token = body.nextPageToken || undefined;
          break;
        }
      } while (token);
    }
  }
}

const scenarios = [
  { name: 'budget configured (tier: unauthenticated)', budget: BUDGET, run: (url, until) => chainlake(url, MIXED, until, { cuPerMinute: BUDGET, cuPerDay: TIERS.unauthenticated.cuPerDay }) },
  { name: 'budget unknown, no key (429s only)', budget: BUDGET, run: (url, until) => chainlake(url, MIXED, until) },
  { name: 'budget unknown, keyed (ratelimit-* headers)', budget: BUDGET, keyed: true, run: (url, until) => chainlake(url, MIXED, until, { apiKey: KEY }) },
  { name: 'budget unknown, no key, 2,500 CU/min', budget: 2500, run: (url, until) => chainlake(url, MIXED, until) },
  // As production: the key read under one header name only, the budget announced per 5 seconds.
  { name: 'budget unknown, keyed, 5-second window (ratelimit-policy)', budget: BUDGET, keyed: true, windowSeconds: 5, keyHeader: 'x-glacier-api-key', run: (url, until) => chainlake(url, MIXED, until, { apiKey: KEY }) },
  { name: 'transfers only: chainlake, budget unknown', budget: BUDGET, pair: 'a', run: (url, until) => chainlake(url, transfers, until) },
  { name: 'transfers only: naive sequential loop', budget: BUDGET, pair: 'a', naive: true, run: (url, until) => naive(url, transfers, until) },
  { name: 'transfers only: chainlake, budget unknown', budget: BUDGET, latency: 50, pair: 'b', run: (url, until) => chainlake(url, transfers, until) },
  { name: 'transfers only: naive sequential loop', budget: BUDGET, latency: 50, pair: 'b', naive: true, run: (url, until) => naive(url, transfers, until) },
];

if (args.only) scenarios.splice(0, scenarios.length, ...scenarios.filter((s) => s.name.includes(args.only)));

const started = Date.now();
const firstWindow = Math.ceil(started / MINUTE);
const until = (firstWindow + WINDOWS) * MINUTE;
console.log(`rate-bound: ${scenarios.length} scenarios at once, each on its own simulator; ${WINDOWS} whole one-minute windows measured (${((until - started) / 1000).toFixed(0)} s in all)`);
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${os.platform()}`);
console.log(`client: concurrency ${CONCURRENCY}; proxy latency ${LATENCY} ms unless noted\n`);

const running = await Promise.all(
  scenarios.map(async (s) => {
    const sim = await startSimulator({
      seed: 1,
      rateLimit: { data: { cuPerMinute: s.budget, ...(s.windowSeconds ? { windowSeconds: s.windowSeconds } : {}) } },
      ...(s.keyed ? { apiKeys: [KEY] } : {}),
      ...(s.keyHeader ? { keyHeader: s.keyHeader } : {}),
    });
    const proxy = await latencyProxy(sim.url, s.latency ?? LATENCY);
    return { s, sim, proxy };
  }),
);
const results = await Promise.all(
  running.map(async ({ s, sim, proxy }) => {
    const out = await s.run(proxy.url, until);
    await proxy.close();
    await sim.close();
    return { s, out, counts: proxy.counts, simStats: sim.stats };
  }),
);

const pct = (x) => `${(100 * x).toFixed(2)}%`;
const rows = [['scenario', 'budget', 'latency', 'CU/min / budget', 'min..max window', '429 share', 'pages', 'CU share min/max', 'budget in force']];
for (const { s, out, counts } of results) {
  const perWindow = [];
  for (let w = firstWindow; w < firstWindow + WINDOWS; w++) perWindow.push((counts.acceptedByWindow.get(w) ?? 0) / s.budget);
  const mean = perWindow.reduce((a, b) => a + b, 0) / perWindow.length;
  const shares = [...counts.cuByFlow.values()];
  const fairness = !s.naive && shares.length > 1 ? (Math.min(...shares) / Math.max(...shares)).toFixed(2) : '-';
  const inForce = out.budget ? `${out.budget.cuPerMinute ?? 'none'} (${out.budget.source})` : '-';
  rows.push([s.name, String(s.budget), `${s.latency ?? LATENCY} ms`, mean.toFixed(3), `${Math.min(...perWindow).toFixed(3)}..${Math.max(...perWindow).toFixed(3)}`, `${pct(counts.limited / Math.max(1, counts.requests))} (${counts.limited}/${counts.requests})`, String(out.pages), fairness, inForce]);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
console.log();
for (const pair of ['a', 'b']) {
  const [ours, theirs] = results.filter((r) => r.s.pair === pair);
  if (!ours || !theirs) continue;
  console.log(`pages in the same wall time, transfers only, ${ours.s.latency ?? LATENCY} ms latency: chainlake ${ours.out.pages} vs naive loop ${theirs.out.pages} = ${(ours.out.pages / Math.max(1, theirs.out.pages)).toFixed(2)}x`);
}
// 429s by window (the window before the first measured one is where a run without a known budget
// learns it): where the share above comes from.
for (const { s, counts } of results) {
  const byWindow = [...counts.limitedByWindow].sort((a, b) => a[0] - b[0]).map(([w, n]) => `${w - firstWindow + 1}: ${n}`);
  if (byWindow.length) console.log(`429s by window (1 = first measured), ${s.name}: ${byWindow.join(', ')}`);
}
const blocked = results.reduce((n, r) => n + r.simStats.blocked, 0);
if (blocked) console.log(`clients blocked by the simulator for sending while limited: ${blocked} answers`);
