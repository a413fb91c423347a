// The shared budget against a real PostgreSQL, with real concurrency: three processes (see
// budget-client.mjs) on one key, in windows of two seconds, for a few windows. The windows are
// short so that the test is quick; the budget is small so that the processes are always hungry.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BudgetUnavailable, SharedBudget, keyHash } from '../../src/cluster/budget.js';
import { sharedBudgets, stricter } from '../../src/cluster/port.js';
import { startPostgres, type PgFixture } from '../pg-fixture.js';

const CLIENT = fileURLToPath(new URL('./budget-client.mjs', import.meta.url));
const WINDOW_MS = 2000;
const BUDGET = 1000;
const SLICE = BUDGET / 10;
/** From the moment every process is ready (its budget open) to the first window it spends in. */
const LEAD_MS = 300;

interface ClientResult {
  pid: number;
  spends: Array<[number, number, number]>;
  errors: Array<[number, string]>;
  pause?: { from: number; until: number };
}

/** A client's options once the time it starts spending is known. */
type Plan = (startAt: number) => Record<string, unknown>;

/**
 * Starts a process per plan, waits until each has opened its budget (however long processes take
 * to start on this machine), then gives them all one start time, LEAD_MS ahead.
 */
async function runClients(plans: Plan[]): Promise<{ startAt: number; results: Promise<ClientResult[]> }> {
  const clients = plans.map((plan) => {
    const child = spawn(process.execPath, [CLIENT, JSON.stringify(plan(0))], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let isReady: () => void = () => undefined;
    const ready = new Promise<void>((r) => (isReady = r));
    child.stdout.on('data', (d) => {
      out += d;
      if (out.startsWith('ready\n')) isReady();
    });
    child.stderr.on('data', (d) => (err += d));
    const result = new Promise<ClientResult>((resolve, reject) =>
      child.on('close', (code) => {
        isReady();
        if (code === 0) resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ClientResult);
        else reject(new Error(`budget client exited ${code}: ${err}`));
      }),
    );
    return { child, ready, result };
  });
  await Promise.all(clients.map((c) => c.ready));
  const startAt = Date.now() + LEAD_MS;
  for (const [i, c] of clients.entries()) c.child.stdin.end(JSON.stringify(plans[i]!(startAt)) + '\n');
  return { startAt, results: Promise.all(clients.map((c) => c.result)) };
}

/** CU spent per window (by its start), over every process. */
function perWindow(results: ClientResult[]): Map<number, number> {
  const sums = new Map<number, number>();
  for (const r of results) for (const [, start, weight] of r.spends) sums.set(start, (sums.get(start) ?? 0) + weight);
  return sums;
}

function cuBetween(r: ClientResult, from: number, until: number): number {
  return r.spends.filter(([t]) => t >= from && t < until).reduce((n, [, , w]) => n + w, 0);
}

