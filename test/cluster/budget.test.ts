// The shared budget against a real PostgreSQL, with real concurrency: three processes (see
// budget-client.mjs) on one key, in windows of WINDOW_MS, for a few windows, measured by the CU
// each window carried. The windows are short so that the test is quick; the budget is small so
// that the processes are always hungry. What does not measure the windows' shares is in
// budget-db.test.ts, with the tests that need no time to themselves.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyHash } from '../../src/cluster/budget.js';
import { budgetDatabase, cuBetween, hungry, perWindow, runClients, type Plan } from './budget-clients.js';

const WINDOW_MS = 1000;
const BUDGET = 1000;
const SLICE = BUDGET / 10;

/**
 * The budget spent: at least 0.95 of it over the whole windows, and no window far below. A slice
 * held and not spent (what the tests guard against) costs a tenth of a window, every window; a
 * window that one process, late on a loaded machine, entered a little after its start costs a few
 * hundredths, once.
 */
function expectSpent(windows: number[]): void {
  const mean = windows.reduce((a, b) => a + b, 0) / windows.length;
  expect(mean, windows.join(', ')).toBeGreaterThanOrEqual(0.95 * BUDGET);
  for (const cu of windows) expect(cu, windows.join(', ')).toBeGreaterThanOrEqual(0.85 * BUDGET);
}

// The tests spend windows for seconds at once, each on its own key: they do not meet, and
// together they wait out their windows once.
describe('the shared budget on PostgreSQL: windows shared by processes', () => {
  const pg = budgetDatabase();
  const base = (key: string, startAt: number, stopAt: number) => hungry(pg.db.url, key, { windowMs: WINDOW_MS, cuPerWindow: BUDGET }, startAt, stopAt);

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
    expectSpent(whole.map(([, cu]) => cu));
    // Every process got a share: the budget is shared, not taken by the first to ask.
    for (const r of results) expect(r.spends.length).toBeGreaterThan(0);

    const rows = await pg.sql.query<{ key_hash: string; used: string; cap: string }>('SELECT key_hash, used, cap FROM chainlake.budget_windows WHERE key_hash = $1', [keyHash(key)]);
    expect(keyHash(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(rows.rows.length).toBeGreaterThanOrEqual(whole.length);
    for (const r of rows.rows) expect(Number(r.used)).toBeLessThanOrEqual(Number(r.cap));
    const leaked = await pg.sql.query(`SELECT 1 FROM chainlake.budget_windows WHERE key_hash LIKE '%' || $1 || '%' UNION ALL SELECT 1 FROM chainlake.budget_state WHERE key_hash LIKE '%' || $1 || '%'`, [key]);
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
    for (const [start] of whole) expect(slowPerWindow.get(start) ?? 0).toBeLessThan(SLICE);
    expectSpent(whole.map(([, cu]) => cu));
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

});
