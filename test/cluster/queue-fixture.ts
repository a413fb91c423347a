// What the tests of `chainlake run --queue` with `chainlake worker`s stand on (queue.test.ts:
// workers killed mid-job; queue-away.test.ts: a worker paused, the database going away, bad
// input): a real PostgreSQL, the simulator with its rate limit on (the runs take long enough for
// a kill or a pause to land mid-job), the lake of the same pipeline run by one process to compare
// with, and worker processes whose output is kept for the leak search. The two files run side by
// side, each with its own database and simulator.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { STREAMS } from '../../src/streams/index.js';
import { aboveInfo, demoOf, demoOfEachKind, lakeContents, runCli } from '../helpers.js';
import { leakFinder } from '../leaks.js';
import { startPostgres, type PgFixture } from '../pg-fixture.js';

export const KEY = 'queue-key-DO-NOT-LEAK-7d20';
const BIN = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));
/** A lost worker's job is handed on after this many seconds without a lease renewed. */
export const LEASE_SECONDS = '2';
/**
 * The lease of the runs that must finish though their workers are killed or the database goes
 * away. A live worker's commit must end within it, or the lease rightly refuses it and the job
 * fails (so did the run): on a machine busy with other work a commit took 3.5 s on disk and
 * 11.8-15.2 s on an object store (several requests and an Iceberg publish), past the 2 and 8 s
 * these runs had. A kill no longer waits on it: the database ends a killed worker's session and
 * its job is handed on at once (a paused worker's waits for the bound, tested in queue-away).
 */
export const WORK_LEASE_SECONDS = '10';
/** Each run's batches, and no warehouse file after it: the tables are read from the lake, and its views cost a run CPU. */
const RUN_FLAGS = ['--flush-rows', '100', '--no-warehouse'];

/** What a file's beforeAll starts; its workers' and runs' output is kept in `outputs`. */
export const world = { outputs: [] as string[] } as {
  pgdb: PgFixture;
  sim: Simulator;
  root: string;
  pipeline: string;
  reference: Record<string, string[]>;
  outputs: string[];
};

/** `tables`: the demo's streams of these tables; by default those of each kind of refresh. */
export async function startQueueWorld(tables?: string[]): Promise<void> {
  world.root = mkdtempSync(join(tmpdir(), 'cl-queue-'));
  world.pipeline = tables ? demoOf(tables) : demoOfEachKind();
  world.pgdb = await startPostgres();
  // 18,000 CU a minute in 2-second windows: the demo's data streams take several windows.
  world.sim = await startSimulator({ seed: 1, apiKeys: [KEY], rateLimit: { data: { cuPerMinute: 18000, windowSeconds: 2 }, blockAfterLimitedRequests: 1e9 } });
  // The world of the same seed without the rate limit, which only slows the queued runs down to
  // let kills land mid-job: the reference need not wait on it.
  const free = await startSimulator({ seed: 1, apiKeys: [KEY] });
  try {
    const at = ['--data-url', free.url, '--metrics-url', free.url, '--node-url', free.url];
    const one = await runCli(['run', world.pipeline, '--lake', join(world.root, 'one'), ...at, ...RUN_FLAGS, '--quiet'], { CHAINLAKE_API_KEY: KEY });
    expect(one.code, one.stderr).toBe(0);
  } finally {
    await free.close();
  }
  world.reference = await lakeContents(join(world.root, 'one'));
}

export async function stopQueueWorld(): Promise<void> {
  await world.sim?.close();
  await world.pgdb?.close();
  if (world.root) rmSync(world.root, { recursive: true, force: true });
}

/** `chainlake run` of the pipeline through the queue, against the rate-limited simulator. */
export function queuedRun(lake: string, env: Record<string, string>, onStderr?: (stderr: string) => void) {
  const { sim, pgdb, pipeline } = world;
  const args = ['run', pipeline, '--lake', lake, '--data-url', sim.url, '--metrics-url', sim.url, '--node-url', sim.url, '--queue', pgdb.url, ...RUN_FLAGS, '--log-format', 'json'];
  return runCli(args, { CHAINLAKE_API_KEY: KEY, ...env }, onStderr);
}

export type Worker = ReturnType<typeof worker>;

