// A queued job's lease (cluster/queue.ts) on a real PostgreSQL: one holder per key; a holder that
// lost it (taken over after its bound, or its run ended) commits nothing; a takeover waits for a
// commit under way; a job whose worker vanished is reported lost and handed out again.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseLost, QueueUnavailable, WorkQueue, queueName } from '../../src/cluster/queue.js';
import { startPostgres, type PgFixture } from '../pg-fixture.js';
import { TEXT_CHARS } from '../../src/text.js';

let db: PgFixture;
let q: WorkQueue;
let admin: pg.Client;

beforeAll(async () => {
  db = await startPostgres();
  q = await WorkQueue.open(db.url);
  admin = new pg.Client({ connectionString: db.url });
  admin.on('error', () => undefined); // the server stopped by the last test
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await q?.close();
  await db?.close();
});

/** Makes a lease look silent past its bound, as a frozen or cut-off worker's does. */
async function expire(key: string): Promise<void> {
  await admin.query(`UPDATE chainlake.leases SET expires_at = clock_timestamp() - interval '1 second' WHERE key = $1`, [key]);
}

const never = () => undefined;


/** Ends the session whose advisory lock the lease of `key` names, as the death of its worker's process does. */
async function killHolder(key: string): Promise<void> {
  const r = await admin.query(
    `SELECT pg_terminate_backend(p.pid) FROM pg_locks p JOIN chainlake.leases l
       ON p.locktype = 'advisory' AND p.objsubid = 2 AND p.classid = l.presence_a::oid AND p.objid = l.presence_b::oid
     WHERE l.key = $1`,
    [key],
  );
  expect(r.rowCount).toBe(1);
}

