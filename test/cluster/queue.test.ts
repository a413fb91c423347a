// `chainlake run --queue` with `chainlake worker`s on a real PostgreSQL: two worker processes,
// one of them killed (SIGKILL) again and again during the run and replaced by a new one, give the
// same tables as one process, with the lake on disk and on an object store. The simulator's rate
// limit is on, so the run takes long enough for kills to land mid-job. The queue's password and
// the API key reach no output and no file of the lake.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { STREAMS } from '../../src/streams/index.js';
import { WorkQueue } from '../../src/cluster/queue.js';
import { aboveInfo, demoOf, demoOfEachKind, lakeContents, runCli } from '../helpers.js';
import { leakFinder } from '../leaks.js';
import { startPostgres, type PgFixture } from '../pg-fixture.js';
import { BUCKET, downloadLake, s3Env, startS3, useEnv, type S3Server } from '../s3-fixture.js';

const KEY = 'queue-key-DO-NOT-LEAK-7d20';
const BIN = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));
/** A lost worker's job is handed on after this many seconds without a lease renewed. */
const LEASE_SECONDS = '2';
/**
 * The lease of the runs that must finish though their workers are killed or the database goes
 * away. A live worker's commit must end within it, or the lease rightly refuses it and the job
 * fails (so did the run): on a machine busy with other work a commit took 3.5 s on disk and
 * 11.8-15.2 s on an object store (several requests and an Iceberg publish), past the 2 and 8 s
 * these runs had. A kill no longer waits on it: the database ends a killed worker's session and
 * its job is handed on at once (a paused worker's waits for the bound, tested below).
 */
const WORK_LEASE_SECONDS = '10';
const S3_LEASE_SECONDS = '30';
/** Each run's batches, and no warehouse file after it: the tables are read from the lake, and its views cost a run CPU. */
const RUN_FLAGS = ['--flush-rows', '100', '--no-warehouse'];
/**
 * On the object store, batches of 500: each commit there is several requests and an Iceberg
 * publish, most of the case's work at 100; the larger tables' jobs still commit more than once,
 * and a kill lands between their commits or in one as on disk. The tables are the same whatever
 * the batches.
 */
const S3_RUN_FLAGS = ['--flush-rows', '500', '--no-warehouse'];

let pgdb: PgFixture;
let sim: Simulator;
let s3: S3Server;
let root: string;
let reference: Record<string, string[]>;
/** The demo's tables of each kind: the queued run proves each refresh with killed workers. */
let pipeline: string;
/**
 * The streams of the data service, whose rate limit makes a run long enough for a pause or the
 * database's going away to land mid-run: the pipeline of those cases (each kind of refresh through
 * the queue is the killed workers' cases).
 */
const DATA_TABLES = ['erc_transfers', 'internal_transactions', 'delegators', 'pending_rewards'];
let dataPipeline: string;
const outputs: string[] = [];

function urls(): string[] {
  return ['--data-url', sim.url, '--metrics-url', sim.url, '--node-url', sim.url];
}

/**
 * A worker process, its output kept for the leak search. `ready`: it said it waits for jobs, so
 * its handlers of SIGTERM are in place (a signal before that ends it as any process, without 0).
 * `heard(text)`: it said that, or ended. `started()`: it started another job (or ended);
 * `working()`: it has a job started and not ended.
 */
function worker(
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
  const child = spawn(process.execPath, [BIN, 'worker', '--queue', pgdb.url, '--lake', lake, '--concurrency', '2', '--log-format', 'json'], {
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
      outputs.push(out);
      ended = true;
      for (const w of waiting) w.resolve();
      resolve(code);
    }),
  );
  // What a worker said above info (warnings, errors, a crash's stack): what explains its exit code.
  const said = () => out.split('\n').filter((l) => l.trim() && !l.includes('"level":30')).join('\n').slice(-3000);
  return { child, done, ready, heard, started, working, said };
}

