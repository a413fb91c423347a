// A lake for the warehouse tests (check, export, report, sql, warehouse): the demo pipeline's
// streams of the given tables, run against the embedded simulator on loopback into a fresh
// temporary folder, or one of the lakes shared by the files that only read them (the demo lake,
// the whole pipeline's and its second run's).
import { spawnSync } from 'node:child_process';
import fs, { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format } from 'node:util';
import { loadPipeline, type Pipeline } from '../src/config/pipeline.js';
import { runPipeline, type RunOptions } from '../src/pipeline/run.js';
import type { RunReport } from '../src/pipeline/report.js';
import { startSimulator, type SimulatorOptions } from '../src/simulator/server.js';
import { STREAMS } from '../src/streams/index.js';
import { quiet } from './helpers.js';
import { madeOnce, retry } from './made-once.js';

export const DEMO_TABLES = ['erc_transfers', 'internal_transactions', 'historical_rewards', 'pending_rewards', 'delegators', 'chain_metrics', 'avg_tps', 'icm_messages', 'validators', 'platform_transactions', 'address_token_transfers', 'platform_balances', 'nft_tokens', 'network_details', 'xchain_asset_transactions'];

export function demoPipeline(url: string, tables: string[]): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = url;
  p.streams = p.streams.filter((s) => tables.includes(s.table));
  return p;
}

/**
 * Runs the demo streams of `tables` into `lake` (a new temporary folder by default). `onAnswer`:
 * what the simulator is told of each answer it serves.
 */
export async function demoLake(tables: string[] = DEMO_TABLES, o: { lake?: string; seed?: number; run?: Partial<RunOptions>; onAnswer?: SimulatorOptions['onAnswer'] } = {}): Promise<{ lake: string; report: RunReport }> {
  const sim = await startSimulator({ port: 0, seed: o.seed ?? 5, ...(o.onAnswer ? { onAnswer: o.onAnswer } : {}) });
  const lake = o.lake ?? mkdtempSync(join(tmpdir(), 'cl-wh-'));
  try {
    const report = await runPipeline(demoPipeline(sim.url, tables), { lake, logger: quiet, ...o.run });
    return { lake, report };
  } finally {
    await sim.close();
  }
}

/**
 * A lake at `to` of the lake `from`'s `tables` alone (their files, states and raw pages) and its run
 * reports: for a test of what a table or two show as well as fifteen, whose commands then bind,
 * copy or check only these.
 */
export function lakeOf(tables: string[], from: string, to: string): string {
  for (const t of tables)
    for (const sub of [t, join('_state', t), join('_raw', t)]) if (existsSync(join(from, sub))) cpSync(join(from, sub), join(to, sub), { recursive: true });
  cpSync(join(from, '_runs'), join(to, '_runs'), { recursive: true });
  return to;
}

let shared: Promise<string> | undefined;

/**
 * The demo lake of DEMO_TABLES for the files that only read it (a test that changes a lake makes
 * or copies its own), made once per test run (see `madeOnce`). It is alone in its folder: what
 * `chainlake warehouse` writes next to it by default goes there.
 */
export function sharedDemoLake(): Promise<string> {
  shared ??= madeOnce('demo-lake', async (dir) => {
    await demoLake(DEMO_TABLES, { lake: join(dir, 'lake') });
  }).then((dir) => join(dir, 'lake'), retry(() => (shared = undefined)));
  return shared;
}

/** Every table the streams declare: the whole demo pipeline. */
export const ALL_TABLES = [...new Set(STREAMS.map((d) => d.table))];

/** A lake of the whole demo pipeline, with its run's report and a sample of what its simulator served. */
export interface WholeDemoLake {
  lake: string;
  report: RunReport;
  /** Per route of the data and metrics services, the bodies of its first 25 successful answers. */
  served: Record<string, unknown[]>;
}

/** The whole demo pipeline's run (seed 5, flushes of 200 rows: several files a partition). */
const WHOLE_RUN: Partial<RunOptions> = { flushRows: 200 };
let whole: Promise<WholeDemoLake> | undefined;
let rerun: Promise<{ lake: string; report: RunReport }> | undefined;

/**
 * The whole demo pipeline (ALL_TABLES) run once into a lake, made once per test run for the files
 * that read every table (end to end, Iceberg): read-only, copy it (or `lakeOf` some tables) to change it.
 */
export function sharedWholeLake(): Promise<WholeDemoLake> {
  whole ??= madeOnce('whole-lake', async (dir) => {
    const served: Record<string, unknown[]> = {};
    const { report } = await demoLake(ALL_TABLES, {
      lake: join(dir, 'lake'),
      run: WHOLE_RUN,
      onAnswer: (a) => {
        if (a.service === 'node' || a.status >= 300) return;
        const got = (served[a.route] ??= []);
        if (got.length < 25) got.push(a.body);
      },
    });
    writeFileSync(join(dir, 'report.json'), JSON.stringify(report));
    writeFileSync(join(dir, 'served.json'), JSON.stringify(served));
  }).then((dir) => ({ lake: join(dir, 'lake'), report: json(join(dir, 'report.json')) as RunReport, served: json(join(dir, 'served.json')) as Record<string, unknown[]> }), retry(() => (whole = undefined)));
  return whole;
}

