// The rate-budget scheduler against the simulator's own limiter (fixed windows counted by arrival,
// as in production: a minute, or as long as its ratelimit-policy says), on fake timers: minutes of
// traffic in milliseconds, with latencies and window phases drawn from a seeded generator.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateBudget, readRateHeaders, TIERS, type BudgetSettings } from '../../src/sources/budget.js';
import { FairScheduler } from '../../src/sources/scheduler.js';
import { RateLimiter } from '../../src/simulator/ratelimit.js';
import { checkPipeline } from '../../src/config/pipeline.js';
import { seeded as rng } from '../random.js';
import { SharedBudget, type BudgetDatabase } from '../../src/cluster/budget.js';
import type { Clock } from '../../src/sources/clock.js';
import { FakeClock } from './fake-clock.js';

const MIN = 60_000;


interface Traffic {
  settings?: BudgetSettings;
  /** The service's budget per minute. */
  serverCu: number;
  /** The service's window (default 60 s); its quota is its share of serverCu. */
  windowSeconds?: number;
  /** Whether answers carry ratelimit-policy / -limit / -remaining (keyed requests in production). */
  headers?: boolean;
  flows: Array<{ name: string; weight: number }>;
  concurrency: number;
  windows: number;
  seed: number;
  /** Every n-th request gets a 429 that is not the budget's (retry-after 1). */
  spurious429Every?: number;
  /** Where in the service's window the run starts (ms after it opens); else a random phase. */
  phaseMs?: number;
}

interface Outcome {
  requests: number;
  limited: number;
  /** CU accepted per whole server window, in order. */
  perWindow: number[];
  /** The server's quota per window. */
  quota: number;
  byFlow: Record<string, number>;
  scheduler: FairScheduler;
}

/** Partitions paging sequentially through a shared scheduler into a fixed-window limiter. */
async function drive(o: Traffic): Promise<Outcome> {
  const rand = rng(o.seed);
  const W = (o.windowSeconds ?? 60) * 1000;
  const start = Date.UTC(2025, 0, 1) + (o.phaseMs ?? Math.floor(rand() * W)); // any phase of the service's window
  vi.setSystemTime(start);
  const end = (Math.ceil(start / W) + o.windows) * W;
  const limiter = new RateLimiter({ cuPerMinute: o.serverCu, windowSeconds: o.windowSeconds, blockAfterLimitedRequests: 1e9 }, Date.now);
  const scheduler = new FairScheduler(new RateBudget(o.settings));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  let slots = o.concurrency;
  const slotWaiters: Array<() => void> = [];
  const out: Outcome = { requests: 0, limited: 0, perWindow: [], quota: Math.floor((o.serverCu * W) / MIN), byFlow: {}, scheduler };
  const accepted = new Map<number, number>();
  const flow = async (name: string, weight: number) => {
    while (Date.now() < end) {
      const grant = await scheduler.acquire(weight, name);
      if (slots === 0) await new Promise<void>((r) => slotWaiters.push(r));
      else slots--;
      await scheduler.waitPause();
      grant.sent();
      await sleep(20 + rand() * 300); // to the service
      out.requests++;
      const spurious = o.spurious429Every !== undefined && out.requests % o.spurious429Every === 0;
      const d = spurious ? undefined : limiter.take('client', weight);
      const arrived = Date.now();
      await sleep(5 + rand() * 100); // back
      const headers: Record<string, string> = {};
      if (o.headers && d) Object.assign(headers, { 'ratelimit-policy': limiter.policy(), 'ratelimit-limit': String(d.limit), 'ratelimit-remaining': String(d.remaining) });
      if (!d || !d.allowed) {
        out.limited++;
        headers['retry-after'] = String(d && !d.allowed ? d.resetSeconds : 1);
      }
      grant.answer(d?.allowed ? 200 : 429, (n) => headers[n] ?? null);
      grant.finish();
      const next = slotWaiters.shift();
      if (next) next();
      else slots++;
      if (d?.allowed) {
        const w = Math.floor(arrived / W);
        accepted.set(w, (accepted.get(w) ?? 0) + weight);
        out.byFlow[name] = (out.byFlow[name] ?? 0) + weight;
      }
    }
  };
  const done = Promise.all(o.flows.map((f) => flow(f.name, f.weight)));
  await vi.advanceTimersByTimeAsync(end - start + 5 * MIN);
  await done;
  for (let w = Math.ceil(start / W); w < end / W; w++) out.perWindow.push(accepted.get(w) ?? 0);
  return out;
}

