// The client and the budget it shares with other processes (sources/shared.ts), through a port
// that records what it is asked: the PostgreSQL side is test/cluster/budget.test.ts,
// test/cluster/budget-db.test.ts and test/cluster/shared-run.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/sources/client.js';
import { newRequestStats } from '../../src/decl/request.js';
import type { SharedBudgetPort, SharedWindow } from '../../src/sources/shared.js';
import { Pause } from '../../src/sources/pause.js';
import { json, scriptedServer, source } from '../helpers.js';
import { FakeClock } from './fake-clock.js';

const fast = { minBackoffMs: 5, maxBackoffMs: 20 };
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

class RecordingPort implements SharedBudgetPort {
  takes: Array<{ weight: number; window: SharedWindow; sentBefore: number }> = [];
  pauses: number[] = [];
  learnt: SharedWindow[] = [];
  counteds: Array<{ window: SharedWindow; weight: number }> = [];
  failTake?: Error;
  constructor(
    private readonly sent: () => number,
    readonly clock = new FakeClock(),
  ) {}
  async take(weight: number, window: SharedWindow): Promise<void> {
    this.takes.push({ weight, window, sentBefore: this.sent() });
    if (this.failTake) throw this.failTake;
  }
  async pause(ms: number): Promise<number> {
    this.pauses.push(ms);
    return this.clock.now() + ms;
  }
  async learn(window: SharedWindow): Promise<void> {
    this.learnt.push(window);
  }
  async counted(window: SharedWindow, weight: number): Promise<void> {
    this.counteds.push({ window, weight });
  }
  async close(): Promise<void> {}
}

