// Two hungry `chainlake run` processes at once on one API key, sharing its budget through
// PostgreSQL (--budget-db), against the simulator with its rate limit on: together they must stay
// within the budget in every window of the service and still spend at least 0.95 of it, with at
// most 1% of their requests answered 429. Each runs the busiest of test/cluster/hungry.yaml's
// token contracts, its transfers in small pages, so a run alone would spend the budget several times
// over; the budget is known (the pipeline's, as a tier gives it; the service announces its
// windows, short here so that the test sees many of them in a few seconds).
//
// Each run reaches the data service through its own loopback proxy (test/cluster/fixture.ts), which
// holds every request a while, as the way to a service far away does, then records when it went
// on, when its answer came back, its status and the `ratelimit-remaining` it carried. A request
// reaches the service between the first two, so one whose answer came in the same window of the
// service as it went on surely arrived in that window; what the service had counted in a window
// is its quota less the least remaining of those answers.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadPipeline } from '../../src/config/pipeline.js';
import { matchRoute } from '../../src/simulator/routes.js';
import { runCli } from '../helpers.js';
import { limitedCluster } from './fixture.js';

const KEY = 'two-pipelines-key-7c2e';
const WINDOW_MS = 2000;
/** The pipeline: its budget is 30,000 CU a minute, here 1000 CU a window of 2 s (fifty transfer pages) shared by the two runs. */
const HUNGRY = fileURLToPath(new URL('./hungry.yaml', import.meta.url));
const CU_PER_MINUTE = loadPipeline(HUNGRY).sources.data!.cuPerMinute!;
const QUOTA = (CU_PER_MINUTE * WINDOW_MS) / 60_000;
/** Each request is held this long on its way: one sent at the end of a window reaches the service in the next. */
const LATENCY_MS = 40;

/** The weight the simulator charges a request (transfer pages, and blocks to find block ranges). */
function weightOf(url: string): number {
  const segments = new URL(url, 'http://x').pathname.split('/').slice(1).map(decodeURIComponent);
  return matchRoute(segments)?.route.weight ?? NaN;
}

const windowOf = (t: number) => Math.floor(t / WINDOW_MS);

let cluster: Awaited<ReturnType<typeof limitedCluster>>;
let runs: Array<{ code: number | null; stdout: string; stderr: string }>;

/**
 * hungry.yaml with the busiest of its three contracts alone (two thirds of its pages): about seven
 * windows of the two runs together, five or so whole ones with both at work
 * (bench/shared-budget.mjs runs all three).
 */
function busiestContract(): string {
  const p = parse(readFileSync(HUNGRY, 'utf8')) as { streams: Array<{ contracts: string[] }> };
  p.streams[0]!.contracts = p.streams[0]!.contracts.slice(2);
  const file = join(mkdtempSync(join(tmpdir(), 'cl-hungry-')), 'hungry.yaml');
  writeFileSync(file, stringify(p));
  return file;
}

beforeAll(async () => {
  cluster = await limitedCluster({ key: KEY, cuPerMinute: CU_PER_MINUTE, windowSeconds: WINDOW_MS / 1000, runs: 2, latencyMs: LATENCY_MS });
  const pipeline = busiestContract();
  const run = (i: number) =>
    runCli(['run', pipeline, '--data-url', cluster.proxies[i]!.url, '--lake', join(cluster.root, `lake${i}`), '--budget-db', cluster.pgdb.url], { CHAINLAKE_API_KEY: KEY });
  runs = await Promise.all([run(0), run(1)]);
}, 300_000);

afterAll(async () => {
  await cluster?.close();
});

describe('two hungry pipelines on one key with --budget-db', () => {
  it('stay within the budget in every window, spend at least 0.95 of it, and get at most 1% 429s', () => {
    for (const r of runs) expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const sent = cluster.proxies.flatMap((p) => p.sent);
    expect(sent.filter((s) => Number.isNaN(weightOf(s.url))).map((s) => s.url)).toEqual([]);
    // Requests surely in one window of the service (see above), every status, and what the
    // service had counted in it.
    const sure = new Map<number, number>();
    const counted = new Map<number, number>();
    for (const s of sent) {
      const w = windowOf(s.at);
      if (w !== windowOf(s.answeredAt)) continue;
      sure.set(w, (sure.get(w) ?? 0) + weightOf(s.url));
      if (s.status === 200 && s.remaining !== undefined) counted.set(w, Math.max(counted.get(w) ?? 0, QUOTA - s.remaining));
    }
    const limited = sent.filter((s) => s.status === 429).length;
    // Whole windows in which both runs were at work: from the later first request to the earlier last.
    const first = Math.max(...cluster.proxies.map((p) => windowOf(Math.min(...p.sent.map((s) => s.at))))) + 1;
    const last = Math.min(...cluster.proxies.map((p) => windowOf(Math.max(...p.sent.map((s) => s.at))))) - 1;
    const both = [...counted].filter(([w]) => w >= first && w <= last).sort(([a], [b]) => a - b);
    const use = both.reduce((n, [, cu]) => n + cu, 0) / (both.length * QUOTA);
    console.log(
      `two pipelines: ${sent.length} data requests, ${limited} 429s (${((100 * limited) / sent.length).toFixed(2)}%), ` +
        `most CU sent in one window ${Math.max(...sure.values())} of ${QUOTA}; CU counted in the ${both.length} whole windows both ran: ` +
        `${both.map(([, cu]) => cu).join(', ')} (use ${use.toFixed(3)}); 429s (run: request, ms into its window) ` +
        cluster.proxies.flatMap((p, i) => p.sent.flatMap((s, k) => (s.status === 429 ? [`${i}: ${k}, ${s.at % WINDOW_MS}`] : []))).join('; '),
    );
    for (const cu of sure.values()) expect(cu).toBeLessThanOrEqual(QUOTA);
    expect(limited / sent.length).toBeLessThanOrEqual(0.01);
    expect(both.length).toBeGreaterThanOrEqual(4);
    expect(use).toBeGreaterThanOrEqual(0.95);
  });
});