/** `sharedWholeLake` after a second run of the same pipeline on the same world: read-only too. */
export function sharedRerunLake(): Promise<{ lake: string; report: RunReport }> {
  rerun ??= madeOnce('whole-lake-rerun', async (dir) => {
    cpSync((await sharedWholeLake()).lake, join(dir, 'lake'), { recursive: true });
    // Snapshots are keyed by the second (a run within the same second replaces its snapshot):
    // the second run starts in a later second than the first run's snapshots.
    await new Promise((r) => setTimeout(r, 1005 - (Date.now() % 1000)));
    const { report } = await demoLake(ALL_TABLES, { lake: join(dir, 'lake'), run: WHOLE_RUN });
    writeFileSync(join(dir, 'report.json'), JSON.stringify(report));
  }).then((dir) => ({ lake: join(dir, 'lake'), report: json(join(dir, 'report.json')) as RunReport }), retry(() => (rerun = undefined)));
  return rerun;
}

const json = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));

const BIN = fileURLToPath(new URL('../bin/chainlake.js', import.meta.url));

function spawnCli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 1 << 28 });
}

/** The built CLI (dist/, which `npm test` compiles first), as a user runs it. */
export function cli(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnCli(args, env);
  return { code: r.status, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}

/** `cli` with stdout as bytes (binary output such as Arrow IPC, which text would mangle). */
export function cliBytes(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: Buffer; stderr: string } {
  const r = spawnCli(args, env);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}

type Write = (chunk: string | Uint8Array, encoding?: BufferEncoding | ((err?: Error | null) => void), done?: (err?: Error | null) => void) => boolean;

/**
 * The CLI's `main` in this process, with what it writes to standard output and error captured and
 * `env` set for the call: what `cliBytes` shows, without a process's start-up (most of a short
 * command's CPU) and with the modules a worker has loaded already. The log lines are captured too:
 * pino writes to the file descriptor itself (fs.writeSync). One call at a time: they share this
 * process's streams, so calls made at once take turns. `cwd`: the folder the call runs in (the
 * process's, for its turn only, as a child's would be). A test of the process boundary (signals, pipes, the binary) keeps `cli`.
 */
export function cliHereBytes(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const turn = inTurn.then(() => cliOnce(args, env, cwd));
  inTurn = turn.catch(() => undefined);
  return turn;
}

// Calls made at once (a Promise.all of commands) run one after another.
let inTurn: Promise<unknown> = Promise.resolve();

async function cliOnce(args: string[], env: Record<string, string>, cwd: string | undefined): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const { main } = await import('../src/cli/main.js');
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const bytes = (chunk: string | Uint8Array, encoding?: unknown) => (typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk));
  const capture = (into: Buffer[]): Write => (chunk, encoding, done) => {
    into.push(bytes(chunk, encoding));
    (typeof encoding === 'function' ? encoding : done)?.();
    return true;
  };
  const saved = { log: console.log, error: console.error, out: process.stdout.write, err: process.stderr.write, writeSync: fs.writeSync, exitCode: process.exitCode, outTTY: process.stdout.isTTY, errTTY: process.stderr.isTTY, listeners: process.stdout.listeners('error') };
  const before = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const folder = process.cwd();
  Object.assign(process.env, env);
  if (cwd !== undefined) process.chdir(cwd);
  process.stdout.write = capture(out) as typeof process.stdout.write;
  process.stderr.write = capture(err) as typeof process.stderr.write;
  // yargs writes --help and --version with console.log, which vitest takes over in a test.
  console.log = (...a: unknown[]) => void out.push(Buffer.from(`${format(...a)}\n`));
  console.error = (...a: unknown[]) => void err.push(Buffer.from(`${format(...a)}\n`));
  // As the spawned CLI's streams, pipes: no terminal's pretty logs or widths.
  process.stdout.isTTY = false;
  process.stderr.isTTY = false;
  fs.writeSync = ((fd: number, buffer: string | NodeJS.ArrayBufferView, ...rest: any[]) => {
    if (fd !== 1 && fd !== 2) return (saved.writeSync as (...a: unknown[]) => number)(fd, buffer, ...rest);
    const b = typeof buffer === 'string' ? Buffer.from(buffer, typeof rest[1] === 'string' ? (rest[1] as BufferEncoding) : 'utf8') : Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    (fd === 1 ? out : err).push(Buffer.from(b));
    return b.length;
  }) as typeof fs.writeSync;
  try {
    const code = await main(args);
    return { code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') };
  } finally {
    console.log = saved.log;
    console.error = saved.error;
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    fs.writeSync = saved.writeSync;
    process.stdout.isTTY = saved.outTTY;
    process.stderr.isTTY = saved.errTTY;
    process.exitCode = saved.exitCode;
    process.chdir(folder);
    // main's listener for a closed pipe, one a call.
    for (const l of process.stdout.listeners('error')) if (!saved.listeners.includes(l)) process.stdout.off('error', l as (...a: unknown[]) => void);
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** `cliHereBytes` with standard output as text: `cli` in this process. */
export async function cliHere(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await cliHereBytes(args, env);
  return { ...r, stdout: r.stdout.toString('utf8') };
}