/**
 * A worker process, its output kept for the leak search. `ready`: it said it waits for jobs, so
 * its handlers of SIGTERM are in place (a signal before that ends it as any process, without 0).
 * `heard(text)`: it said that, or ended. `started()`: it started another job (or ended);
 * `working()`: it has a job started and not ended.
 */
export function worker(
  lake: string,
  env: Record<string, string>,
): {
  child: ChildProcess;
  done: Promise<number | null>;
  ready: Promise<void>;
  heard: (text: string) => Promise<void>;
  started: () => Promise<void>;
  working: () => boolean;
  said: () => string;
} {
  const child = spawn(process.execPath, [BIN, 'worker', '--queue', world.pgdb.url, '--lake', lake, '--concurrency', '2', '--log-format', 'json'], {
    env: { ...process.env, CHAINLAKE_API_KEY: KEY, CHAINLAKE_JOB_LEASE_SECONDS: LEASE_SECONDS, ...env },
  });
  let out = '';
  let ended = false;
  const waiting: Array<{ text: string; resolve: () => void }> = [];
  const read = (c: Buffer) => {
    out += c.toString();
    for (const w of waiting.splice(0)) {
      if (out.includes(w.text)) w.resolve();
      else waiting.push(w);
    }
  };
  const heard = (text: string) => new Promise<void>((resolve) => (ended || out.includes(text) ? resolve() : waiting.push({ text, resolve })));
  const ready = heard('worker started');
  const times = (msg: string) => out.split(`"msg":"${msg}"`).length - 1;
  const started = () => {
    const before = times('job started');
    return new Promise<void>((resolve) => {
      const check = () => (ended || times('job started') > before ? resolve() : waiting.push({ text: '"msg":"job started"', resolve: check }));
      check();
    });
  };
  const working = () => times('job started') > times('job done') + times('job failed') + times('job lost');
  child.stdout!.on('data', read);
  child.stderr!.on('data', read);
  const done = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      world.outputs.push(out);
      ended = true;
      for (const w of waiting) w.resolve();
      resolve(code);
    }),
  );
  // What a worker said above info (warnings, errors, a crash's stack): what explains its exit code.
  const said = () => out.split('\n').filter((l) => l.trim() && !l.includes('"level":30')).join('\n').slice(-3000);
  return { child, done, ready, heard, started, working, said };
}

/** What explains a queued run's exit code: its own lines above info, and its workers' errors (a killed one's too). */
export function whyFailed(stderr: string): string {
  const errors = world.outputs.flatMap((o) => o.split('\n').filter((l) => l.includes('"level":50'))).slice(-20).join('\n');
  return `${aboveInfo(stderr)}\nworkers' errors:\n${errors}`;
}

/**
 * The tables that differ from the one-process lake, with their first differing rows. A table keyed
 * by the time of its snapshot gains a snapshot per attempt that got that far (a job retried after
 * its commit, as a rerun of one process would): it is compared as a set of rows, without the time.
 */
export function differences(tables: Record<string, string[]>): string[] {
  const snapshots = new Set(STREAMS.filter((d) => d.key.includes('snapshot_at')).map((d) => d.table));
  return Object.keys(world.reference).flatMap((t) => {
    const set = (xs: string[]) => (snapshots.has(t) ? [...new Set(xs)] : xs);
    const a = set(tables[t] ?? []);
    const b = set(world.reference[t]!);
    if (JSON.stringify(a) === JSON.stringify(b)) return [];
    const extra = a.filter((x) => !b.includes(x)).slice(0, 2);
    const missing = b.filter((x) => !a.includes(x)).slice(0, 2);
    return [`${t}: ${a.length} rows, one process ${b.length}; extra ${extra.join(' ')}; missing ${missing.join(' ')}`];
  });
}

/** Where the queue's password or the API key appear: in the output kept, or in a file under `dirs`. */
export function leaks(dirs: string[]): string[] {
  const find = leakFinder([new URL(world.pgdb.url).password, KEY]);
  const found = world.outputs.flatMap((o, i) => find(`output ${i}`, Buffer.from(o)));
  const walk = (dir: string): string[] =>
    existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)])) : [];
  for (const dir of dirs) for (const f of walk(dir)) found.push(...find(f, readFileSync(f)));
  return found;
}
