// Faults from the services: the run completes with exactly the tables of a clean run.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { startSimulator, type SimulatorOptions } from '../../src/simulator/server.js';
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

describe('injected faults', () => {
  it('429 (with and without retry-after), 5xx, resets, slow, truncated and malformed bodies: exact tables', async () => {
    const clean = await sim();
    const cleanLake = tmp();
    expect((await runPipeline(demo(clean.url), { lake: cleanLake, logger: quiet })).status).toBe('ok');

    const faulty = await sim({ faults: { rate: 0.25, seed: 11, slowMs: 1500 } });
    const lake = tmp();
    const report = await runPipeline(demo(faulty.url, { timeoutMs: 400, retries: 12 }), { lake, logger: quiet, client: fast, flushRows: 300 });
    expect(report.status).toBe('ok');
    expect(await lakeContents(lake)).toEqual(await lakeContents(cleanLake));
    const faults: Record<string, number> = {};
    for (const s of report.streams) for (const [k, n] of Object.entries(s.faults)) faults[k] = (faults[k] ?? 0) + n;
    // Every kind the simulator injected shows up in the report under the client's name for it.
    const injected = faulty.stats.faults;
    expect(faults['429'] ?? 0).toBe(injected['429'] + injected['429-no-retry-after']);
    expect(faults['500'] ?? 0).toBe(injected['500']);
    expect(faults['503'] ?? 0).toBe(injected['503']);
    // Faults of the transport (a slow answer, a reset, a body cut short or malformed) are each seen
    // as a timeout, a network error or bad JSON; which one can depend on timing (a reset while a
    // busy client has already timed out), and on a busy machine an answer not slowed may take past
    // the timeout too: a timeout of its own. So: every one seen, none missed, each retried.
    const transport = (faults.timeout ?? 0) + (faults.network ?? 0) + (faults.bad_json ?? 0);
    const sent = injected.slow + injected.reset + injected.truncated + injected.malformed;
    expect(transport).toBeGreaterThanOrEqual(sent);
    expect(faults.timeout ?? 0).toBeGreaterThanOrEqual(injected.slow > 0 ? 1 : 0);
    const retries = report.streams.reduce((n, s) => n + s.retries, 0);
    expect(retries).toBe(Object.values(injected).reduce((a, b) => a + b, 0) + (transport - sent));
  }, 120_000);

  it('a metrics page token that expires mid-listing restarts the partition without duplicates', async () => {
    const clean = await sim();
    const cleanLake = tmp();
    const p = (url: string) => {
      const x = demo(url);
      // One listing a series (no time ranges at once), paged 50 points at a time: tokens to expire.
      x.streams = x.streams.filter((s) => s.table === 'chain_metrics').map((s) => ({ ...s, pageSize: 50, chunks: 1 }));
      return x;
    };
    await runPipeline(p(clean.url), { lake: cleanLake, logger: quiet });
    // The server clock jumps 25 hours once a few requests went by: tokens issued before are stale.
    const t0 = Date.now();
    let served = () => 0;
    const s = await sim({ now: () => t0 + (served() > 6 ? 25 * 3600_000 : 0) });
    served = () => s.stats.requests;
    const lake = tmp();
    const report = await runPipeline(p(s.url), { lake, logger: quiet, partitionConcurrency: 1 });
    expect(report.status).toBe('ok');
    expect(report.streams[0]!.restarts).toBeGreaterThan(0);
    expect(await lakeContents(lake)).toEqual(await lakeContents(cleanLake));
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
