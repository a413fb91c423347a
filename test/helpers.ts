// A tiny loopback HTTP server whose answers a test scripts request by request.
import { spawn } from 'node:child_process';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { SourceConfig } from '../src/sources/client.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { RunReport } from '../src/pipeline/report.js';
import { checkPipeline, type Pipeline } from '../src/config/pipeline.js';
import { stringifyExact } from '../src/json.js';

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

export async function scriptedServer(handler: Handler): Promise<{ url: string; requests: IncomingMessage[]; close(): Promise<void> }> {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    handler(req, res, requests.length);
  });
  // Idle connections kept as the simulator keeps them (a minute): CLI runs in this process share
  // its pool of kept-alive sockets, and one reused as Node's 5 s bound closes it is reset.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Answers a request for a chain's latest block (the head a block-ranged listing ends at) with
 * block `head`, for a scripted data service; false for any other request.
 */
export function answerHead(req: IncomingMessage, res: ServerResponse, head: number): boolean {
  if (!/^\/v1\/chains\/[^/]+\/blocks$/.test(new URL(req.url!, 'http://x').pathname)) return false;
  json(res, 200, { blocks: [{ blockNumber: String(head), blockTimestamp: 1_700_000_000 + head, blockHash: `0xhead${head}` }] });
  return true;
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function source(url: string, extra: Partial<SourceConfig> = {}): SourceConfig {
  return { url, keyHeader: 'x-data-api-key', concurrency: 2, requestsPerSecond: 0, timeoutMs: 2000, retries: 4, ...extra };
}

/** Every row of every table of a lake, as sorted JSON lines per table: to compare two lakes. */
export async function lakeContents(lake: string): Promise<Record<string, string[]>> {
  const { openWarehouse } = await import('../src/warehouse/views.js');
  const { query } = await import('../src/warehouse/query.js');
  const { STREAMS } = await import('../src/streams/index.js');
  const { stampColumns } = await import('../src/decl/stream.js');
  const conn = await openWarehouse(lake);
  const out: Record<string, string[]> = {};
  for (const d of STREAMS) {
    // What a run stamps with its clock (when a snapshot was taken) differs between any two runs;
    // node_url names the node asked, which differs between two simulators.
    const volatile = [...stampColumns(d), ...d.columns.filter((c) => c.name === 'node_url').map((c) => c.name)];
    const exclude = volatile.length ? ` EXCLUDE (${volatile.join(', ')})` : '';
    out[d.table] = (await query(conn, `SELECT *${exclude} FROM "${d.table}"`)).rows.map((r) => JSON.stringify(r)).sort();
  }
  conn.closeSync();
  return out;
}

export const quiet = (await import('pino')).pino({ level: 'silent' });

/** A run that did everything it was asked: no error, rows in every stream, no reject, no drift. */
export function expectCleanRun(report: RunReport, o: { drift?: boolean } = {}): void {
  expect(report.status).toBe('ok');
  for (const s of report.streams) {
    expect(s.errors, s.table).toEqual([]);
    expect(s.rows, s.table).toBeGreaterThan(0);
    expect(s.rejects, s.table).toBe(0);
    if (o.drift === false) expect(Object.keys(s.extraFields), s.table).toEqual([]);
  }
}

/** The rows of a query over a lake's views. */
export async function lakeRows(lake: string, sql: string): Promise<Array<Record<string, any>>> {
  const { openWarehouse, viewsFor } = await import('../src/warehouse/views.js');
  const { query } = await import('../src/warehouse/query.js');
  const conn = await openWarehouse(lake, {}, viewsFor(sql));
  try {
    return (await query(conn, sql)).rows;
  } finally {
    conn.closeSync();
  }
}

/** The threads of this process's one DuckDB (load/parquet.ts's), as set now. */
export async function duckThreads(): Promise<number> {
  const { duck } = await import('../src/load/parquet.js');
  const c = await (await duck()).connect();
  try {
    return Number((await c.runAndReadAll(`SELECT current_setting('threads')`)).getRows()[0]![0]);
  } finally {
    c.closeSync();
  }
}

/** Values as one comparable line (∅ for a missing one, JSON for lists and objects, a number kept exact as its text). */
export const line = (...xs: unknown[]) => xs.map((x) => (x === undefined || x === null ? '∅' : typeof x === 'object' ? stringifyExact(x) : String(x))).join('|');
export const sorted = (xs: string[]) => [...xs].sort();

/** What a run said above info in its JSON log (warnings, errors, the failed partitions): what explains its exit code. */
export function aboveInfo(stderr: string): string {
  return stderr.split('\n').filter((l) => l.trim() && !l.includes('"level":30')).join('\n').slice(-4000);
}

/** Runs the built CLI as a child process without blocking this one (a simulator here keeps answering). */
/** `onStderr` sees the standard error as it grows: a test can wait for a line instead of a time. */
export function runCli(args: string[], env: Record<string, string> = {}, onStderr?: (stderr: string) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = fileURLToPath(new URL('../bin/chainlake.js', import.meta.url));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      onStderr?.(stderr);
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * A loopback proxy in front of `target` that records every request (method, URL, headers, body).
 * Requests for which `o.refuse` returns true get a 400 instead (as the service answers a bad query).
 * `o.onRequest` sees each request as it is recorded, before it is answered: a test can stop a run
 * at its nth request, an event, instead of polling on a timer (late by however long a busy
 * machine delays the timer).
 */
export async function recordingProxy(
  target: string,
  o: { refuse?: (r: Recorded) => boolean; delayMs?: number; onRequest?: (r: Recorded) => void } = {},
): Promise<{ url: string; requests: Recorded[]; inFlight: { now: number; most: number }; close(): Promise<void> }> {
  const requests: Recorded[] = [];
  const inFlight = { now: 0, most: 0 };
  const to = new URL(target);
  const server = await scriptedServer((req, res) => {
    const chunks: Buffer[] = [];
    inFlight.most = Math.max(inFlight.most, ++inFlight.now);
    res.on('close', () => inFlight.now--);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const r: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: body.toString('utf8') };
      requests.push(r);
      o.onRequest?.(r);
      if (o.refuse?.(r)) return json(res, 400, { statusCode: 400, error: 'Bad Request', message: 'refused by the test proxy' });
      // As a service far away answers: later (a simulator on loopback answers at once).
      setTimeout(() => {
        const out = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        out.on('error', () => res.destroy());
        out.end(body);
      }, o.delayMs ?? 0);
    });
  });
  return { url: server.url, requests, inFlight, close: server.close };
}