const mixed = [
  ...['t1', 't2', 't3', 't4', 't5', 't6'].map((name) => ({ name, weight: 20 })),
  { name: 'r1', weight: 100 },
  { name: 'r2', weight: 100 },
];
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('budget configured', () => {
  it.each([1, 2, 3])('uses the whole budget and is never answered 429, whatever the window phase and latency (seed %i)', async (seed) => {
    const r = await drive({ settings: { cuPerMinute: 6000 }, serverCu: 6000, flows: mixed, concurrency: 4, windows: 10, seed });
    expect(r.limited).toBe(0);
    expect(Math.min(...r.perWindow.slice(1)) / 6000).toBeGreaterThanOrEqual(0.95);
    expect(mean(r.perWindow) / 6000).toBeGreaterThanOrEqual(0.97);
  });

  it('a budget set below the service\'s is kept', async () => {
    const r = await drive({ settings: { cuPerMinute: 3000 }, serverCu: 6000, flows: mixed, concurrency: 4, windows: 5, seed: 4 });
    expect(Math.max(...r.perWindow)).toBeLessThanOrEqual(3000);
    expect(r.scheduler.budget.source).toBe('pipeline');
  });

  it('shares the budget fairly in CU between partitions of different weights', async () => {
    const r = await drive({ settings: { cuPerMinute: 6000 }, serverCu: 6000, flows: mixed, concurrency: 4, windows: 10, seed: 5 });
    const shares = Object.values(r.byFlow);
    expect(shares).toHaveLength(mixed.length);
    expect(Math.min(...shares) / Math.max(...shares)).toBeGreaterThan(0.9);
  });
});

/** What the service answers a request: its status, and a 429's retry-after if it sends one. */
type Answer = { status: number; retryAfterMs?: number };

/**
 * One partition paging 20-CU requests one after the other on a time given as a number: each wants
 * to go `gap(t)` ms after the last went (t: when the last went), goes as soon as the budget lets
 * it, reaches the service 50 ms later and is answered 50 ms after that, as `service` says.
 * Returns what the service accepted per minute from `from`, and the 429s.
 */
function page(b: RateBudget, o: { from: number; minutes: number; gap: (t: number) => number; service: (i: number, arrived: number) => Answer }): { perMinute: number[]; limited: number; requests: number } {
  const perMinute = new Array<number>(o.minutes).fill(0);
  let limited = 0;
  let i = 0;
  for (let want = o.from; want < o.from + o.minutes * MIN; i++) {
    // As the scheduler does: asks again at the time the budget named, until it names that time.
    let at = want;
    for (let next = b.earliest(20, at); next > at; next = b.earliest(20, at)) at = next;
    if (at >= o.from + o.minutes * MIN) break;
    const c = b.grant(20, at, at > want);
    const a = o.service(i, at + 50);
    b.answer(c, a.status, a.retryAfterMs !== undefined ? { retryAfterMs: a.retryAfterMs } : {}, at + 100);
    b.finish(c, at + 100);
    const minute = Math.floor((at + 50 - o.from) / MIN);
    if (a.status === 429) limited++;
    else if (minute < o.minutes) perMinute[minute]! += 20;
    want = Math.max(at + 100, at + o.gap(at - o.from));
  }
  return { perMinute, limited, requests: i };
}