describe('job leases', () => {
  it('one holder per key; after its bound another takes it and the first commits nothing', async () => {
    const queue = queueName('/lakes/a');
    await q.beginRun(queue, 'run-a', 60_000);
    const lost: string[] = [];
    const first = await q.lease('a/t/p1', 'run-a', 60_000, (r) => lost.push(r));
    expect(first).toBeDefined();
    expect(await q.lease('a/t/p1', 'run-a', 60_000, never)).toBeUndefined();
    expect(await first!.guard(async () => 'committed')).toBe('committed');
    await expire('a/t/p1');
    const second = await q.lease('a/t/p1', 'run-a', 60_000, never);
    expect(second).toBeDefined();
    expect(Number(second!.token)).toBeGreaterThan(Number(first!.token));
    let ran = false;
    await expect(first!.guard(async () => (ran = true))).rejects.toBeInstanceOf(LeaseLost);
    expect(ran).toBe(false);
    expect(lost).toHaveLength(1);
    expect(await second!.guard(async () => 'second commits')).toBe('second commits');
    await second!.release();
    // Given back: the next taker need not wait for the bound.
    expect(await q.lease('a/t/p1', 'run-a', 60_000, never)).toBeDefined();
  });

  it('a commit that outlasts the lease bound: the server closes its guard, and the error says so', async () => {
    const queue = queueName('/lakes/slow');
    await q.beginRun(queue, 'run-slow', 60_000);
    // A bound of 1 s: the guard's transaction may stay idle that long, then the server closes it.
    const lease = await q.lease('slow/t/p', 'run-slow', 1_000, never);
    const slow = lease!.guard(() => new Promise((r) => setTimeout(r, 3_000)));
    await expect(slow).rejects.toThrow(/closed the connection guarding a commit \(.*idle-in-transaction.*\); a commit must end within the job's lease bound of 1 s \(CHAINLAKE_JOB_LEASE_SECONDS\), and this one took \d+\.\d s/);
    await lease!.release();
  });

  it('a takeover waits for a commit under way, which completes', async () => {
    const queue = queueName('/lakes/b');
    await q.beginRun(queue, 'run-b', 60_000);
    const holder = await q.lease('b/t/p', 'run-b', 60_000, never);
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const commit = holder!.guard(async () => {
      order.push('commit begins');
      await gate;
      order.push('commit ends');
    });
    await new Promise((r) => setTimeout(r, 200));
    // The row is held by the commit: expiring it and taking it over both wait for the commit.
    const expiring = expire('b/t/p').then(() => order.push('expired'));
    const takeover = expiring.then(() => q.lease('b/t/p', 'run-b', 60_000, never)).then((l) => (order.push('taken over'), l));
    await new Promise((r) => setTimeout(r, 300));
    expect(order).toEqual(['commit begins']);
    release();
    await commit;
    expect(await takeover).toBeDefined();
    expect(order).toEqual(['commit begins', 'commit ends', 'expired', 'taken over']);
  });

  it('a run that ended (a later run took its lake) lets none of its workers commit', async () => {
    const queue = queueName('/lakes/c');
    await q.beginRun(queue, 'run-c1', 60_000);
    const old = await q.lease('c/t/p', 'run-c1', 60_000, never);
    await q.beginRun(queue, 'run-c2', 60_000);
    expect(await q.runState('run-c1')).toBe('ended');
    expect(await q.runState('run-c2')).toBe('live');
    await expect(old!.guard(async () => undefined)).rejects.toBeInstanceOf(LeaseLost);
    // The new run takes the key at once: the old run's lease does not hold it.
    expect(await q.lease('c/t/p', 'run-c2', 60_000, never)).toBeDefined();
  });

  it("a job whose worker's lease went silent is reported lost and handed out again", async () => {
    const queue = queueName('/lakes/d');
    await q.beginRun(queue, 'run-d', 60_000);
    const [id] = await q.send(queue, 'run-d', [{ key: 'd/t/p', data: { table: 't' } }]);
    const job = await q.take<{ table: string }>(queue);
    expect(job?.id).toBe(id);
    expect(job?.data).toMatchObject({ table: 't', run: 'run-d', key: 'd/t/p' });
    const lease = await q.lease('d/t/p', 'run-d', 60_000, never);
    expect((await q.states(queue, [id!], 500))[0]).toMatchObject({ state: 'active', lost: false });
    await expire('d/t/p');
    await new Promise((r) => setTimeout(r, 600));
    const [s] = await q.states(queue, [id!], 500);
    expect(s).toMatchObject({ state: 'active', lost: true });
    await q.fail(queue, id!, 'its worker was lost');
    expect((await q.states(queue, [id!], 500))[0]!.state).toBe('retry');
    // Handed out again once its retry delay passed: asked until then, however long a busy machine
    // takes (the test's timeout bounds it).
    let again;
    while (!(again = await q.take(queue))) await new Promise((r) => setTimeout(r, 250));
    expect(again?.id).toBe(id);
    await lease?.release();
  });

  it("a job whose worker's session ended (a killed process) is lost at once, and its key taken over at once; the dead holder commits nothing", async () => {
    const queue = queueName('/lakes/h');
    await q.beginRun(queue, 'run-h', 60_000);
    const [id] = await q.send(queue, 'run-h', [{ key: 'h/t/p', data: {} }]);
    const dying = await WorkQueue.open(db.url);
    try {
      expect((await dying.take(queue))?.id).toBe(id);
      const held = await dying.lease('h/t/p', 'run-h', 60_000, never);
      expect(held).toBeDefined();
      // Alive, its lease within its 60 s bound: neither lost nor free.
      expect((await q.states(queue, [id!], 60_000))[0]).toMatchObject({ state: 'active', lost: false, gone: false });
      expect(await q.lease('h/t/p', 'run-h', 60_000, never)).toBeUndefined();
      await killHolder('h/t/p');
      // The server lets the lock go as the backend exits: asked until then (the test's timeout bounds it).
      let s;
      while (!(s = (await q.states(queue, [id!], 60_000))[0]!).lost) await new Promise((r) => setTimeout(r, 50));
      expect(s).toMatchObject({ state: 'active', lost: true, gone: true });
      const next = await q.lease('h/t/p', 'run-h', 60_000, never);
      expect(next).toBeDefined();
      await expect(held!.guard(async () => undefined)).rejects.toBeInstanceOf(LeaseLost);
      await next!.release();
    } finally {
      await dying.close();
    }
  });

  it("a lease from an earlier attempt of a job says nothing of the worker that has it now: not lost by the earlier holder's death", async () => {
    const queue = queueName('/lakes/i');
    await q.beginRun(queue, 'run-i', 60_000);
    const [id] = await q.send(queue, 'run-i', [{ key: 'i/t/p', data: {} }]);
    const dying = await WorkQueue.open(db.url);
    // An earlier holder of the key, gone before this attempt began.
    try {
      await dying.lease('i/t/p', 'run-i', 60_000, never);
      await killHolder('i/t/p');
    } finally {
      await dying.close();
    }
    expect((await q.take(queue))?.id).toBe(id);
    expect((await q.states(queue, [id!], 60_000))[0]).toMatchObject({ state: 'active', lost: false });
    // The worker that has it now takes the dead holder's key at once, and is not lost.
    const mine = await q.lease('i/t/p', 'run-i', 60_000, never);
    expect(mine).toBeDefined();
    expect((await q.states(queue, [id!], 60_000))[0]).toMatchObject({ state: 'active', lost: false });
    await mine!.release();
  });

  it("a job's progress is kept for its run until the run ends", async () => {
    const queue = queueName('/lakes/f');
    await q.beginRun(queue, 'run-f', 60_000);
    const [id] = await q.send(queue, 'run-f', [{ key: 'f/t/p', data: {} }]);
    await q.progress(id!, 'run-f', { rows: 10 });
    await q.progress(id!, 'run-f', { rows: 25 });
    expect([...(await q.progressOf('run-f'))]).toEqual([[id, { rows: 25 }]]);
    await q.endRun(queue, 'run-f');
    expect((await q.progressOf('run-f')).size).toBe(0);
  });

  it('what a worker sends of service text (progress, a result, a failure) is stored bounded', async () => {
    const queue = queueName('/lakes/g');
    await q.beginRun(queue, 'run-g', 60_000);
    const huge = 'e'.repeat(4 * 1024 * 1024);
    const [a, b] = await q.send(queue, 'run-g', [
      { key: 'g/t/a', data: {} },
      { key: 'g/t/b', data: {} },
    ]);
    await q.progress(a!, 'run-g', { errors: [huge] });
    const [shown] = [...(await q.progressOf('run-g')).values()] as Array<{ errors: string[] }>;
    expect(shown!.errors[0]).toMatch(/^e+…\[cut: 4,194,304 chars\]$/);
    expect(shown!.errors[0]!.length).toBeLessThanOrEqual(TEXT_CHARS);
    for (const id of [a!, b!]) expect(await q.take(queue)).toBeDefined();
    await q.complete(queue, a!, { report: { errors: [huge] } });
    await q.fail(queue, b!, huge);
    const stored = await q.states(queue, [a!, b!], 60_000);
    expect(stored.map((s) => s.id).sort()).toEqual([a, b].sort());
    const text = JSON.stringify(stored.map((s) => s.output));
    expect(text.length).toBeLessThan(2 * TEXT_CHARS + 1000);
    expect(text).toContain('…[cut: 4,194,304 chars]');
    await q.endRun(queue, 'run-g');
  });

  it('a connection the server terminates while checked out between two queries: the process goes on, its next query fails', async () => {
    const c = await q.connect();
    const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const ended = new Promise((r) => c.once('end', r));
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    // The server's notice reached the idle connection as an 'error' event before it closed: with
    // no listener it would have ended this process.
    await ended;
    await expect(c.query('SELECT 1')).rejects.toThrow();
    c.release(true);
    expect(await q.lease('a/t/after-terminate', 'run-a', 60_000, never)).toBeDefined();
  });

  it('the database away: a lease is lost after its bound, a call says so without the password', async () => {
    const queue = queueName('/lakes/e');
    await q.beginRun(queue, 'run-e', 60_000);
    const lost: string[] = [];
    // Waited for as it comes, however late a busy machine runs the renewal (the test's timeout bounds it).
    let told!: () => void;
    const lostSaid = new Promise<void>((r) => (told = r));
    const lease = await q.lease('e/t/p', 'run-e', 900, (r) => {
      lost.push(r);
      told();
    });
    await db.stop();
    try {
      const err = await q.runState('run-e').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(QueueUnavailable);
      expect(String((err as Error).message)).toContain("the queue's database postgres://postgres:***@127.0.0.1");
      expect(String((err as Error).message)).not.toContain(new URL(db.url).password);
      await lostSaid;
      expect(lost[0]).toMatch(/could not be renewed/);
      await expect(lease!.guard(async () => undefined)).rejects.toBeInstanceOf(LeaseLost);
    } finally {
      await db.start();
    }
    expect(await q.runState('run-e')).toBe('live');
  });
});