// The tests that spend windows for seconds run at once, each on its own key: they do not meet, and
// together they wait out their windows once. The test that stops the database runs alone after them.
describe('the shared budget on PostgreSQL', () => {
  let db: PgFixture;
  let sql: pg.Pool;
  beforeAll(async () => {
    db = await startPostgres();
    sql = new pg.Pool({ connectionString: db.url, max: 1 });
    sql.on('error', () => {});
  });
  afterAll(async () => {
    await sql?.end();
    await db?.close();
  });

  const base = (key: string, startAt: number, stopAt: number) => ({
    url: db.url,
    service: 'data',
    key,
    windowMs: WINDOW_MS,
    cuPerWindow: BUDGET,
    startAt,
    stopAt,
    concurrency: 4,
    latencyMs: 5,
    weights: [1, 2, 3, 5, 4],
  });

  it.concurrent('three processes on one key never exceed a window budget and together use at least 0.95 of it', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const plan: Plan = (startAt) => base(key, startAt, startAt + 5 * WINDOW_MS);
    const { startAt, results: all } = await runClients([plan, plan, plan]);
    const stopAt = startAt + 5 * WINDOW_MS;
    const results = await all;
    const sums = perWindow(results);
    for (const cu of sums.values()) expect(cu).toBeLessThanOrEqual(BUDGET);
    // Windows wholly inside the run, after every process has started spending.
    const first = Math.max(...results.map((r) => r.spends[0]![0]));
    const whole = [...sums].filter(([start]) => start >= first && start + WINDOW_MS <= stopAt);
    expect(whole.length).toBeGreaterThanOrEqual(2);
    for (const [, cu] of whole) expect(cu).toBeGreaterThanOrEqual(0.95 * BUDGET);
    // Every process got a share: the budget is shared, not taken by the first to ask.
    for (const r of results) expect(r.spends.length).toBeGreaterThan(0);

    const rows = await sql.query<{ key_hash: string; used: string; cap: string }>('SELECT key_hash, used, cap FROM chainlake.budget_windows WHERE key_hash = $1', [keyHash(key)]);
    expect(keyHash(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(rows.rows.length).toBeGreaterThanOrEqual(whole.length);
    for (const r of rows.rows) expect(Number(r.used)).toBeLessThanOrEqual(Number(r.cap));
    const leaked = await sql.query(`SELECT 1 FROM chainlake.budget_windows WHERE key_hash LIKE '%' || $1 || '%' UNION ALL SELECT 1 FROM chainlake.budget_state WHERE key_hash LIKE '%' || $1 || '%'`, [key]);
    expect(leaked.rows).toEqual([]);
  });

  it.concurrent('a slow process claims only what it will spend, and leaves the rest of the window to the others', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const plan: Plan = (startAt) => base(key, startAt, startAt + 6 * WINDOW_MS);
    // One request of 1 CU at a time, each answered in 50 ms: well under a slice per window.
    const slow: Plan = (startAt) => ({ ...plan(startAt), concurrency: 1, latencyMs: 50, weights: [1] });
    const { startAt, results: all } = await runClients([slow, plan, plan]);
    const stopAt = startAt + 6 * WINDOW_MS;
    const results = await all;
    const sums = perWindow(results);
    for (const cu of sums.values()) expect(cu).toBeLessThanOrEqual(BUDGET);
    const slowPerWindow = perWindow([results[0]!]);
    // From the second whole window on, the slow process knows its pace.
    const first = Math.max(...results.map((r) => r.spends[0]![0]));
    const whole = [...sums].filter(([start]) => start >= first + WINDOW_MS && start + WINDOW_MS <= stopAt);
    expect(whole.length).toBeGreaterThanOrEqual(2);
    for (const [start, cu] of whole) {
      expect(slowPerWindow.get(start) ?? 0).toBeLessThan(SLICE);
      expect(cu).toBeGreaterThanOrEqual(0.95 * BUDGET);
    }
  });

  it.concurrent('a 429 seen by one process pauses the others from their next claim', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const pauseMs = 1.5 * WINDOW_MS;
    const plan: Plan = (startAt) => base(key, startAt, startAt + 5 * WINDOW_MS);
    const pausing: Plan = (startAt) => ({ ...plan(startAt), pauseAt: startAt + 1.5 * WINDOW_MS, pauseMs });
    const { startAt, results } = await runClients([pausing, plan, plan]);
    const stopAt = startAt + 5 * WINDOW_MS;
    const [pauser, ...others] = await results;
    const { from, until } = pauser!.pause!;
    expect(until - from).toBeGreaterThan(0);
    expect(cuBetween(pauser!, from, until)).toBe(0);
    // Another process may still spend the slice it holds, and one claimed as the pause was written.
    for (const r of others) expect(cuBetween(r, from, until)).toBeLessThanOrEqual(2 * SLICE);
    // Unpaused, the three would have spent the budget's rate over the pause.
    const during = [pauser!, ...others].reduce((n, r) => n + cuBetween(r, from, until), 0);
    expect(during).toBeLessThan((BUDGET * pauseMs) / WINDOW_MS / 2);
    // ...and all of them go on after it.
    for (const r of [pauser!, ...others]) expect(cuBetween(r, until, stopAt)).toBeGreaterThan(0);
    for (const cu of perWindow([pauser!, ...others]).values()) expect(cu).toBeLessThanOrEqual(BUDGET);
  });

  it.concurrent('the day budget caps the windows: once it is spent, nothing more is granted that day', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const budget = await SharedBudget.open(db.url, { service: 'metrics', key, cuPerWindow: BUDGET, cuPerDay: 250, windowMs: WINDOW_MS });
    try {
      for (let i = 0; i < 50; i++) await budget.take(5);
      const more = await Promise.race([budget.take(1).then(() => 'granted'), new Promise((r) => setTimeout(() => r('waiting'), 2.5 * WINDOW_MS))]);
      expect(more).toBe('waiting');
      const rows = await sql.query<{ used: string; cap: string }>('SELECT used, cap FROM chainlake.budget_windows WHERE key_hash = $1 AND service = $2 ORDER BY start_ms', [keyHash(key), 'metrics']);
      expect(rows.rows.reduce((n, r) => n + Number(r.used), 0)).toBe(250);
      for (const r of rows.rows) expect(Number(r.used)).toBeLessThanOrEqual(Number(r.cap));
    } finally {
      await budget.close();
    }
  });

  it('claims fail with a clear error while the database restarts, and succeed again after', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const plan: Plan = (startAt) => base(key, startAt, startAt + 6 * WINDOW_MS);
    const { startAt, results: running } = await runClients([plan, plan, plan]);
    const stopAt = startAt + 6 * WINDOW_MS;
    await new Promise((r) => setTimeout(r, startAt + WINDOW_MS - Date.now()));
    await db.stop();
    // Down for longer than a window, so that every process needs a claim while it is away.
    await new Promise((r) => setTimeout(r, 1.5 * WINDOW_MS));
    await db.start();
    const restarted = Date.now();
    const results = await running;
    const password = new URL(db.url).password;
    for (const r of results) {
      expect(r.errors.length).toBeGreaterThan(0);
      for (const [, message] of r.errors) {
        expect(message).toMatch(/^BudgetUnavailable: the shared budget's database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres did not answer: /);
        expect(message).not.toContain(password);
      }
      expect(cuBetween(r, restarted, stopAt)).toBeGreaterThan(0);
    }
    for (const cu of perWindow(results).values()) expect(cu).toBeLessThanOrEqual(BUDGET);
  });

  it('a budget learnt by one process caps the windows of the others', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const o = { service: 'data', key, cuPerWindow: BUDGET, windowMs: WINDOW_MS };
    const [teacher, learner] = await Promise.all([SharedBudget.open(db.url, o), SharedBudget.open(db.url, o)]);
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
      const caps = await sql.query<{ cap: string }>('SELECT DISTINCT cap FROM chainlake.budget_windows WHERE key_hash = $1', [keyHash(key)]);
      expect(caps.rows.map((r) => Number(r.cap))).toEqual([300]);
    } finally {
      await Promise.all([teacher.close(), learner.close()]);
    }
  });

  it('a request taken near the end of a window is counted in the window it reaches the service in', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const budget = await SharedBudget.open(db.url, { service: 'data', key, cuPerWindow: BUDGET, windowMs: WINDOW_MS });
    try {
      const leadMs = 0.4 * WINDOW_MS;
      // Within the last `leadMs` of a window: sent now, the request would arrive in the next one.
      await new Promise((r) => setTimeout(r, WINDOW_MS - (Date.now() % WINDOW_MS) - leadMs / 2));
      const calledAt = Date.now();
      const { windowStart } = await budget.take(5, { leadMs });
      const arrives = calledAt + leadMs;
      expect(windowStart).toBeGreaterThanOrEqual(arrives - (arrives % WINDOW_MS));
      const rows = await sql.query<{ start_ms: string; used: string }>('SELECT start_ms, used FROM chainlake.budget_windows WHERE key_hash = $1', [keyHash(key)]);
      expect(rows.rows.map((r) => Number(r.start_ms))).toEqual([windowStart]);
    } finally {
      await budget.close();
    }
  });

  it('a take waiting for the next window stops when its signal aborts', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    // A window of a minute: without the abort, the second take would wait for the next one.
    const budget = await SharedBudget.open(db.url, { service: 'data', key, cuPerWindow: 10, windowMs: 60_000, sliceShare: 1 });
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

  it('a learnt budget lapses when no process has written it for ten of its windows', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const o = { service: 'data', key, cuPerWindow: BUDGET, windowMs: WINDOW_MS };
    const teacher = await SharedBudget.open(db.url, o);
    await teacher.learn(300);
    await teacher.close();
    const fresh = await SharedBudget.open(db.url, o);
    expect(fresh.stored).toEqual({ cuPerWindow: 300, windowMs: WINDOW_MS });
    await fresh.close();
    await sql.query('UPDATE chainlake.budget_state SET learnt_at_ms = learnt_at_ms - 10 * learnt_window_ms - 1 WHERE key_hash = $1', [keyHash(key)]);
    const later = await SharedBudget.open(db.url, o);
    try {
      expect(later.stored).toBeUndefined();
      await later.take(7);
      const caps = await sql.query<{ cap: string }>('SELECT DISTINCT cap FROM chainlake.budget_windows WHERE key_hash = $1', [keyHash(key)]);
      expect(caps.rows.map((r) => Number(r.cap))).toEqual([BUDGET]);
    } finally {
      await later.close();
    }
  });

  it('a running process writes its learnt budget again once it has lapsed, for the processes that start later', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    const ports = sharedBudgets(db.url);
    const port = ports.factory('data', key);
    const w = { cuPerWindow: BUDGET, windowMs: WINDOW_MS };
    try {
      await port.learn(w);
      await sql.query('UPDATE chainlake.budget_state SET learnt_at_ms = learnt_at_ms - 10 * learnt_window_ms - 1 WHERE key_hash = $1', [keyHash(key)]);
      const later = await SharedBudget.open(db.url, { service: 'data', key, cuPerWindow: BUDGET, windowMs: 60_000 });
      expect(later.stored).toBeUndefined();
      await later.close();
      // Until its next claim reads the key's state, the port cannot know: take a whole slice's worth.
      for (let i = 0; i <= SLICE; i++) await port.take(1, w);
      const again = await SharedBudget.open(db.url, { service: 'data', key, cuPerWindow: BUDGET, windowMs: 60_000 });
      expect(again.stored).toEqual(w);
      await again.close();
    } finally {
      await ports.close();
    }
  });

  it('in windows of another length, gives back its slice and counts what it sent in the new window', async () => {
    const key = 'key-' + randomBytes(8).toString('hex');
    // A process that knows only the minute until the service names its window of 2 s.
    const budget = await SharedBudget.open(db.url, { service: 'data', key, cuPerWindow: 30 * BUDGET, windowMs: 60_000 });
    try {
      for (let i = 0; i < 20; i++) await budget.take(5);
      await budget.setBudget(BUDGET, WINDOW_MS);
      expect(budget.budget).toEqual({ cuPerWindow: BUDGET, windowMs: WINDOW_MS });
      const rows = await sql.query<{ window_ms: string; used: string }>('SELECT window_ms, used FROM chainlake.budget_windows WHERE key_hash = $1 ORDER BY window_ms', [keyHash(key)]);
      expect(rows.rows.map((r) => [Number(r.window_ms), Number(r.used)])).toEqual([
        [WINDOW_MS, 100],
        [60_000, 100],
      ]);
    } finally {
      await budget.close();
    }
  });

  it('shares in the stricter of two budgets: the shorter window, at the lower rate', () => {
    expect(stricter({ cuPerWindow: 30_000, windowMs: 60_000 }, { cuPerWindow: 1000, windowMs: 2000 })).toEqual({ cuPerWindow: 1000, windowMs: 2000 });
    expect(stricter({ cuPerWindow: 30_000, windowMs: 60_000 }, { cuPerWindow: 400, windowMs: 2000 })).toEqual({ cuPerWindow: 400, windowMs: 2000 });
    expect(stricter({ cuPerWindow: 500, windowMs: 2000 }, { cuPerWindow: 30_000, windowMs: 60_000 })).toEqual({ cuPerWindow: 500, windowMs: 2000 });
    expect(stricter({ cuPerWindow: 6000, windowMs: 60_000 }, { cuPerWindow: 400, windowMs: 2000 })).toEqual({ cuPerWindow: 200, windowMs: 2000 });
    expect(stricter({ cuPerWindow: 6000, windowMs: 60_000 }, undefined)).toEqual({ cuPerWindow: 6000, windowMs: 60_000 });
  });

  it('a process that cannot reach the database fails at once with the address, not the password', async () => {
    const url = `postgres://chainlake:s3cret-pw@127.0.0.1:${db.port + 1}/x`;
    const err = await SharedBudget.open(url, { service: 'data', cuPerWindow: BUDGET }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetUnavailable);
    expect(String(err)).toContain(`postgres://chainlake:***@127.0.0.1:${db.port + 1}/x`);
    expect(String(err)).not.toContain('s3cret-pw');
  });
});