describe('client with a shared budget', () => {
  it('takes each request weight from the shared budget before it is sent, in the known window', async () => {
    const s = await scriptedServer((_req, res) => json(res, 200, { ok: true }));
    close = s.close;
    const port = new RecordingPort(() => s.requests.length);
    const c = new Client('data', source(s.url, { cuPerMinute: 6000 }), { ...fast, shared: port });
    for (let i = 0; i < 3; i++) await c.get('/v1/x', { i: String(i) }, { endpoint: '/v1/x', stats: newRequestStats(), weight: 20 });
    expect(port.takes.map((t) => [t.weight, t.window, t.sentBefore])).toEqual([0, 1, 2].map((i) => [20, { windowMs: 60_000, cuPerWindow: 6000 }, i]));
    // The pipeline's budget is not news to the other processes: nothing learnt.
    expect(port.learnt).toEqual([]);
  });

  it('while no budget is known, sends without it; the budget the service announces is shared and used from then on', async () => {
    const s = await scriptedServer((_req, res) => json(res, 200, { ok: true }, { 'ratelimit-policy': '300;w=2', 'ratelimit-limit': '300', 'ratelimit-remaining': '250' }));
    close = s.close;
    const port = new RecordingPort(() => s.requests.length);
    const c = new Client('data', source(s.url), { ...fast, shared: port });
    await c.get('/v1/x', { i: '0' }, { endpoint: '/v1/x', stats: newRequestStats(), weight: 10 });
    expect(port.takes).toEqual([]);
    expect(port.learnt).toEqual([{ windowMs: 2000, cuPerWindow: 300 }]);
    // It took nothing from the shared window it reached: counted there once answered.
    expect(port.counteds).toEqual([{ window: { windowMs: 2000, cuPerWindow: 300 }, weight: 10 }]);
    await c.get('/v1/x', { i: '1' }, { endpoint: '/v1/x', stats: newRequestStats(), weight: 10 });
    expect(port.takes.map((t) => t.window)).toEqual([{ windowMs: 2000, cuPerWindow: 300 }]);
    // Announced once, written once; the request that took its weight is not counted again.
    expect(port.learnt).toHaveLength(1);
    expect(port.counteds).toHaveLength(1);
  });

  it('a first request that goes alone and gets a 429 is not counted in the shared window (the service did not count it)', async () => {
    const s = await scriptedServer((_req, res, n) =>
      n === 1 ? json(res, 429, { message: 'slow down' }, { 'retry-after': '0', 'ratelimit-policy': '300;w=2', 'ratelimit-limit': '300', 'ratelimit-remaining': '0' }) : json(res, 200, { ok: true }, { 'ratelimit-policy': '300;w=2', 'ratelimit-limit': '300', 'ratelimit-remaining': '250' }),
    );
    close = s.close;
    const port = new RecordingPort(() => s.requests.length);
    const c = new Client('data', source(s.url, { retries: 2 }), { ...fast, shared: port });
    expect(await c.get('/v1/x', {}, { endpoint: '/v1/x', stats: newRequestStats(), weight: 10 })).toEqual({ ok: true });
    expect(port.counteds).toEqual([]);
    // Its retry took its weight from the budget the 429 announced.
    expect(port.takes.map((t) => t.weight)).toEqual([10]);
  });

  it('while no budget is known, the first request goes alone: the others wait for its answer and take from the budget it announces', async () => {
    const s = await scriptedServer((_req, res) => json(res, 200, { ok: true }, { 'ratelimit-policy': '300;w=2', 'ratelimit-limit': '300', 'ratelimit-remaining': '250' }));
    close = s.close;
    const port = new RecordingPort(() => s.requests.length);
    const c = new Client('data', source(s.url), { ...fast, shared: port });
    await Promise.all([0, 1, 2].map((i) => c.get('/v1/x', { i: String(i) }, { endpoint: '/v1/x', stats: newRequestStats(), weight: 10 })));
    expect(port.takes.map((t) => [t.window, t.sentBefore > 0])).toEqual([0, 1].map(() => [{ windowMs: 2000, cuPerWindow: 300 }, true]));
  });

  it("writes a 429's retry-after to the shared budget, then retries", async () => {
    const s = await scriptedServer((_req, res, n) => (n === 1 ? json(res, 429, { message: 'slow down' }, { 'retry-after': '0.2' }) : json(res, 200, { ok: true })));
    close = s.close;
    const port = new RecordingPort(() => s.requests.length);
    const stats = newRequestStats();
    const c = new Client('data', source(s.url, { cuPerMinute: 6000, retries: 3 }), { ...fast, shared: port, clock: port.clock });
    expect(await port.clock.run(c.get('/v1/x', {}, { endpoint: '/v1/x', stats }))).toEqual({ ok: true });
    expect(port.pauses).toHaveLength(1);
    expect(port.pauses[0]).toBeGreaterThan(0);
    expect(port.pauses[0]).toBeLessThanOrEqual(200);
    expect(stats.status429).toBe(1);
    // The retry took its weight again.
    expect(port.takes).toHaveLength(2);
  });

  it("a 429 on a known budget shared with others pauses, and lowers no process's budget to its own share", async () => {
    const s = await scriptedServer((_req, res, n) => (n === 3 ? json(res, 429, { message: 'slow down' }, { 'retry-after': '0.2' }) : json(res, 200, { ok: true })));
    close = s.close;
    const stats = newRequestStats();
    const clock = new FakeClock();
    const shared = new Client('data', source(s.url, { cuPerMinute: 6000, retries: 3 }), { ...fast, shared: new RecordingPort(() => s.requests.length, clock), clock });
    for (let i = 0; i < 4; i++) await clock.run(shared.get('/v1/x', { i: String(i) }, { endpoint: '/v1/x', stats, weight: 20 }));
    expect(stats.status429).toBe(1);
    await clock.advance(300);
    expect(shared.budgetState()).toMatchObject({ source: 'pipeline', cuPerMinute: 6000 });
  });

  it("a pause another process wrote holds this one's requests: the port's pause is the local budget's", async () => {
    const clock = new FakeClock();
    const arrivals: number[] = [];
    const s = await scriptedServer((_req, res) => (arrivals.push(clock.now()), json(res, 200, { ok: true })));
    close = s.close;
    const port = Object.assign(new RecordingPort(() => s.requests.length, clock), { paused: new Pause() });
    const c = new Client('data', source(s.url, { cuPerMinute: 6000 }), { ...fast, shared: port, clock });
    const t0 = clock.now();
    port.paused.extend(t0 + 5000); // read from the database at another request's claim
    await clock.run(c.get('/v1/x', {}, { endpoint: '/v1/x', stats: newRequestStats(), weight: 20 }));
    expect(arrivals).toEqual([t0 + 5000]);
  });

  it('a process held back by the shared window has no room for more listings until a window passes', async () => {
    const s = await scriptedServer((_req, res) => json(res, 200, { ok: true }));
    close = s.close;
    let hold = 0;
    const port = new RecordingPort(() => s.requests.length);
    port.take = async (weight, window) => {
      port.takes.push({ weight, window, sentBefore: s.requests.length });
      if (hold > 0) await port.clock.sleep(hold);
    };
    const c = new Client('data', source(s.url, { cuPerMinute: 6000 }), { ...fast, shared: port, clock: port.clock });
    await port.clock.run(c.get('/v1/x', { i: '0' }, { endpoint: '/v1/x', stats: newRequestStats(), weight: 20 }));
    expect(c.room()).toBeGreaterThan(0);
    hold = 200; // the key's window is full: the take waits for the next
    await port.clock.run(c.get('/v1/x', { i: '1' }, { endpoint: '/v1/x', stats: newRequestStats(), weight: 20 }));
    expect(c.room()).toBe(0);
    // A window on, it has room again.
    await port.clock.advance(60_000);
    expect(c.room()).toBeGreaterThan(0);
  });

  it('a shared budget that cannot be reached fails the request at once, not the service', async () => {
    const s = await scriptedServer((_req, res) => json(res, 200, { ok: true }));
    close = s.close;
    const port = new RecordingPort(() => s.requests.length);
    port.failTake = new Error("the shared budget's database postgres://u:***@db:5432/x did not answer: ECONNREFUSED");
    const c = new Client('data', source(s.url, { cuPerMinute: 6000, retries: 5 }), { ...fast, shared: port });
    const err = (await c.get('/v1/x', {}, { endpoint: '/v1/x', stats: newRequestStats() }).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain("the shared budget's database postgres://u:***@db:5432/x did not answer");
    expect(port.takes).toHaveLength(1);
    expect(s.requests).toHaveLength(0);
  });
});
