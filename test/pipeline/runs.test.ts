// Run-level behaviour: schema drift and rejects, --strict, one writer per lake, --full-refresh.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkPipeline, loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runId, runPipeline } from '../../src/pipeline/run.js';
import { startSimulator } from '../../src/simulator/server.js';
import { LakeLock } from '../../src/state/lock.js';
import { StateStore } from '../../src/state/store.js';
import { STREAM_BY_TABLE } from '../../src/streams/index.js';
import { openWarehouse } from '../../src/warehouse/views.js';
import { query } from '../../src/warehouse/query.js';
import { json, lakeContents, quiet, scriptedServer } from '../helpers.js';

const BIN = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-runs-'));
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

describe('run ids', () => {
  it('differ for runs of one process started in the same second (each run keeps its report)', () => {
    const ids = Array.from({ length: 12 }, () => runId());
    expect(new Set(ids).size).toBe(12);
    expect(ids[0]).toMatch(/^\d{8}T\d{6}Z-\d+(-\d+)?$/);
  });
});

describe('schema drift and rejects', () => {
  async function driftServer() {
    const s = await scriptedServer((_req, res) =>
      json(res, 200, {
        results: [
          { value: 1.5, timestamp: 1700006400, confidence: 'high' },
          { value: 'abc', timestamp: 1700092800 },
          { value: 2 },
        ],
        status: 200,
        lastRun: 1,
      }),
    );
    closers.push(s.close);
    const p = checkPipeline({ name: 'drift', sources: { metrics: { url: s.url } }, streams: [{ table: 'avg_tps', chainIds: ['43114'] }] }, 'drift.yaml');
    return p;
  }

  it('ignores and counts an extra field; sends rows with a wrong type or a missing field to _rejects', async () => {
    const lake = tmp();
    const report = await runPipeline(await driftServer(), { lake, logger: quiet });
    expect(report.status).toBe('ok');
    const s = report.streams[0]!;
    expect(s.rows).toBe(1);
    expect(s.rejects).toBe(2);
    expect(s.extraFields).toEqual({ confidence: 1 });
    const conn = await openWarehouse(lake);
    const rejects = (await query(conn, `SELECT table_name, reason, raw_json FROM _rejects ORDER BY reason`)).rows;
    expect(rejects).toEqual([
      { table_name: 'avg_tps', reason: 'timestamp: required, missing', raw_json: '{"value":2}' },
      { table_name: 'avg_tps', reason: 'value: expected a number, got "abc"', raw_json: '{"value":"abc","timestamp":1700092800}' },
    ]);
    expect((await query(conn, `SELECT value FROM avg_tps`)).rows).toEqual([{ value: 1.5 }]);
  });

  it('--strict turns rejects into a failed run', async () => {
    const report = await runPipeline(await driftServer(), { lake: tmp(), logger: quiet, strict: true });
    expect(report.status).toBe('failed');
    expect(report.streams[0]!.errors.join()).toContain('2 rows rejected (--strict)');
  });
});

describe('one writer per lake', () => {
  it('a second run refuses with exit 1, or waits with --wait', async () => {
    const sim = await startSimulator({ port: 0 });
    closers.push(() => sim.close());
    const lake = tmp();
    const dir = tmp();
    const p = join(dir, 'p.yaml');
    writeFileSync(p, `name: lock\nsources:\n  metrics: { url: "${sim.url}" }\nstreams:\n  - { table: avg_tps, chainIds: ["43114"] }\n`);
    const held = await LakeLock.tryAcquire(lake);
    const run = (args: string[], onStderr: (stderr: string) => void = () => undefined) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        // No warehouse file after it: the lock is what is shown, and the file's views cost a run CPU.
        const c = spawn(process.execPath, [BIN, 'run', p, '--lake', lake, '--no-warehouse', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        c.stderr.on('data', (d) => onStderr((stderr += d)));
        c.on('close', (code) => resolve({ code, stderr }));
      });
    const refused = await run([]);
    // A lake in use has its own exit code: a script can wait and rerun.
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('is in use by another chainlake run');
    // The lock is let go once the second run says it waits (a fixed delay could end before a run
    // on a busy machine got to the lock, and the test would not see it wait).
    let said!: () => void;
    const saysItWaits = new Promise<void>((r) => (said = r));
    const waiting = run(['--wait'], (stderr) => stderr.includes('waiting for the other run on this lake') && said());
    await Promise.race([saysItWaits, waiting]);
    await held.release();
    const waited = await waiting;
    expect(waited.stderr).toContain('waiting for the other run on this lake');
    expect(waited.code, waited.stderr).toBe(0);
  });
});

describe('--full-refresh', () => {
  it('rebuilds from scratch; a rebuild cut short leaves the old tables whole and resumes', async () => {
    const sim = await startSimulator({ port: 0, seed: 3 });
    closers.push(() => sim.close());
    const p: Pipeline = loadPipeline('pipelines/demo.yaml');
    p.sources.data.url = sim.url;
    p.sources.metrics.url = sim.url;
    p.sources.node.url = sim.url;
    const all = ['erc_transfers', 'internal_transactions', 'delegators', 'chain_metrics'];
    // The refreshed tables and two that are not (they must stay as they are). Tables keyed by the
    // snapshot time gain a snapshot each run: "unchanged" is of the others.
    p.streams = p.streams.filter((s) => [...all, 'avg_tps', 'blocks'].includes(s.table) && !STREAM_BY_TABLE.get(s.table)!.key.includes('snapshot_at'));
    const lake = tmp();
    await runPipeline(p, { lake, logger: quiet });
    const before = await lakeContents(lake);
    expect(Object.entries(before).filter(([, rows]) => rows.length > 0).map(([t]) => t).sort()).toEqual([...all, 'avg_tps', 'blocks'].sort());
    // Cut a full refresh short once some rebuilt files are committed under _rebuild/.
    const ac = new AbortController();
    const rebuilt = () => (existsSync(join(lake, '_rebuild')) ? readdirSync(join(lake, '_rebuild'), { recursive: true }).filter((f) => String(f).endsWith('.parquet')) : []);
    const cut = runPipeline(p, { lake, logger: quiet, fullRefresh: all, flushRows: 100, signal: ac.signal });
    const timer = setInterval(() => rebuilt().length > 0 && ac.abort(new Error('cut')), 2);
    const r1 = await cut;
    clearInterval(timer);
    expect(r1.status).toBe('failed');
    expect(new StateStore(lake).all().some((s) => s.rebuild)).toBe(true);
    expect(await lakeContents(lake)).toEqual(before);
    const r2 = await runPipeline(p, { lake, logger: quiet, fullRefresh: all });
    expect(r2.status).toBe('ok');
    expect(await lakeContents(lake)).toEqual(before);
    expect(rebuilt()).toEqual([]);
    for (const s of new StateStore(lake).all()) expect(s.rebuild, `${s.table} ${s.partition}`).toBeUndefined();
  });
});
