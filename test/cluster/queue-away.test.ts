// `chainlake run --queue` with `chainlake worker`s on a real PostgreSQL, when a worker is paused
// (alive and silent) or the database goes away, and on bad input: the run finishes with the
// tables of one process or exits saying why, and the queue's password and the API key reach no
// output and no file of the lake. (Workers killed mid-job: queue.test.ts.)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkQueue } from '../../src/cluster/queue.js';
import { aboveInfo, lakeContents, runCli } from '../helpers.js';
import { differences, KEY, LEASE_SECONDS, leaks, queuedRun, startQueueWorld, stopQueueWorld, whyFailed, worker, world, WORK_LEASE_SECONDS, type Worker } from './queue-fixture.js';

// The streams of the data service, whose rate limit makes the runs long enough for a pause or the
// database's going away to land mid-run; each kind of refresh through the queue is queue.test's.
beforeAll(() => startQueueWorld(['erc_transfers', 'internal_transactions', 'delegators', 'pending_rewards']), 300_000);
afterAll(stopQueueWorld);

/**
 * Two workers (or `given`, started before) and a queued run; `during` acts on the database while
 * the run works. `runLease` is the run's lease bound in seconds, `workerLease` the workers': how
 * long it waits for the database is ten of them.
 */
async function withWorkers(lake: string, during: (running: () => boolean) => Promise<void>, runLease = LEASE_SECONDS, workerLease = LEASE_SECONDS, given?: Worker[]) {
  const workers = given ?? [worker(lake, { CHAINLAKE_JOB_LEASE_SECONDS: workerLease }), worker(lake, { CHAINLAKE_JOB_LEASE_SECONDS: workerLease })];
  let running = true;
  let working!: () => void;
  // Mid-run is once a first job is done: the run waits on its queue and the workers are up. On a
  // loaded machine a fixed delay may still find them starting (a database away during the run's
  // setup or a worker's start is another case).
  const midRun = new Promise<void>((r) => (working = r));
  const run = queuedRun(lake, { CHAINLAKE_JOB_LEASE_SECONDS: runLease }, (stderr) => {
    if (stderr.includes('"msg":"job done"')) working();
  }).finally(() => {
    running = false;
    working();
  });
  await midRun;
  await during(() => running);
  const result = await run;
  world.outputs.push(result.stdout + result.stderr);
  for (const w of workers) w.child.kill('SIGTERM');
  const codes = await Promise.all(workers.map((w) => w.done));
  return { result, codes, said: workers.map((w) => w.said()).join('\n') };
}

/** The lease of the run with a paused worker: a killed worker's job must be handed on well within it. */
const PAUSE_LEASE_SECONDS = '8';

describe('run --queue: a worker killed and a worker paused', () => {
  it("a killed worker's job is handed on at once, a paused one's (SIGSTOP: alive, silent) only after its bound; the tables equal one process", async () => {
    const { pgdb } = world;
    const lake = join(world.root, 'paused');
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
    const holder = (w: Worker) => `${hostname()}:${w.child.pid}`;
    const holds = async (w: Worker) => (await admin.query(`SELECT 1 FROM chainlake.leases WHERE holder = $1`, [holder(w)])).rowCount! > 0;
    const workers = [worker(lake, env), worker(lake, env)];
    let running = true;
    const run = queuedRun(lake, env).finally(() => (running = false));
    const killed: string[] = [];
    let paused: Worker | undefined;
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
      world.outputs.push(result.stdout + result.stderr);
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
      expect(differences(await lakeContents(lake))).toEqual([]);
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
    const { pgdb } = world;
    const lake = join(world.root, 'db-gone');
    const env = { CHAINLAKE_JOB_LEASE_SECONDS: WORK_LEASE_SECONDS };
    let next: Worker[] = [];
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
    expect(differences(await lakeContents(lake))).toEqual([]);
  }, 300_000);
});

describe('run --queue: bad input and secrets', () => {
  it('refuses a pipeline whose API key is written in it (it would travel through the queue)', async () => {
    const file = join(world.root, 'written-key.yaml');
    writeFileSync(file, readFileSync('pipelines/demo.yaml', 'utf8').replace('"${CHAINLAKE_API_KEY}"', `"${KEY}"`));
    const r = await runCli(['run', file, '--lake', join(world.root, 'refused'), '--queue', world.pgdb.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('sources.data.apiKey');
    expect(r.stderr).toContain('${CHAINLAKE_API_KEY}');
    expect(r.stderr).not.toContain(KEY);
    expect(existsSync(join(world.root, 'refused'))).toBe(false);
  });

  it('a database that refuses the password: the run and a worker exit 1 saying so, the lake untouched', async () => {
    const wrong = new URL(world.pgdb.url);
    wrong.password = 'wrong-queue-password-DO-NOT-LEAK';
    const lake = join(world.root, 'refused-db');
    const [run, work] = await Promise.all([
      runCli(['run', 'pipelines/demo.yaml', '--lake', lake, '--simulator', '--queue', wrong.toString(), '--quiet'], { CHAINLAKE_API_KEY: KEY }),
      runCli(['worker', '--queue', wrong.toString(), '--lake', lake]),
    ]);
    for (const r of [run, work]) {
      world.outputs.push(r.stdout + r.stderr);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/the queue's database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres refused a query: password authentication failed/);
      expect(r.stderr).not.toContain('wrong-queue-password');
    }
    expect(existsSync(lake)).toBe(false);
  });

  it('a malformed --queue is a usage error, its password not shown', async () => {
    const r = await runCli(['worker', '--queue', 'postgresql://u:hunter2-DO-NOT-LEAK@', '--lake', join(world.root, 'x')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--queue');
    expect(r.stderr).not.toContain('hunter2');
  });

  it("the queue's password and the API key are in no output and no file of the lakes", () => {
    expect(world.outputs.length).toBeGreaterThan(4);
    expect(leaks([join(world.root, 'paused'), join(world.root, 'db-gone')])).toEqual([]);
  });
});

describe("the queue's exclusive sections (one table's Iceberg publishes across workers)", () => {
  it('runs the holders of one key one at a time across connections, other keys beside them, and lets a key go after an error', async () => {
    const a = await WorkQueue.open(world.pgdb.url);
    const b = await WorkQueue.open(world.pgdb.url);
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