describe('budget unknown', () => {
  it.each([6000, 2500, 14000])('learns a budget of %i CU/min from 429s alone: >= 95% used, <= 1% answered 429', async (serverCu) => {
    const r = await drive({ serverCu, flows: mixed, concurrency: 8, windows: 20, seed: serverCu });
    expect(r.limited / r.requests).toBeLessThanOrEqual(0.01);
    // The first windows are the learning; from then on the budget is used.
    expect(mean(r.perWindow.slice(3)) / serverCu).toBeGreaterThanOrEqual(0.95);
    expect(r.scheduler.budget.source).toBe('learnt');
    expect(r.scheduler.budget.limit / serverCu).toBeGreaterThan(0.9);
    expect(r.scheduler.budget.limit / serverCu).toBeLessThan(1.05);
  });

  // A 429 that is not the budget's (a proxy, a blip) taught the run a budget of what got through
  // in its window, and the additive step was a share of that: in a lull the budget learnt was what
  // the lull needed, 1/40 of the demand that came next, and stayed there; early in a run it was
  // half the rate, for good. A decrease no 429 confirms is undone once two
  // windows in a row pass without one (one of the run's windows may straddle two of the service's;
  // two hold a whole one), so the pace is back by the third window after the 429.
  it.each([
    // The 15th request, at 90 s, in a lull of one request every 6 s until the demand comes at 2 minutes.
    ['in a lull', 1000, (t: number) => (t < 2 * MIN ? 6000 : 200), 15, 1],
    ['in a lull', undefined, (t: number) => (t < 2 * MIN ? 6000 : 200), 15, 1],
    // The 30th, 6 s into a run at its full demand.
    ['early in a run', 1000, () => 200, 30, 0],
    ['early in a run', undefined, () => 200, 30, 0],
  ])('a lone 429 %s (retry-after %s ms) among 200s: the pace is back within three windows', (_, retryAfterMs, gap, at, minute) => {
    const b = new RateBudget();
    const from = Date.UTC(2025, 0, 1);
    const out = page(b, { from, minutes: 10, gap, service: (i) => (i === at ? { status: 429, retryAfterMs } : { status: 200 }) });
    expect(out.limited).toBe(1);
    // Unpaced (nothing is known of the budget), 300 requests a minute go: 6000 CU.
    for (const cu of out.perMinute.slice(minute + 3)) expect(cu).toBeGreaterThanOrEqual(0.95 * 6000);
    expect(b.source).toBe('unknown');
  });

  it('two 429s without retry-after a window apart in a lull: the second is kept, and the pace climbs back within 14 windows of it', () => {
    const b = new RateBudget();
    const from = Date.UTC(2025, 0, 1);
    const gap = (t: number) => (t < 3 * MIN ? 6000 : 200);
    const out = page(b, { from, minutes: 25, gap, service: (i) => (i === 15 || i === 21 ? { status: 429 } : { status: 200 }) });
    expect(out.limited).toBe(2);
    // The second, at 200 s, halved the rate again to 45 CU a minute, 1/130 of the demand that came
    // next; steps of 1% of it stayed at 40 CU a minute for good. After three steps each is twice
    // the last: 6000 again in the 16th minute.
    expect(out.perMinute[3]!).toBeLessThan(100);
    for (const cu of out.perMinute.slice(3 + 14)) expect(cu).toBeGreaterThanOrEqual(0.95 * 6000);
  });

  it('a budget that answers 429 whenever the run goes faster is learnt and kept: >= 95% used, <= 1% answered 429', () => {
    const from = Date.UTC(2025, 0, 1) + 17_000; // 17 s into the service's window
    const limiter = new RateLimiter({ cuPerMinute: 3000, blockAfterLimitedRequests: 1e9 }, () => now);
    let now = from;
    const b = new RateBudget();
    const out = page(b, {
      from, minutes: 20, gap: () => 200,
      service: (_, arrived) => {
        now = arrived;
        const d = limiter.take('client', 20);
        return d.allowed ? { status: 200 } : { status: 429, retryAfterMs: d.resetSeconds * 1000 };
      },
    });
    expect(out.limited / out.requests).toBeLessThanOrEqual(0.01);
    expect(mean(out.perMinute.slice(4)) / 3000).toBeGreaterThanOrEqual(0.95);
    expect(b.source).toBe('learnt');
    expect(b.limit / 3000).toBeGreaterThan(0.9);
    expect(b.limit / 3000).toBeLessThan(1.05);
  });

  it.each([
    [200, 12],
    [300, 13],
  ])('a run started %i ms into a window learns from it as a whole window: the next one is not overrun (seed %i)', async (phaseMs, seed) => {
    // That window and the next: the decrease is undone two windows after the 429 (the first after a
    // quiet spell), and a third window would end in a 429 again.
    const r = await drive({ serverCu: 2500, flows: mixed, concurrency: 4, windows: 1, seed, phaseMs });
    // Window 0 (from the start) ends in the first 429s (one per request under way); the rule for a
    // window seen in part would halve a rate ten times the budget, and window 1 would end in as
    // many again (8 and 6 429s in all for these two, against 4 and 2).
    expect(r.limited).toBeLessThanOrEqual(4);
    expect(r.scheduler.budget.limit / 2500).toBeGreaterThan(0.9);
    expect(mean(r.perWindow) / 2500).toBeGreaterThanOrEqual(0.95);
  });

  it('takes the budget from ratelimit-limit / ratelimit-remaining when the service sends them', async () => {
    const r = await drive({ serverCu: 6000, headers: true, flows: mixed, concurrency: 4, windows: 6, seed: 7 });
    expect(r.limited).toBe(0);
    expect(r.scheduler.budget.source).toBe('headers');
    expect(r.scheduler.budget.limit).toBe(6000);
    expect(mean(r.perWindow.slice(1)) / 6000).toBeGreaterThanOrEqual(0.95);
  });

  it('429s that are not the budget, one every 300 requests, do not wear the learnt rate down', async () => {
    const r = await drive({ serverCu: 6000, flows: mixed, concurrency: 4, windows: 20, seed: 1, spurious429Every: 300 });
    // Taking each for the budget's lowered the rate 2% a window for good: 0.73 of the budget in
    // the 20th window, 0.5 in the 40th. A 429 in a window that carried no more than two clean
    // windows in a row is doubted once.
    expect(mean(r.perWindow.slice(10)) / 6000).toBeGreaterThan(0.85);
    expect(r.perWindow.at(-1)! / 6000).toBeGreaterThan(0.85);
  });

  it('429s that are not the budget lower the rate once per window, not once per 429', async () => {
    const r = await drive({ serverCu: 1e9, flows: mixed, concurrency: 4, windows: 3, seed: 8, spurious429Every: 25 });
    expect(r.limited).toBeGreaterThan(30);
    // Three windows, so at most three decreases, each at most to half.
    expect(r.scheduler.budget.limit).toBeGreaterThan(mean(r.perWindow) / 8);
  });
});