/** The error lines the workers wrote so far (a killed one's too): what explains a failed run. */
function workerErrors(): string {
  return outputs.flatMap((o) => o.split('\n').filter((l) => l.includes('"level":50'))).slice(-20).join('\n');
}

/** Workers killed in the middle of a job during a queued run. */
const KILLS = 2;

/**
 * A queued run with two workers, two jobs at once each (a table's partitions are committed by
 * both); while it runs, a worker that has just started a job is killed with SIGKILL within a
 * second (while its job fetches, writes or commits) and a new one started, until KILLS kills
 * have landed in the middle of a job. Each kill waits on a job started, not on
 * the clock: a run as slow as a busy machine makes it meets as many kills as a fast one (kills
 * on a timer grew with the run, each one's job handed on a lease later, which made it longer).
 * Returns the run's result and the kills that landed mid-job.
 */
async function clusterRun(lake: string, given: Record<string, string> = {}, flags = RUN_FLAGS) {
  const env = { CHAINLAKE_JOB_LEASE_SECONDS: WORK_LEASE_SECONDS, ...given };
  const workers = [worker(lake, env), worker(lake, env)];
  let running = true;
  const run = runCli(['run', pipeline, '--lake', lake, ...urls(), '--queue', pgdb.url, ...flags, '--log-format', 'json'], {
    CHAINLAKE_API_KEY: KEY,
    ...env,
  }).finally(() => (running = false));
  let kills = 0;
  while (running && kills < KILLS) {
    const i = await Promise.race([...workers.map((w, n) => w.started().then(() => n)), run.then(() => -1)]);
    if (i < 0 || !running) break;
    // Somewhere in the job: its first request, a page's write, its commit.
    await new Promise((r) => setTimeout(r, Math.random() * 1000));
    const w = workers[i]!;
    const mid = w.working();
    w.child.kill('SIGKILL');
    await w.done;
    if (mid) kills++;
    workers[i] = worker(lake, env);
  }
  const result = await run;
  outputs.push(result.stdout + result.stderr);
  // A worker stops on SIGTERM and exits 0 (once it is up: one started just now may still be loading).
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.child.kill('SIGTERM');
  const codes = await Promise.all(workers.map((w) => w.done));
  return { result, kills, codes };
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'cl-queue-'));
  pipeline = demoOfEachKind();
  dataPipeline = demoOf(DATA_TABLES);
  pgdb = await startPostgres();
  // 18,000 CU a minute in 2-second windows: the demo's data streams take several windows.
  sim = await startSimulator({ seed: 1, apiKeys: [KEY], rateLimit: { data: { cuPerMinute: 18000, windowSeconds: 2 }, blockAfterLimitedRequests: 1e9 } });
  s3 = await startS3();
  // The world of the same seed without the rate limit, which only slows the queued runs down to
  // let kills land mid-job: the reference need not wait on it.
  const free = await startSimulator({ seed: 1, apiKeys: [KEY] });
  try {
    const at = ['--data-url', free.url, '--metrics-url', free.url, '--node-url', free.url];
    const one = await runCli(['run', pipeline, '--lake', join(root, 'one'), ...at, ...RUN_FLAGS, '--quiet'], { CHAINLAKE_API_KEY: KEY });
    expect(one.code, one.stderr).toBe(0);
  } finally {
    await free.close();
  }
  reference = await lakeContents(join(root, 'one'));
}, 300_000);