/** The simulator that accepts only `apiKey`, behind a recording proxy (`proxy.url` is where to send). */
export async function keyedSimulator(apiKey: string): Promise<{ sim: Simulator; proxy: Awaited<ReturnType<typeof recordingProxy>>; close(): Promise<void> }> {
  const sim = await startSimulator({ apiKeys: [apiKey] });
  const proxy = await recordingProxy(sim.url);
  return {
    sim,
    proxy,
    close: async () => {
      await proxy.close();
      await sim.close();
    },
  };
}

/**
 * The demo pipeline cut to a table of each kind (append in chunks, append with a carry, a series,
 * merged into the table, replaced, snapshots, the node's), written to a temporary file whose path
 * is returned: what a scenario proves of every kind, in a fraction of the whole demo's time.
 */
export function demoOfEachKind(): string {
  return demoOf(['erc_transfers', 'internal_transactions', 'chain_metrics', 'avg_tps', 'delegators', 'contracts', 'pending_rewards', 'native_balances', 'node_info', 'blocks']);
}

/** The demo pipeline cut to the streams of `tables`, written to a temporary file whose path is returned. */
export function demoOf(tables: readonly string[]): string {
  const demo = parse(readFileSync('pipelines/demo.yaml', 'utf8')) as { streams: Array<{ table: string }> };
  const file = join(mkdtempSync(join(tmpdir(), 'cl-kinds-')), 'kinds.yaml');
  writeFileSync(file, stringify({ ...demo, streams: demo.streams.filter((s) => tables.includes(s.table)) }));
  return file;
}

/**
 * One run at a world time and a wall time: only Date is faked, so a snapshot's stamp (the run's
 * wall clock) moves on without waiting.
 */
export async function runAtTimes<T>(clock: { t: number }, worldTime: number, wall: number, run: () => Promise<T>): Promise<T> {
  clock.t = worldTime;
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(wall * 1000);
  try {
    return await run();
  } finally {
    vi.useRealTimers();
  }
}

/**
 * A simulator of `seed` and one run, into a new lake, of the pipeline `of` makes for it: what a
 * describe block of a stream's tests shares (its beforeAll; the caller closes `sim` after).
 */
export async function runOnSimulator(seed: number, of: (url: string) => Pipeline, flushRows: number): Promise<{ sim: Simulator; lake: string; p: Pipeline; report: RunReport }> {
  const { runPipeline } = await import('../src/pipeline/run.js');
  const sim = await startSimulator({ seed });
  const lake = mkdtempSync(join(tmpdir(), 'cl-sim-run-'));
  const p = of(sim.url);
  return { sim, lake, p, report: await runPipeline(p, { lake, logger: quiet, flushRows }) };
}

/**
 * A describe block's run: runOnSimulator before its tests (the simulator closed after them), and a
 * first test that every partition completed without rejects or drift. Read its fields in tests.
 */
export function simulatorRun(seed: number, of: (url: string) => Pipeline, flushRows: number): { sim: Simulator; lake: string; p: Pipeline; report: RunReport } {
  const run = {} as { sim: Simulator; lake: string; p: Pipeline; report: RunReport };
  beforeAll(async () => {
    Object.assign(run, await runOnSimulator(seed, of, flushRows));
  });
  afterAll(async () => {
    await run.sim?.close();
  });
  it('completes every partition without rejects or drift', () => expectCleanRun(run.report, { drift: false }));
  return run;
}

/** A second run of `p` into `lake`, the world not moved: it succeeds and `tables` gain no row. */
export async function expectStillRerun(lake: string, p: Pipeline, tables: readonly string[]): Promise<void> {
  const { runPipeline } = await import('../src/pipeline/run.js');
  const count = () => lakeRows(lake, tables.map((t) => `SELECT '${t}' t, count(*) n FROM ${t}`).join(' UNION ALL ') + ' ORDER BY t');
  const before = await count();
  expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
  expect(await count()).toEqual(before);
}

/** What `checkPipeline` says of `streams` in a pipeline of one keyed data source ('' when it takes them), as from x.yaml. */
export function pipelineProblem(streams: Array<Record<string, unknown>>): string {
  try {
    checkPipeline({ name: 'x', sources: { data: { url: 'http://127.0.0.1:1', apiKey: 'k' } }, streams }, 'x.yaml');
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}