describe('a window of another length in ratelimit-policy', () => {
  it.each([1, 2, 3])('against 400;w=5 (a 5-second window): >= 0.95 of the budget used, <= 1%% answered 429 (seed %i)', async (seed) => {
    const r = await drive({ serverCu: 4800, windowSeconds: 5, headers: true, flows: mixed, concurrency: 4, windows: 120, seed });
    expect(r.quota).toBe(400);
    expect(r.limited / r.requests).toBeLessThanOrEqual(0.01);
    // The first window is the run's start (the budget is known from the first answer on).
    expect(mean(r.perWindow.slice(1)) / r.quota).toBeGreaterThanOrEqual(0.95);
    const b = r.scheduler.budget;
    expect(b.source).toBe('headers');
    expect(b.windowMs).toBe(5000);
    expect(b.limit).toBe(400);
    expect(b.cuPerMinute).toBe(4800);
  });

  it('a budget the pipeline sets per minute is counted in the window the service announces', async () => {
    // Transfer pages only: in a window of 250 CU, 100-CU pages would leave a share unused whatever the scheduling.
    const transfers = mixed.filter((f) => f.weight === 20);
    const r = await drive({ settings: { cuPerMinute: 3000 }, serverCu: 4800, windowSeconds: 5, headers: true, flows: transfers, concurrency: 4, windows: 60, seed: 4 });
    const b = r.scheduler.budget;
    expect(b.source).toBe('pipeline');
    expect(b.windowMs).toBe(5000);
    expect(b.limit).toBe(250);
    expect(r.limited).toBe(0);
    expect(Math.max(...r.perWindow)).toBeLessThanOrEqual(250);
    // Twelve 20-CU pages fit in 250 CU: 0.96 at most.
    expect(mean(r.perWindow.slice(1)) / 250).toBeGreaterThanOrEqual(0.92);
  });

  it('a window of an hour: the quota is of the hour, not of a minute', async () => {
    // 60,000 CU an hour is 1,000 a minute: taken as a minute's, it would be sixty times too many.
    const r = await drive({ serverCu: 1000, windowSeconds: 3600, headers: true, flows: mixed, concurrency: 4, windows: 2, seed: 6 });
    expect(r.scheduler.budget.windowMs).toBe(3_600_000);
    expect(r.scheduler.budget.cuPerMinute).toBe(1000);
    expect(r.limited).toBe(0);
    expect(mean(r.perWindow) / r.quota).toBeGreaterThanOrEqual(0.95);
  });
});

