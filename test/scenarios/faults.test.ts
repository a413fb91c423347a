// Faults from the services: the run completes with exactly the tables of a clean run.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { startSimulator, type SimulatorOptions } from '../../src/simulator/server.js';
import type { FaultKind } from '../../src/simulator/faults.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { lakeContents, quiet } from '../helpers.js';

const sims: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (sims.length) await sims.pop()!.close();
});

async function sim(opts: SimulatorOptions = {}) {
  const s = await startSimulator({ port: 0, seed: 5, ...opts });
  sims.push(s);
  return s;
}

/** A table of each refresh and each service: enough requests for every kind of fault, in a fraction of the demo's time. */
const TABLES = new Set(['erc_transfers', 'internal_transactions', 'delegators', 'pending_rewards', 'chain_metrics', 'avg_tps', 'blocks', 'node_info', 'xvm_blocks']);

function demo(url: string, extra: Partial<Pipeline['sources']['data']> = {}): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  p.streams = p.streams.filter((s) => TABLES.has(s.table));
  p.sources.data = { ...p.sources.data, url, ...extra };
  p.sources.metrics = { ...p.sources.metrics, url, ...extra };
  p.sources.node = { ...p.sources.node, url, ...extra };
  return p;
}

const tmp = () => mkdtempSync(join(tmpdir(), 'cl-faults-'));
const fast = { minBackoffMs: 5, maxBackoffMs: 50 };

/** The tables of a run without faults (lakeContents), made and read once for the tests that compare with them. */
let clean: Promise<Record<string, string[]>> | undefined;
function cleanRun(): Promise<Record<string, string[]>> {
  clean ??= (async () => {
    const s = await startSimulator({ port: 0, seed: 5 });
    const lake = tmp();
    try {
      expect((await runPipeline(demo(s.url), { lake, logger: quiet })).status).toBe('ok');
    } finally {
      await s.close();
    }
    return lakeContents(lake);
  })();
  return clean;
}

/** The failed attempts of a run by kind, summed over its streams. */
function faultsOf(report: RunReport): Record<string, number> {
  const faults: Record<string, number> = {};
  for (const s of report.streams) for (const [k, n] of Object.entries(s.faults)) faults[k] = (faults[k] ?? 0) + n;
  return faults;
}
const retries = (report: RunReport) => report.streams.reduce((n, s) => n + s.retries, 0);
const requests = (report: RunReport) => report.streams.reduce((n, s) => n + s.requests, 0);

describe('injected faults', () => {
  // Each fault a service answers with is one failed attempt, counted once under the client's name
  // for it and retried once. Nothing here races the clock: the answers not faulted come at once
  // (the client's timeout of 30 s is not in play), and a slowed answer is held until the client
  // gives up on it (an answer slowed by a set time raced the client's timeout, and on a busy
  // machine an answer not slowed timed out too: 'expected 2 to be 1').
  it('429 (with and without retry-after), 5xx, resets, truncated and malformed bodies: exact tables, each fault counted once', async () => {
    const cleanTables = await cleanRun();
    const kinds: FaultKind[] = ['429', '429-no-retry-after', '500', '502', '503', 'reset', 'truncated', 'malformed'];
    const faulty = await sim({ faults: { rate: 0.25, seed: 11, kinds } });
    const lake = tmp();
    const report = await runPipeline(demo(faulty.url, { retries: 12 }), { lake, logger: quiet, client: fast, flushRows: 300 });
    expect(report.status).toBe('ok');
    expect(await lakeContents(lake)).toEqual(cleanTables);
    const faults = faultsOf(report);
    const injected = faulty.stats.faults;
    for (const k of kinds) expect(injected[k], k).toBeGreaterThan(0);
    expect(faults['429'] ?? 0).toBe(injected['429'] + injected['429-no-retry-after']);
    for (const k of ['500', '502', '503'] as const) expect(faults[k] ?? 0, k).toBe(injected[k]);
    // A reset or a body cut short is a network error, a body that is not JSON is bad JSON.
    expect(faults.network ?? 0).toBe(injected.reset + injected.truncated);
    expect(faults.bad_json ?? 0).toBe(injected.malformed);
    expect(faults.timeout).toBeUndefined();
    expect(retries(report)).toBe(Object.values(injected).reduce((a, b) => a + b, 0));
    expect(requests(report)).toBe(faulty.stats.requests);
  }, 300_000);

  it('a slow answer: one timeout, retried once, exact tables', async () => {
    const cleanTables = await cleanRun();
    // A table of each service, every 60th request (one of about 110) answered after the test, held
    // until the client gives up on it: each costs the client's whole timeout of real time, which a
    // busy machine needs long, so one is enough for the claim.
    const tables = ['erc_transfers', 'chain_metrics', 'blocks'];
    const faulty = await sim({ faults: { rate: 0, every: 60, kinds: ['slow'], slowMs: 3_600_000 } });
    const lake = tmp();
    const p = demo(faulty.url, { timeoutMs: 5000, retries: 12 });
    p.streams = p.streams.filter((x) => tables.includes(x.table));
    const report = await runPipeline(p, { lake, logger: quiet, client: fast, flushRows: 300 });
    expect(report.status).toBe('ok');
    const only = (c: Record<string, string[]>) => Object.fromEntries(Object.entries(c).filter(([t]) => tables.includes(t)));
    expect(only(await lakeContents(lake))).toEqual(only(cleanTables));
    expect(faulty.stats.faults.slow).toBeGreaterThan(0);
    expect(faultsOf(report)).toEqual({ timeout: faulty.stats.faults.slow });
    expect(retries(report)).toBe(faulty.stats.faults.slow);
    expect(requests(report)).toBe(faulty.stats.requests);
  }, 300_000);

  it('a metrics page token that expires mid-listing restarts the partition without duplicates', async () => {
    const cleanTables = await cleanRun();
    // One listing a series (no time ranges at once), paged 50 points at a time: tokens to expire.
    const p = (url: string) => {
      const x = demo(url);
      x.streams = x.streams.filter((s) => s.table === 'chain_metrics').map((s) => ({ ...s, pageSize: 50, chunks: 1 }));
      return x;
    };
    // The server clock jumps 25 hours once a few requests went by: tokens issued before are stale.
    const t0 = Date.now();
    let served = () => 0;
    const s = await sim({ now: () => t0 + (served() > 6 ? 25 * 3600_000 : 0) });
    served = () => s.stats.requests;
    const lake = tmp();
    const report = await runPipeline(p(s.url), { lake, logger: quiet, partitionConcurrency: 1 });
    expect(report.status).toBe('ok');
    expect(report.streams[0]!.restarts).toBeGreaterThan(0);
    // The clean run's series, paged otherwise: the same points.
    expect((await lakeContents(lake)).chain_metrics).toEqual(cleanTables.chain_metrics);
  });

  it('a service down for good: bounded retries, then a failed run that names the endpoint and the last error', async () => {
    const s = await sim({ faults: { rate: 1, kinds: ['503'] } });
    const p = demo(s.url, { retries: 2 });
    p.streams = p.streams.filter((x) => x.table === 'avg_tps');
    const report = await runPipeline(p, { lake: tmp(), logger: quiet, client: fast });
    expect(report.status).toBe('failed');
    expect(report.streams[0]!.errors[0]).toMatch(/GET \/v1\/avg_tps\/43114 \(\/v1\/avg_tps\/\{chainId\} on the metrics service\) failed after 3 tries; last error: .*503/);
  });
});