afterAll(async () => {
  await sim?.close();
  await s3?.close();
  await pgdb?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('run --queue with two workers, killed and replaced', () => {
  it('on disk: the tables equal one process', async () => {
    const lake = join(root, 'disk');
    const { result, kills, codes } = await clusterRun(lake);
    console.log(`queued run on disk: ${kills} workers killed and replaced during the run`);
    expect(result.code, whyFailed(result.stderr)).toBe(0);
    expect(kills).toBe(KILLS);
    expect(codes).toEqual([0, 0]);
    expect(differences(await lakeContents(lake))).toEqual([]);
    const check = await runCli(['check', '--lake', lake]);
    expect(check.code, check.stdout).toBe(0);
    // The workers' staging is gone with the run: nothing half-written stays.
    expect(existsSync(join(lake, '_staging')) ? readdirSync(join(lake, '_staging')) : []).toEqual([]);
  }, 300_000);

  it('on an object store: the tables equal one process', async () => {
    const env = { ...s3Env(s3.endpoint), CHAINLAKE_JOB_LEASE_SECONDS: S3_LEASE_SECONDS };
    const lake = `s3://${BUCKET}/queued`;
    const { result, kills, codes } = await clusterRun(lake, env, S3_RUN_FLAGS);
    console.log(`queued run on s3: ${kills} workers killed and replaced during the run`);
    expect(result.code, whyFailed(result.stderr)).toBe(0);
    expect(kills).toBe(KILLS);
    expect(codes).toEqual([0, 0]);
    const restore = useEnv(env);
    try {
      const dir = join(root, 's3-copy');
      const keys = await downloadLake(lake, dir);
      expect(keys.filter((k) => k.startsWith('_staging/'))).toEqual([]);
      expect(differences(await lakeContents(dir))).toEqual([]);
    } finally {
      restore();
    }
    // Each table's Iceberg metadata on the store names the files its states list, though s3rver
    // ignores conditional writes and the workers committed one table's partitions at once.
    const check = await runCli(['check', '--lake', lake], env);
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).not.toMatch(/Iceberg snapshot names the committed files\s+(fail|FAIL)/);
  }, 300_000);
});

/**
 * The tables that differ from the one-process lake, with their first differing rows. A table keyed
 * by the time of its snapshot gains a snapshot per attempt that got that far (a job retried after
 * its commit, as a rerun of one process would): it is compared as a set of rows, without the time.
 */
function differences(tables: Record<string, string[]>, only: readonly string[] = Object.keys(reference)): string[] {
  const snapshots = new Set(STREAMS.filter((d) => d.key.includes('snapshot_at')).map((d) => d.table));
  return only.flatMap((t) => {
    const set = (xs: string[]) => (snapshots.has(t) ? [...new Set(xs)] : xs);
    const a = set(tables[t] ?? []);
    const b = set(reference[t]!);
    if (JSON.stringify(a) === JSON.stringify(b)) return [];
    const extra = a.filter((x) => !b.includes(x)).slice(0, 2);
    const missing = b.filter((x) => !a.includes(x)).slice(0, 2);
    return [`${t}: ${a.length} rows, one process ${b.length}; extra ${extra.join(' ')}; missing ${missing.join(' ')}`];
  });
}

/** What explains a queued run's exit code: its own lines above info, and its workers' errors. */
function whyFailed(stderr: string): string {
  return `${aboveInfo(stderr)}\nworkers' errors:\n${workerErrors()}`;
}

/**
 * Two workers (or `given`, started before) and a queued run of the data streams; `during` acts on
 * the database while the run works. `runLease` is the run's lease bound in seconds, `workerLease`
 * the workers': how long it waits for the database is ten of them.
 */
async function withWorkers(lake: string, during: (running: () => boolean) => Promise<void>, runLease = LEASE_SECONDS, workerLease = LEASE_SECONDS, given?: Array<ReturnType<typeof worker>>) {
  const workers = given ?? [worker(lake, { CHAINLAKE_JOB_LEASE_SECONDS: workerLease }), worker(lake, { CHAINLAKE_JOB_LEASE_SECONDS: workerLease })];
  let running = true;
  let working!: () => void;
  // Mid-run is once a first job is done: the run waits on its queue and the workers are up. On a
  // loaded machine a fixed delay may still find them starting (a database away during the run's
  // setup or a worker's start is another case).
  const midRun = new Promise<void>((r) => (working = r));
  const run = runCli(
    ['run', dataPipeline, '--lake', lake, ...urls(), '--queue', pgdb.url, ...RUN_FLAGS, '--log-format', 'json'],
    { CHAINLAKE_API_KEY: KEY, CHAINLAKE_JOB_LEASE_SECONDS: runLease },
    (stderr) => {
      if (stderr.includes('"msg":"job done"')) working();
    },
  ).finally(() => {
    running = false;
    working();
  });
  await midRun;
  await during(() => running);
  const result = await run;
  outputs.push(result.stdout + result.stderr);
  for (const w of workers) w.child.kill('SIGTERM');
  const codes = await Promise.all(workers.map((w) => w.done));
  return { result, codes, said: workers.map((w) => w.said()).join('\n') };
}

/** The lease of the run with a paused worker: a killed worker's job must be handed on well within it. */
const PAUSE_LEASE_SECONDS = '8';

describe('run --queue: a worker killed and a worker paused', () => {
  it("a killed worker's job is handed on at once, a paused one's (SIGSTOP: alive, silent) only after its bound; the tables equal one process", async () => {
    const lake = join(root, 'paused');
    const env = { CHAINLAKE_JOB_LEASE_SECONDS: PAUSE_LEASE_SECONDS };
    const admin = new pg.Client({ connectionString: pgdb.url });
    await admin.connect();
    // Each job put back (pg-boss fails a job by deleting and inserting its row), with the holder of its key's lease then and whether that lease was
    // still within its bound, by the database's clock (not by when a busy worker next takes it).
    await (await WorkQueue.open(pgdb.url)).close();
    await admin.query(`
      CREATE TABLE put_back (key text, holder text, live boolean);
      CREATE FUNCTION note_put_back() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF OLD.state = 'active' THEN
          INSERT INTO put_back SELECT l.key, l.holder, l.expires_at > clock_timestamp() FROM chainlake.leases l WHERE l.key = OLD.data->>'key';
        END IF;
        RETURN OLD;
      END $$;
      CREATE TRIGGER note_put_back AFTER DELETE ON chainlake_queue.job FOR EACH ROW EXECUTE FUNCTION note_put_back();`);
    const holder = (w: ReturnType<typeof worker>) => `${hostname()}:${w.child.pid}`;
    const holds = async (w: ReturnType<typeof worker>) => (await admin.query(`SELECT 1 FROM chainlake.leases WHERE holder = $1`, [holder(w)])).rowCount! > 0;
    const workers = [worker(lake, env), worker(lake, env)];
    let running = true;
    const run = runCli(['run', dataPipeline, '--lake', lake, ...urls(), '--queue', pgdb.url, ...RUN_FLAGS, '--log-format', 'json'], { CHAINLAKE_API_KEY: KEY, ...env }).finally(
      () => (running = false),
    );
    const killed: string[] = [];
    let paused: ReturnType<typeof worker> | undefined;
    try {
      // One worker killed mid-job (replaced), then one paused mid-job while it holds a lease.
      while (running && !paused) {
        const i = await Promise.race([...workers.map((w, n) => w.started().then(() => n)), run.then(() => -1)]);
        if (i < 0 || !running) break;
        const w = workers[i]!;
        if (!killed.length) {
          const mid = w.working() && (await holds(w));
          w.child.kill('SIGKILL');
          await w.done;
          if (mid) killed.push(holder(w));
          workers[i] = worker(lake, env);
        } else {
          w.child.kill('SIGSTOP');
          if (await holds(w)) paused = w;
          else w.child.kill('SIGCONT');
        }
      }
      const result = await run;
      outputs.push(result.stdout + result.stderr);
      expect(result.code, whyFailed(result.stderr)).toBe(0);
      expect(killed).toHaveLength(1);
      expect(paused).toBeDefined();
      const back = (await admin.query<{ holder: string; live: boolean }>(`SELECT holder, live FROM put_back`)).rows;
      // The killed worker's jobs went back before their leases' bound ran out, the paused one's only after.
      const early = (h: string) => back.filter((t) => t.holder === h).map((t) => t.live);
      expect(early(killed[0]!).length).toBeGreaterThan(0);
      expect(early(killed[0]!).every(Boolean)).toBe(true);
      expect(early(holder(paused!)).length).toBeGreaterThan(0);
      expect(early(holder(paused!)).some(Boolean)).toBe(false);
      // Resumed, it finds its leases gone, commits nothing and stops as asked.
      paused!.child.kill('SIGCONT');
      await paused!.heard('"msg":"job lost"');
      expect(differences(await lakeContents(lake), DATA_TABLES)).toEqual([]);
    } finally {
      paused?.child.kill('SIGCONT');
      await Promise.all(workers.map((w) => w.ready));
      for (const w of workers) w.child.kill('SIGTERM');
      const codes = await Promise.all(workers.map((w) => w.done));
      await admin.query(`DROP TRIGGER note_put_back ON chainlake_queue.job; DROP FUNCTION note_put_back(); DROP TABLE put_back`);
      await admin.end();
      expect(codes, workers.map((w) => w.said()).join('\n')).toEqual([0, 0]);
    }
  }, 300_000);
});

describe('run --queue: the database going away', () => {
  // One lake for the three cases, each a step of the one before: a run that gave up, workers
  // started for its rerun while the database is still away, and the rerun, the database away
  // again mid-run for a few seconds.
  it('away for longer than the run waits: it exits 1 saying so; workers started while it is away wait for it, then for jobs; their rerun, the database away again for a few seconds mid-run, finishes with the tables of one process', async () => {
    const lake = join(root, 'db-gone');
    const env = { CHAINLAKE_JOB_LEASE_SECONDS: WORK_LEASE_SECONDS };
    let next: Array<ReturnType<typeof worker>> = [];
    // The run waits ten of its lease bounds, then gives up: 10 s with a bound of 1 s (the workers
    // keep theirs, a live commit's, and wait on).
    const gone = await withWorkers(
      lake,
      async (running) => {
        if (!running()) return;
        await pgdb.stop();
        try {
          while (running()) await new Promise((r) => setTimeout(r, 500));
          next = [worker(lake, env), worker(lake, env)];
          await Promise.all(next.map((w) => w.heard("the queue's database is away: waiting for it")));
        } finally {
          await pgdb.start();
        }
      },
      '1',
      WORK_LEASE_SECONDS,
    );
    expect(gone.result.code).toBe(1);
    expect(gone.codes, gone.said).toEqual([0, 0]);
    expect(gone.result.stderr).toMatch(/the queue's database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres did not answer: .* \(for \d+ s; \d+ of \d+ jobs done, their commits kept: rerun to finish\)/);
    expect(next).toHaveLength(2);
    for (const w of next) {
      await w.heard("the queue's database is back");
      await w.ready;
      // Up and waiting for jobs, not ended (heard() and ready also resolve when it ends).
      expect(w.child.exitCode, w.said()).toBeNull();
    }

    let stopped = false;
    // Leases a live commit outlasts on a busy machine would fail the rerun's jobs.
    const again = await withWorkers(
      lake,
      async (running) => {
        if (!running()) return;
        await pgdb.stop();
        stopped = true;
        // Longer than a job's lease: the jobs under way are lost and handed out again.
        await new Promise((r) => setTimeout(r, Number(WORK_LEASE_SECONDS) * 1000 + 3000));
        await pgdb.start();
      },
      WORK_LEASE_SECONDS,
      WORK_LEASE_SECONDS,
      next,
    );
    expect(stopped).toBe(true);
    expect(again.result.code, whyFailed(again.result.stderr) + '\n' + again.said).toBe(0);
    expect(again.result.stderr).toContain("the queue's database is away: waiting for it");
    // Ended by itself, not by a later run.
    expect(again.result.stderr).not.toContain('the run was ended by a later run');
    expect(again.codes, again.said).toEqual([0, 0]);
    expect(differences(await lakeContents(lake), DATA_TABLES)).toEqual([]);
  }, 300_000);
});

describe('run --queue: bad input and secrets', () => {
  it('refuses a pipeline whose API key is written in it (it would travel through the queue)', async () => {
    const file = join(root, 'written-key.yaml');
    writeFileSync(file, readFileSync('pipelines/demo.yaml', 'utf8').replace('"${CHAINLAKE_API_KEY}"', `"${KEY}"`));
    const r = await runCli(['run', file, '--lake', join(root, 'refused'), '--queue', pgdb.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('sources.data.apiKey');
    expect(r.stderr).toContain('${CHAINLAKE_API_KEY}');
    expect(r.stderr).not.toContain(KEY);
    expect(existsSync(join(root, 'refused'))).toBe(false);
  });

  it('a database that refuses the password: the run and a worker exit 1 saying so, the lake untouched', async () => {
    const wrong = new URL(pgdb.url);
    wrong.password = 'wrong-queue-password-DO-NOT-LEAK';
    const lake = join(root, 'refused-db');
    const [run, work] = await Promise.all([
      runCli(['run', 'pipelines/demo.yaml', '--lake', lake, '--simulator', '--queue', wrong.toString(), '--quiet'], { CHAINLAKE_API_KEY: KEY }),
      runCli(['worker', '--queue', wrong.toString(), '--lake', lake]),
    ]);
    for (const r of [run, work]) {
      outputs.push(r.stdout + r.stderr);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/the queue's database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres refused a query: password authentication failed/);
      expect(r.stderr).not.toContain('wrong-queue-password');
    }
    expect(existsSync(lake)).toBe(false);
  });

  it('a malformed --queue is a usage error, its password not shown', async () => {
    const r = await runCli(['worker', '--queue', 'postgresql://u:hunter2-DO-NOT-LEAK@', '--lake', join(root, 'x')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--queue');
    expect(r.stderr).not.toContain('hunter2');
  });

  it("the queue's password and the API key are in no output and no file of the lake", () => {
    const password = new URL(pgdb.url).password;
    const find = leakFinder([password, KEY]);
    const found = outputs.flatMap((o, i) => find(`output ${i}`, Buffer.from(o)));
    const walk = (dir: string): string[] =>
      existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)])) : [];
    for (const lake of ['disk', 's3-copy', 'db-gone']) for (const f of walk(join(root, lake))) found.push(...find(f, readFileSync(f)));
    expect(outputs.length).toBeGreaterThan(4);
    expect(found).toEqual([]);
  });
});

describe("the queue's exclusive sections (one table's Iceberg publishes across workers)", () => {
  it('runs the holders of one key one at a time across connections, other keys beside them, and lets a key go after an error', async () => {
    const a = await WorkQueue.open(pgdb.url);
    const b = await WorkQueue.open(pgdb.url);
    try {
      const inside = new Map<string, number>();
      const most = new Map<string, number>();
      const hold = (q: WorkQueue, key: string) =>
        q.exclusive(key, async () => {
          inside.set(key, (inside.get(key) ?? 0) + 1);
          most.set(key, Math.max(most.get(key) ?? 0, inside.get(key)!));
          // A chance for another holder to come in, were the lock not held.
          await new Promise((r) => setTimeout(r, 20));
          inside.set(key, inside.get(key)! - 1);
        });
      await Promise.all([hold(a, 't1'), hold(b, 't1'), hold(a, 't1'), hold(b, 't1'), hold(a, 't2')]);
      expect(most.get('t1')).toBe(1);
      await expect(a.exclusive('t1', async () => Promise.reject(new Error('publish failed')))).rejects.toThrow('publish failed');
      expect(await b.exclusive('t1', async () => 'free again')).toBe('free again');
    } finally {
      await a.close();
      await b.close();
    }
  });
});