describe('RateBudget', () => {
  it('holds a request until enough claims are a window past their answer', () => {
    const b = new RateBudget({ cuPerMinute: 100 });
    const a = b.grant(60, 0, false);
    expect(b.earliest(40, 40_000)).toBe(40_000);
    const c = b.grant(40, 40_000, false);
    expect(b.earliest(20, 40_000)).toBe(Infinity); // all in flight: an answer must come first
    b.finish(a, 41_000);
    b.finish(c, 43_000);
    expect(b.earliest(20, 45_000)).toBe(41_000 + MIN);
    expect(b.earliest(70, 45_000)).toBe(43_000 + MIN);
  });

  it('paces requests evenly over the window after a burst of a twelfth of the budget', () => {
    const b = new RateBudget({ cuPerMinute: 1200 });
    let t = 0;
    let n = 0;
    while (b.earliest(20, t) === t) b.finish(b.grant(20, t, false), t), n++;
    expect(n).toBe(6); // 100 CU (5 s worth) at once, then one 20-CU request a second
    t = b.earliest(20, t);
    expect(t).toBe(1000);
    b.grant(20, t, true);
    expect(b.earliest(20, t)).toBe(2000);
  });

  it('counts what went out before the service told the budget against the opening burst', () => {
    const b = new RateBudget();
    const first = [0, 1, 2, 3].map(() => b.grant(100, 0, false)); // unknown budget: nothing holds them
    b.answer(first[0]!, 200, { limit: 6000, remaining: 5600 }, 250);
    let n = 0;
    while (b.earliest(20, 300) === 300) b.grant(20, 300, false), n++;
    // 400 CU out already: the opening burst (5 s of budget, 500 CU) and the 30 CU earned in the
    // 0.3 s since leave room for 130, so 7 requests of 20 (the last starts inside the allowance).
    expect(n).toBe(7);
  });

  it('lets a request heavier than the whole budget go alone, then pays it back', () => {
    const b = new RateBudget({ cuPerMinute: 50 });
    expect(b.earliest(100, 0)).toBe(0);
    b.finish(b.grant(100, 0, false), 10);
    expect(b.earliest(100, 20)).toBe(2 * MIN - MIN / 12);
  });

  it('keeps the day budget per UTC day', () => {
    const day = Date.UTC(2025, 0, 2);
    const b = new RateBudget({ cuPerMinute: 1000, cuPerDay: 100 });
    for (let i = 0; i < 5; i++) b.finish(b.grant(20, day + 3_600_000 + i, false), day + 3_600_000 + i);
    expect(b.earliest(20, day + 7_200_000)).toBe(day + 86_400_000);
  });

  it('a 429 holds every request until retry-after', () => {
    const b = new RateBudget();
    const c = b.grant(20, 0, false);
    b.answer(c, 429, { retryAfterMs: 30_000 }, 1000);
    b.finish(c, 1000);
    expect(b.earliest(20, 2000)).toBe(31_000);
  });

  it('keeps exactly a window of answers over thousands of them (its ring wraps, then grows while wrapped)', () => {
    const b = new RateBudget();
    const done: Array<[number, number]> = [];
    let t = 0;
    // A slow minute and more (about 1,000 answers live, the ring wraps), then a fast spell that
    // grows it past its first size while its oldest entry is mid-ring.
    for (const [n, every] of [[4000, 60], [3000, 10]] as const) {
      for (let i = 0; i < n; i++, t += every) {
        const w = 1 + (i % 3);
        b.finish(b.grant(w, t, false), t + 5);
        done.push([t + 5, w]);
        if (i % 7 === 0) {
          const now = t + 6;
          expect(b.used(now)).toBe(done.filter(([d]) => d > now - MIN).reduce((x, [, w2]) => x + w2, 0));
        }
      }
    }
    expect(b.used(t + MIN / 2)).toBe(done.filter(([d]) => d > t + MIN / 2 - MIN).reduce((x, [, w2]) => x + w2, 0));
  });

  it('claims for a window what the service counted beyond its own requests', () => {
    const b = new RateBudget();
    const c = b.grant(20, 0, false);
    // Another process on the key spent 480 of 1000 already.
    b.answer(c, 200, { limit: 1000, remaining: 500 }, 100);
    b.finish(c, 100);
    expect(b.limit).toBe(1000);
    expect(b.used(100)).toBe(500);
    expect(b.earliest(600, 100)).toBe(100 + MIN);
  });

  it('decreases to just under what got through in the limited window, adds a step per window at the budget, and undoes a lone 429\'s decrease two windows on', () => {
    const b = new RateBudget();
    let t = 0;
    for (let i = 0; i < 50; i++) {
      const c = b.grant(20, (t += 1200), false);
      b.answer(c, 200, {}, t + 50);
      b.finish(c, t + 50);
    }
    const c = b.grant(20, (t += 1200), false);
    // The service's window closes in 4 to 5 s, so it opened 55 to 56 s ago: the 46 requests
    // (920 CU) sent since the middle of that second landed in it. The decrease waits for the pause.
    b.answer(c, 429, { retryAfterMs: 5000 }, t);
    b.finish(c, t);
    expect(b.limit).toBe(Infinity);
    t += 5000;
    expect(b.earliest(20, t)).toBeGreaterThan(t); // what the window saw still counts against the lower budget
    expect(b.limit).toBeCloseTo(0.98 * 920);
    expect(b.source).toBe('learnt');
    const before = b.limit;
    b.grant(20, t, true);
    b.grant(20, t + MIN, true); // a window on, the budget still the limit and no 429: one step up
    expect(b.limit).toBeCloseTo(before + 0.01 * 920);
    // A second window on without a 429: nothing came near this one, so what was known before it
    // (nothing) comes back.
    b.grant(20, t + 2 * MIN + 1, false);
    expect(b.limit).toBe(Infinity);
  });

  it('a 429 that holds back longer than a window (the day budget, a block) only pauses', () => {
    const b = new RateBudget({ cuPerMinute: 6000 });
    const c = b.grant(20, 0, false);
    b.answer(c, 429, { retryAfterMs: 3_600_000 }, 100);
    b.finish(c, 100);
    expect(b.earliest(20, 200)).toBe(3_600_100);
    expect(b.limit).toBe(6000);
  });

  it('a 429 before anything got through only pauses', () => {
    const b = new RateBudget();
    const c = b.grant(20, 0, false);
    b.answer(c, 429, { retryAfterMs: 2000 }, 10);
    expect(b.limit).toBe(Infinity);
  });

  it('reads the rate-limit headers, the policy included', () => {
    const h: Record<string, string> = { 'ratelimit-policy': '6000;w=60, 1200000;w=86400', 'ratelimit-remaining': '120', 'retry-after': '7' };
    expect(readRateHeaders((n) => h[n] ?? null)).toEqual({ limit: 6000, windowMs: 60_000, dayLimit: 1_200_000, remaining: 120, retryAfterMs: 7000 });
    expect(readRateHeaders((n) => ({ 'ratelimit-reset': '3', 'ratelimit-limit': 'x' })[n] ?? null)).toEqual({ retryAfterMs: 3000 });
  });

  it.each([
    // The limit is the quota of the policy's window, whatever its length.
    [{ 'ratelimit-policy': '400;w=5', 'ratelimit-limit': '400', 'ratelimit-remaining': '380' }, { limit: 400, windowMs: 5000, remaining: 380 }],
    // Without a policy, the services' documented minute.
    [{ 'ratelimit-limit': '6000', 'ratelimit-remaining': '10' }, { limit: 6000, windowMs: 60_000, remaining: 10 }],
    // The later drafts' form: named policies, the quota as q.
    [{ 'ratelimit-policy': '"burst";q=400;w=5, "daily";q=1000000;w=86400' }, { limit: 400, windowMs: 5000, dayLimit: 1_000_000 }],
    // Two windows: the budget follows the lower rate (50 a minute is below 10 a second); what is
    // left of the 1-second window says nothing of the minute's.
    [{ 'ratelimit-policy': '10;w=1, 50;w=60', 'ratelimit-limit': '10', 'ratelimit-remaining': '9' }, { limit: 50, windowMs: 60_000 }],
    // A limit lower than the policy's entry for its window wins.
    [{ 'ratelimit-policy': '400;w=5', 'ratelimit-limit': '300' }, { limit: 300, windowMs: 5000 }],
  ])('reads %j as %j', (h: Record<string, string>, expected) => {
    expect(readRateHeaders((n) => h[n] ?? null)).toEqual(expected);
  });

  it.each([true, false])('what the service says is left of its window frees what the claims still hold once the window turns (remaining sent: %s)', (told) => {
    const b = new RateBudget();
    const big = b.grant(300, 0, false);
    // A slow answer: the service counted 300 CU of its window.
    b.answer(big, 200, { limit: 400, windowMs: 5000, ...(told ? { remaining: 100 } : {}) }, 4000);
    b.finish(big, 4000);
    const small = b.grant(20, b.earliest(20, 5200), false);
    expect(small.sentAt).toBe(5200);
    // Its window has turned: only this request is counted in the new one.
    b.answer(small, 200, { limit: 400, windowMs: 5000, ...(told ? { remaining: 380 } : {}) }, 5250);
    b.finish(small, 5250);
    // By the claims alone, the 300 CU answered at 4000 hold until 9000.
    expect(b.earliest(300, 5250)).toBe(told ? 5250 : 9000);
    if (!told) return;
    const third = b.grant(300, 5250, false);
    // In flight or answered, it counts by both bounds: 320 CU may share the service's window, so
    // 100 more wait for the claims (the 20-CU one answered at 5250 holds until 10250).
    expect(b.earliest(100, 5300)).toBe(10_250);
    b.finish(third, 5400);
    expect(b.earliest(100, 5400)).toBe(10_250);
  });

  it('counts claims over the window the service announces, and keeps the rate of a budget learnt before', () => {
    const b = new RateBudget();
    const c = b.grant(100, 0, false);
    b.answer(c, 200, { limit: 400, windowMs: 5000, remaining: 300 }, 200);
    b.finish(c, 200);
    expect(b.windowMs).toBe(5000);
    expect(b.limit).toBe(400);
    expect(b.cuPerMinute).toBe(4800);
    const d = b.grant(300, b.earliest(300, 200), false);
    b.finish(d, 1000);
    // 400 CU claimed: the next waits until the first claim is a 5-second window past its answer.
    expect(b.earliest(100, 1000)).toBe(5200);
  });
});

