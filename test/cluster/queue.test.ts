// `chainlake run --queue` with `chainlake worker`s on a real PostgreSQL: three worker processes,
// one of them killed (SIGKILL) again and again during the run and replaced by a new one, give the
// same tables as one process, with the lake on disk and on an object store. The simulator's rate
// limit is on, so the run takes long enough for kills to land mid-job. The queue's password and
// the API key reach no output and no file of the lake. (A paused worker, the database going away
// and bad input: queue-away.test.ts.)
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lakeContents, runCli } from '../helpers.js';
import { BUCKET, downloadLake, s3Env, startS3, useEnv, type S3Server } from '../s3-fixture.js';
import { differences, leaks, queuedRun, startQueueWorld, stopQueueWorld, whyFailed, worker, world, WORK_LEASE_SECONDS } from './queue-fixture.js';

const S3_LEASE_SECONDS = '30';

let s3: S3Server;

/** Workers killed in the middle of a job during a queued run. */
const KILLS = 2;

/**
 * A queued run with three workers; while it runs, a worker that has just started a job is killed
 * with SIGKILL within a second (while its job fetches, writes or commits) and a new one started,
 * until KILLS kills have landed in the middle of a job. Each kill waits on a job started, not on
 * the clock: a run as slow as a busy machine makes it meets as many kills as a fast one (kills
 * on a timer grew with the run, each one's job handed on a lease later, which made it longer).
 * Returns the run's result and the kills that landed mid-job.
 */
async function clusterRun(lake: string, given: Record<string, string> = {}) {
  const env = { CHAINLAKE_JOB_LEASE_SECONDS: WORK_LEASE_SECONDS, ...given };
  const workers = [worker(lake, env), worker(lake, env), worker(lake, env)];
  let running = true;
  const run = queuedRun(lake, env).finally(() => (running = false));
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
  world.outputs.push(result.stdout + result.stderr);
  // A worker stops on SIGTERM and exits 0 (once it is up: one started just now may still be loading).
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.child.kill('SIGTERM');
  const codes = await Promise.all(workers.map((w) => w.done));
  return { result, kills, codes };
}

beforeAll(async () => {
  // The demo's tables of each kind: the queued runs prove each refresh with killed workers.
  await startQueueWorld();
  s3 = await startS3();
}, 300_000);

afterAll(async () => {
  await s3?.close();
  await stopQueueWorld();
});

describe('run --queue with three workers, killed and replaced', () => {
  it('on disk: the tables equal one process', async () => {
    const lake = join(world.root, 'disk');
    const { result, kills, codes } = await clusterRun(lake);
    console.log(`queued run on disk: ${kills} workers killed and replaced during the run`);
    expect(result.code, whyFailed(result.stderr)).toBe(0);
    expect(kills).toBe(KILLS);
    expect(codes).toEqual([0, 0, 0]);
    expect(differences(await lakeContents(lake))).toEqual([]);
    const check = await runCli(['check', '--lake', lake]);
    expect(check.code, check.stdout).toBe(0);
    // The workers' staging is gone with the run: nothing half-written stays.
    expect(existsSync(join(lake, '_staging')) ? readdirSync(join(lake, '_staging')) : []).toEqual([]);
  }, 300_000);

  it('on an object store: the tables equal one process', async () => {
    const env = { ...s3Env(s3.endpoint), CHAINLAKE_JOB_LEASE_SECONDS: S3_LEASE_SECONDS };
    const lake = `s3://${BUCKET}/queued`;
    const { result, kills, codes } = await clusterRun(lake, env);
    console.log(`queued run on s3: ${kills} workers killed and replaced during the run`);
    expect(result.code, whyFailed(result.stderr)).toBe(0);
    expect(kills).toBe(KILLS);
    expect(codes).toEqual([0, 0, 0]);
    const restore = useEnv(env);
    try {
      const dir = join(world.root, 's3-copy');
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

  it("the queue's password and the API key are in no output and no file of the lakes", () => {
    expect(world.outputs.length).toBeGreaterThan(4);
    expect(leaks([join(world.root, 'disk'), join(world.root, 's3-copy')])).toEqual([]);
  });
});
