// The shared budget against a real PostgreSQL, in what does not measure how the windows are shared
// out (budget.test.ts does, in the tier of timed tests): caps, learnt budgets, aborts, errors, and
// processes spending while the database restarts; and the embedded PostgreSQL itself (test/pg-fixture.ts,
// on this file's server rather than one more of its own). What they assert does not hang on how soon a
// process gets its turn: the database keeps the caps, and the restart test leaves seconds to spare,
// so they share the machine with other tests (the system tier).
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { describe, expect, it } from 'vitest';
import { BudgetUnavailable, SharedBudget, keyHash } from '../../src/cluster/budget.js';
import { sharedBudgets, stricter } from '../../src/cluster/port.js';
import { budgetDatabase, cuBetween, hungry, perWindow, runClients, type Plan } from './budget-clients.js';

const WINDOW_MS = 1000;
const BUDGET = 1000;
const SLICE = BUDGET / 10;
/** When the processes of the restart test give up if claims never succeed again: a failure, not a wait. */
const RESTART_BOUND_MS = 120_000;

// The tests that do not stop the database run at once, each on its own key; the one that stops
// it runs alone after them.
describe('the shared budget on PostgreSQL: caps, learnt budgets and the database away', () => {
  const pg = budgetDatabase();
  const base = (key: string, startAt: number, stopAt: number) => hungry(pg.db.url, key, { windowMs: WINDOW_MS, cuPerWindow: BUDGET }, startAt, stopAt);

  it.concurrent('the day budget caps the windows: once it is spent, nothing more is granted that day', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const budget = await SharedBudget.open(pg.db.url, { service: 'metrics', key, cuPerWindow: BUDGET, cuPerDay: 250, windowMs: WINDOW_MS });
    try {
      for (let i = 0; i < 50; i++) await budget.take(5);
      const more = await Promise.race([budget.take(1).then(() => 'granted'), new Promise((r) => setTimeout(() => r('waiting'), 2.5 * WINDOW_MS))]);
      expect(more).toBe('waiting');
      const rows = await pg.sql.query<{ used: string; cap: string }>('SELECT used, cap FROM chainlake.budget_windows WHERE key_hash = $1 AND service = $2 ORDER BY start_ms', [keyHash(key), 'metrics']);
      expect(rows.rows.reduce((n, r) => n + Number(r.used), 0)).toBe(250);
      for (const r of rows.rows) expect(Number(r.used)).toBeLessThanOrEqual(Number(r.cap));
    } finally {
      await budget.close();
    }
  });

  it.concurrent('a budget learnt by one process caps the windows of the others', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const o = { service: 'data', key, cuPerWindow: BUDGET, windowMs: WINDOW_MS };
    const [teacher, learner] = await Promise.all([SharedBudget.open(pg.db.url, o), SharedBudget.open(pg.db.url, o)]);
    try {
      await expect(learner.take(BUDGET + 1)).rejects.toThrow(`a request of ${BUDGET + 1} CU never fits a budget of ${BUDGET} CU per window`);
      await teacher.learn(300);
      const spent = new Map<number, number>();
      // Until the learner has spent in two windows: it waits for the second once the first is full.
      while (spent.size < 2) {
        const { windowStart } = await learner.take(7);
        spent.set(windowStart, (spent.get(windowStart) ?? 0) + 7);
      }
      const [first] = [...spent.values()];
      expect(first).toBeLessThanOrEqual(300);
      const caps = await pg.sql.query<{ cap: string }>('SELECT DISTINCT cap FROM chainlake.budget_windows WHERE key_hash = $1', [keyHash(key)]);
      expect(caps.rows.map((r) => Number(r.cap))).toEqual([300]);
    } finally {
      await Promise.all([teacher.close(), learner.close()]);
    }
  });

  it.concurrent('a request sent alone before the budget was known is counted in the current window once answered, up to its cap', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const budget = await SharedBudget.open(pg.db.url, { service: 'data', key, cuPerWindow: BUDGET, windowMs: 60_000 });
    try {
      const used = async () => (await pg.sql.query<{ used: string }>('SELECT used FROM chainlake.budget_windows WHERE key_hash = $1', [keyHash(key)])).rows.map((r) => Number(r.used));
      await budget.counted(30);
      await budget.counted(20);
      // Summed over the key's windows: the same whether or not a minute ended between the calls.
      expect((await used()).reduce((a, b) => a + b, 0)).toBe(50);
      const { windowStart } = await budget.take(5);
      expect((await used()).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(55);
      expect(windowStart).toBeGreaterThan(0);
      // Never past the window's cap.
      await budget.counted(10 * BUDGET);
      expect(Math.max(...(await used()))).toBe(BUDGET);
    } finally {
      await budget.close();
    }
  });

  it.concurrent('a request taken near the end of a window is counted in the window it reaches the service in', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const budget = await SharedBudget.open(pg.db.url, { service: 'data', key, cuPerWindow: BUDGET, windowMs: WINDOW_MS });
    try {
      const leadMs = 0.4 * WINDOW_MS;
      // Within the last `leadMs` of a window: sent now, the request would arrive in the next one.
      await new Promise((r) => setTimeout(r, WINDOW_MS - (Date.now() % WINDOW_MS) - leadMs / 2));
      const calledAt = Date.now();
      const { windowStart } = await budget.take(5, { leadMs });
      const arrives = calledAt + leadMs;
      expect(windowStart).toBeGreaterThanOrEqual(arrives - (arrives % WINDOW_MS));
      const rows = await pg.sql.query<{ start_ms: string; used: string }>('SELECT start_ms, used FROM chainlake.budget_windows WHERE key_hash = $1', [keyHash(key)]);
      expect(rows.rows.map((r) => Number(r.start_ms))).toEqual([windowStart]);
    } finally {
      await budget.close();
    }
  });

  it.concurrent('a take waiting for the next window stops when its signal aborts', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    // A window of a minute: without the abort, the second take would wait for the next one.
    const budget = await SharedBudget.open(pg.db.url, { service: 'data', key, cuPerWindow: 10, windowMs: 60_000, sliceShare: 1 });
    try {
      await budget.take(10);
      const stop = new AbortController();
      const waiting = budget.take(10, { signal: stop.signal });
      setTimeout(() => stop.abort(), 200);
      await expect(waiting).rejects.toThrow(/abort/i);
      await expect(budget.take(1, { signal: AbortSignal.abort() })).rejects.toThrow(/abort/i);
    } finally {
      await budget.close();
    }
  });

  it.concurrent('a learnt budget lapses when no process has written it for ten of its windows', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const o = { service: 'data', key, cuPerWindow: BUDGET, windowMs: WINDOW_MS };
    const teacher = await SharedBudget.open(pg.db.url, o);
    await teacher.learn(300);
    await teacher.close();
    const fresh = await SharedBudget.open(pg.db.url, o);
    expect(fresh.stored).toEqual({ cuPerWindow: 300, windowMs: WINDOW_MS });
    await fresh.close();
    await pg.sql.query('UPDATE chainlake.budget_state SET learnt_at_ms = learnt_at_ms - 10 * learnt_window_ms - 1 WHERE key_hash = $1', [keyHash(key)]);
    const later = await SharedBudget.open(pg.db.url, o);
    try {
      expect(later.stored).toBeUndefined();
      await later.take(7);
      const caps = await pg.sql.query<{ cap: string }>('SELECT DISTINCT cap FROM chainlake.budget_windows WHERE key_hash = $1', [keyHash(key)]);
      expect(caps.rows.map((r) => Number(r.cap))).toEqual([BUDGET]);
    } finally {
      await later.close();
    }
  });

  it.concurrent('a running process writes its learnt budget again once it has lapsed, for the processes that start later', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const ports = sharedBudgets(pg.db.url);
    const port = ports.factory('data', key);
    const w = { cuPerWindow: BUDGET, windowMs: WINDOW_MS };
    try {
      await port.learn(w);
      await pg.sql.query('UPDATE chainlake.budget_state SET learnt_at_ms = learnt_at_ms - 10 * learnt_window_ms - 1 WHERE key_hash = $1', [keyHash(key)]);
      const later = await SharedBudget.open(pg.db.url, { service: 'data', key, cuPerWindow: BUDGET, windowMs: 60_000 });
      expect(later.stored).toBeUndefined();
      await later.close();
      // Until its next claim reads the key's state, the port cannot know: take a whole slice's worth.
      for (let i = 0; i <= SLICE; i++) await port.take(1, w);
      const again = await SharedBudget.open(pg.db.url, { service: 'data', key, cuPerWindow: BUDGET, windowMs: 60_000 });
      expect(again.stored).toEqual(w);
      await again.close();
    } finally {
      await ports.close();
    }
  });

  it.concurrent('in windows of another length, gives back its slice and counts what it sent in the new window', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    // A process that knows only the minute until the service names its window of 2 s.
    const budget = await SharedBudget.open(pg.db.url, { service: 'data', key, cuPerWindow: 30 * BUDGET, windowMs: 60_000 });
    try {
      for (let i = 0; i < 20; i++) await budget.take(5);
      await budget.setBudget(BUDGET, WINDOW_MS);
      expect(budget.budget).toEqual({ cuPerWindow: BUDGET, windowMs: WINDOW_MS });
      const rows = await pg.sql.query<{ window_ms: string; used: string }>('SELECT window_ms, used FROM chainlake.budget_windows WHERE key_hash = $1 ORDER BY window_ms', [keyHash(key)]);
      expect(rows.rows.map((r) => [Number(r.window_ms), Number(r.used)])).toEqual([
        [WINDOW_MS, 100],
        [60_000, 100],
      ]);
    } finally {
      await budget.close();
    }
  });

  it.concurrent('shares in the stricter of two budgets: the shorter window, at the lower rate', () => {
    expect(stricter({ cuPerWindow: 30_000, windowMs: 60_000 }, { cuPerWindow: 1000, windowMs: 2000 })).toEqual({ cuPerWindow: 1000, windowMs: 2000 });
    expect(stricter({ cuPerWindow: 30_000, windowMs: 60_000 }, { cuPerWindow: 400, windowMs: 2000 })).toEqual({ cuPerWindow: 400, windowMs: 2000 });
    expect(stricter({ cuPerWindow: 500, windowMs: 2000 }, { cuPerWindow: 30_000, windowMs: 60_000 })).toEqual({ cuPerWindow: 500, windowMs: 2000 });
    expect(stricter({ cuPerWindow: 6000, windowMs: 60_000 }, { cuPerWindow: 400, windowMs: 2000 })).toEqual({ cuPerWindow: 200, windowMs: 2000 });
    expect(stricter({ cuPerWindow: 6000, windowMs: 60_000 }, undefined)).toEqual({ cuPerWindow: 6000, windowMs: 60_000 });
  });

  it.concurrent('a process that cannot reach the database fails at once with the address, not the password', async () => {
    const url = `postgres://chainlake:s3cret-pw@127.0.0.1:${pg.db.port + 1}/x`;
    const err = await SharedBudget.open(url, { service: 'data', cuPerWindow: BUDGET }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetUnavailable);
    expect(String(err)).toContain(`postgres://chainlake:***@127.0.0.1:${pg.db.port + 1}/x`);
    expect(String(err)).not.toContain('s3cret-pw');
  });

  it('claims fail with a clear error while the database restarts, and succeed again after', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    // Each process spends until claims succeed again after its last failed one, however long the
    // database takes to start on a busy machine; the bound only ends a process that never recovers.
    const plan: Plan = (startAt) => ({ ...base(key, startAt, startAt + RESTART_BOUND_MS), recoveredSpends: 5 });
    const { startAt, results: running } = await runClients([plan, plan, plan]);
    await new Promise((r) => setTimeout(r, startAt + WINDOW_MS - Date.now()));
    await pg.db.stop();
    // Down for longer than a window, so that every process needs a claim while it is away.
    await new Promise((r) => setTimeout(r, 1.5 * WINDOW_MS));
    await pg.db.start();
    const results = await running;
    const password = new URL(pg.db.url).password;
    for (const r of results) {
      expect(r.errors.length).toBeGreaterThan(0);
      for (const [, message] of r.errors) {
        expect(message).toMatch(/^BudgetUnavailable: the shared budget's database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres did not answer: /);
        expect(message).not.toContain(password);
      }
      const lastError = r.errors.at(-1)![0];
      expect(cuBetween(r, lastError + 1, Infinity)).toBeGreaterThan(0);
    }
    for (const cu of perWindow(results).values()) expect(cu).toBeLessThanOrEqual(BUDGET);
  });

  // What the cluster tests stand on (test/pg-fixture.ts): after the restart above, once more with a row written before it.
  it('the embedded PostgreSQL answers on 127.0.0.1, refuses connections while stopped and keeps its data across a restart', async () => {
    expect(new URL(pg.db.url).hostname).toBe('127.0.0.1');
    const c = new Client({ connectionString: pg.db.url });
    await c.connect();
    await c.query('CREATE TABLE t (n int)');
    await c.query('INSERT INTO t VALUES (42)');
    const { rows } = await c.query<{ v: number }>("SELECT current_setting('server_version_num')::int AS v");
    expect(rows[0]!.v).toBeGreaterThanOrEqual(140000);
    await c.end();

    await pg.db.stop();
    const down = new Client({ connectionString: pg.db.url, connectionTimeoutMillis: 5000 });
    await expect(down.connect()).rejects.toThrow(/ECONNREFUSED/);
    await pg.db.start();

    const again = new Client({ connectionString: pg.db.url });
    await again.connect();
    const back = await again.query<{ n: number }>('SELECT n FROM t');
    expect(back.rows).toEqual([{ n: 42 }]);
    await again.end();
  });
});