describe('FairScheduler', () => {
  it('serves the head first: a heavy request is not overtaken by light ones', async () => {
    const s = new FairScheduler(new RateBudget({ cuPerMinute: 100 }));
    const g1 = await s.acquire(80, 'a');
    const order: string[] = [];
    const heavy = s.acquire(100, 'heavy').then((g) => (order.push('heavy'), g));
    const light = s.acquire(20, 'light').then((g) => (order.push('light'), g));
    g1.finish();
    await vi.advanceTimersByTimeAsync(MIN + 10);
    (await heavy).finish();
    await vi.advanceTimersByTimeAsync(MIN + 10);
    await light;
    expect(order).toEqual(['heavy', 'light']);
  });

  it('a slow request of one partition does not hold up the others', async () => {
    const s = new FairScheduler(new RateBudget({ cuPerMinute: 1200 }));
    await s.acquire(20, 'slow'); // never answered during the test
    let served = 0;
    const end = Date.now() + 2 * MIN;
    const partition = async (flow: string) => {
      while (Date.now() < end) {
        (await s.acquire(20, flow)).finish();
        served++;
      }
    };
    const both = Promise.all([partition('x'), partition('y')]);
    await vi.advanceTimersByTimeAsync(2 * MIN + 1000);
    await both;
    // Two minutes of a 1,200 CU/min budget less the slow request: 119 requests of 20 CU.
    expect(served).toBeGreaterThanOrEqual(118);
  });

  it('a partition in eight chunks gets the share of one partition, and its chunks share it in turn', async () => {
    const s = new FairScheduler(new RateBudget({ cuPerMinute: 1200 }));
    const served = new Map<string, number>();
    const t0 = Date.now();
    const end = t0 + MIN - 1000;
    // Each listing has one request under way at a time, answered 500 ms after it is granted.
    // Counted after the first 2 s, within one window: the burst a window opens with goes to
    // whoever is waiting then (the small partition has one request to send, the big one eight).
    const listing = async (flow: string, name: string) => {
      while (Date.now() < end) {
        const g = await s.acquire(20, flow);
        if (Date.now() - t0 >= 2000) served.set(name, (served.get(name) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 500));
        g.finish();
      }
    };
    const chunks = Array.from({ length: 8 }, (_, i) => listing('big', `big/${i}`));
    const all = Promise.all([...chunks, listing('small', 'small')]);
    await vi.advanceTimersByTimeAsync(MIN + 5000);
    await all;
    const big = [...served].filter(([k]) => k.startsWith('big/')).map(([, n]) => n);
    const small = served.get('small')!;
    const bigTotal = big.reduce((a, b) => a + b, 0);
    // A request a second, taken in turn whenever both wait: about half each, whatever the number
    // of chunks (a burst the budget allows goes to the requests waiting then: more of the big
    // partition's), and the big partition's part in turn over its chunks.
    expect(small + bigTotal).toBeGreaterThanOrEqual(55);
    expect(small / (small + bigTotal)).toBeGreaterThanOrEqual(0.4);
    expect(big).toHaveLength(8);
    expect(Math.max(...big) - Math.min(...big)).toBeLessThanOrEqual(1);
  });

  it('an abort while waiting rejects, and the queue moves on', async () => {
    const s = new FairScheduler(new RateBudget({ cuPerMinute: 100 }));
    const g = await s.acquire(100, 'a');
    const ac = new AbortController();
    const waiting = s.acquire(50, 'b', ac.signal);
    const other = s.acquire(50, 'c');
    ac.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    g.finish();
    await vi.advanceTimersByTimeAsync(MIN + 10);
    await expect(other).resolves.toBeDefined();
    expect(s.waitingCount).toBe(0);
  });

  it('waitPause ends at retry-after, or at once on abort', async () => {
    const s = new FairScheduler(new RateBudget());
    s.budget.pause.extend(Date.now() + 5000);
    let over = false;
    const p = s.waitPause().then(() => (over = true));
    await vi.advanceTimersByTimeAsync(4900);
    expect(over).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    await p;
    expect(over).toBe(true);
    s.budget.pause.extend(Date.now() + 5000);
    const ac = new AbortController();
    const q = s.waitPause(ac.signal);
    ac.abort(new Error('gone'));
    await expect(q).rejects.toThrow('gone');
  });
});

describe('budget keys of a source', () => {
  const base = { name: 'x', streams: [{ table: 'avg_tps', chainIds: ['43114'] }] };
  const check = (sources: unknown) => checkPipeline({ ...base, sources }, 'p.yaml').sources;

  it('a tier sets both budgets; explicit numbers override it', () => {
    expect(check({ data: { tier: 'growth' } }).data).toMatchObject(TIERS.growth);
    expect(check({ data: { tier: 'free', cuPerMinute: 7000 } }).data).toMatchObject({ cuPerMinute: 7000, cuPerDay: 2_000_000 });
    expect(check({ metrics: { cuPerMinute: 8000 } }).metrics).toMatchObject({ cuPerMinute: 8000 });
    expect(check({}).data.cuPerMinute).toBeUndefined();
  });

  it.each([
    [{ data: { tier: 'gold' } }, 'sources.data.tier: "gold" is not a tier (unauthenticated, free, base, growth, pro)'],
    [{ metrics: { tier: 'free' } }, 'sources.metrics.tier: tiers belong to the data service; the metrics service has one published budget, 8000 CU/min and 1200000 CU/day: set cuPerMinute / cuPerDay instead'],
    [{ data: { cuPerMinute: 0 } }, 'sources.data.cuPerMinute: must be at least 1 (leave it out to learn the budget from the service)'],
    [{ data: { cuPerDay: 1.5 } }, 'sources.data.cuPerDay: must be a whole number >= 0, not 1.5'],
  ])('%j is refused with its place', (sources, message) => {
    expect(() => check(sources)).toThrow(`p.yaml: ${message}`);
  });
});

/**
 * The key's budget shared by processes through the database (src/cluster/budget.ts), its database
 * a stand-in that keeps the windows as its statements do, on the fake clock. The database and the
 * service count their windows on the same clock, as in the tests and benchmarks on one machine.
 */
function budgetDatabase(clock: FakeClock, o: { arrive: () => number; answer: () => number }): BudgetDatabase {
  const windows = new Map<string, { used: number; cap: number }>();
  let pausedUntil = 0;
  const at = (ms: unknown, start: unknown) => `${ms}:${start}`;
  const query = async (sql: string, p: unknown[] = []) => {
    await clock.sleep(o.arrive());
    const now = clock.now();
    let rows: unknown[] = [];
    if (sql.includes('WITH clock AS')) {
      const [windowMs, budget, slice, weight, backStart, back, lead] = [p[2], p[3], p[5], p[6], p[7], p[8], p[9]].map(Number) as number[];
      const start = now + lead! - ((now + lead!) % windowMs!);
      if (back! > 0 && backStart !== start) {
        const w = windows.get(at(windowMs, backStart));
        if (w) w.used = Math.max(0, w.used - back!);
      }
      let granted: number | null = null;
      if (pausedUntil <= now && weight! <= budget!) {
        const w = windows.get(at(windowMs, start)) ?? { used: 0, cap: budget! };
        windows.set(at(windowMs, start), w);
        if (w.used + weight! <= budget!) {
          granted = Math.min(slice!, budget! - w.used);
          w.used += granted;
        }
      }
      rows = [{ now_ms: String(now), start_ms: String(start), paused_until_ms: String(pausedUntil), cap: String(budget), learnt_cu: null, learnt_window_ms: null, granted: granted === null ? null : String(granted) }];
    } else if (sql.includes('paused_until_ms = GREATEST')) {
      pausedUntil = Math.max(pausedUntil, now + Number(p[2]));
      rows = [{ paused_until_ms: String(pausedUntil), now_ms: String(now) }];
    } else if (sql.startsWith('UPDATE chainlake.budget_windows')) {
      const w = windows.get(at(p[2], p[3]));
      if (w) w.used = Math.max(0, w.used - Number(p[4]));
    }
    await clock.sleep(o.answer());
    return { rows } as never;
  };
  return { query: query as unknown as BudgetDatabase['query'], end: async () => undefined };
}

/** The time a clock's sleeper wakes late: `late` of them by up to `lateMs`. */
const lateness = (rand: () => number, late: number, lateMs: number) => () => (rand() < late ? rand() * lateMs : 0);

/** A clock whose timers fire late now and then, as on an event loop kept busy by other work. */
function slowLoop(clock: FakeClock, lag: () => number): Clock {
  return { now: () => clock.now(), sleep: (ms, signal) => clock.sleep(ms + lag(), signal) };
}

interface Shared {
  /** Share of the timers, the database's answers and the requests' ways that are late, and by up to how much. */
  late: number;
  lateMs: number;
  seed: number;
  windows: number;
  /** What a flow does between an answer and its next request (its pages' rows): a process that is not always hungry sends all through the window. */
  thinkMs?: number;
}

/**
 * Two processes on one key, each as a run's client does it (src/sources/client.ts): its scheduler
 * grants, then the request takes its weight from the shared budget with the lead of the latency it
 * has seen, and goes. They page hungry flows into a service counting fixed windows by arrival.
 */
async function driveShared(o: Shared): Promise<{ requests: number; limited: number; perWindow: number[]; quota: number; leaks: number }> {
  const rand = rng(o.seed);
  const W = 10_000;
  const quota = 400;
  const clock = new FakeClock(Date.UTC(2025, 0, 1) + Math.floor(rand() * W), { inMemory: true });
  const lag = lateness(rand, o.late, o.lateMs);
  const limiter = new RateLimiter({ cuPerMinute: (quota * MIN) / W, windowSeconds: W / 1000, blockAfterLimitedRequests: 1e9 }, () => clock.now());
  const end = (Math.ceil(clock.now() / W) + o.windows) * W;
  const accepted = new Map<number, number>();
  let requests = 0;
  let limited = 0;
  let leaks = 0;
  const db = budgetDatabase(clock, { arrive: () => 1 + lag(), answer: () => 1 + lag() });
  const oneProcess = async () => {
    const loop = slowLoop(clock, lag);
    const shared = await SharedBudget.on(db, 'a stand-in', { service: 'data', key: 'k', cuPerWindow: quota, windowMs: W, clock: loop });
    const scheduler = new FairScheduler(new RateBudget({ cuPerMinute: (quota * MIN) / W, shared: true, pause: shared.paused }), loop);
    scheduler.budget.answer(scheduler.budget.grant(0, clock.now(), false), 200, readRateHeaders((n) => ({ 'ratelimit-policy': limiter.policy() })[n] ?? null, clock.now()), clock.now());
    let latency: number | undefined;
    const flow = async (name: string, weight: number) => {
      while (clock.now() < end) {
        const grant = await scheduler.acquire(weight, name);
        await scheduler.waitPause();
        // The client's lead: the latency seen, with its margin.
        const spend = await shared.take(weight, { leadMs: (latency ?? 0) * 1.25 });
        grant.sent();
        const sentAt = clock.now();
        await loop.sleep(20 + rand() * 30); // to the service
        const d = limiter.take('k', weight);
        requests++;
        if (Math.floor(clock.now() / W) * W !== spend.windowStart) leaks++;
        if (d.allowed) accepted.set(Math.floor(clock.now() / W), (accepted.get(Math.floor(clock.now() / W)) ?? 0) + weight);
        else {
          limited++;
        }
        await loop.sleep(10 + rand() * 20); // back
        const now = clock.now();
        latency = latency === undefined ? now - sentAt : 0.8 * latency + 0.2 * (now - sentAt);
        const headers: Record<string, string> = { 'ratelimit-policy': limiter.policy(), 'ratelimit-limit': String(d.limit), 'ratelimit-remaining': String(d.remaining) };
        if (!d.allowed) headers['retry-after'] = String(d.resetSeconds);
        grant.answer(d.allowed ? 200 : 429, (n) => headers[n] ?? null);
        if (!d.allowed) await shared.pause(scheduler.budget.pausedUntil - now);
        grant.finish();
        if (o.thinkMs) await loop.sleep(rand() * 2 * o.thinkMs);
      }
    };
    await Promise.all(['a', 'b', 'c', 'd'].map((f) => flow(f, 20)));
    await shared.close();
  };
  await clock.run(Promise.all([oneProcess(), oneProcess()]));
  const perWindow: number[] = [];
  for (let w = Math.ceil(Date.UTC(2025, 0, 1) / W) + 1; w < end / W - 1; w++) perWindow.push(accepted.get(w) ?? 0);
  return { requests, limited, perWindow, quota, leaks };
}

describe('the shared budget under load', () => {
  // Two processes whose timers fire late (a timer in ten up to half a second late, one in twenty
  // up to a second), whose claims are answered late as often, and whose requests are held as long
  // on their way: hungry, or thinking between pages so that they send all through the window.
  it.each([
    { late: 0.1, lateMs: 500, seed: 1, thinkMs: 3000 },
    { late: 0.2, lateMs: 300, seed: 3, thinkMs: 2500 },
    { late: 0.05, lateMs: 1000, seed: 4, thinkMs: 3000 },
    { late: 0.1, lateMs: 500, seed: 5, thinkMs: 0 },
    { late: 0.3, lateMs: 300, seed: 7, thinkMs: 1500 },
  ])('two processes on one key with slow event loops ($late late by up to $lateMs ms, $thinkMs ms between pages) spend the budget with at most 1% 429s', async (o) => {
    vi.useRealTimers();
    const out = await driveShared({ ...o, windows: 20 });
    expect(out.limited / out.requests).toBeLessThanOrEqual(0.01);
    expect(mean(out.perWindow) / out.quota).toBeGreaterThanOrEqual(0.95);
    for (const cu of out.perWindow) expect(cu).toBeLessThanOrEqual(out.quota);
    // At most one request in the run reached the service in another window than the one it was counted in.
    expect(out.leaks).toBeLessThanOrEqual(1);
  });
});
