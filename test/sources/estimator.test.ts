// The estimator (src/sources/estimator.ts) and the pause (src/sources/pause.ts): pure, the time
// passed in, what got through given as a ledger.
import { describe, expect, it } from 'vitest';
import { Estimator } from '../../src/sources/estimator.js';
import { Ledger } from '../../src/sources/ledger.js';
import { Pause } from '../../src/sources/pause.js';

const W = 60_000;

/** A ledger of `n` counted 20-CU requests, one every `every` ms from `from`, answered 50 ms later. */
function traffic(n: number, every: number, from = 0): { ledger: Ledger; t: number } {
  const ledger = new Ledger(W);
  let t = from;
  for (let i = 0; i < n; i++) {
    const c = ledger.open(20, (t += every));
    c.counted = true;
    ledger.close(c, t + 50);
  }
  return { ledger, t };
}

describe('Estimator', () => {
  it('after a 429 with retry-after, waits for the pause, then decreases to just under what got through in that window', () => {
    const { ledger, t } = traffic(50, 1200);
    const e = new Estimator(Infinity, W);
    const claim = ledger.open(20, t + 1200);
    const seen = (pausedUntil: number) => ({ got: ledger, firstGrantAt: 1200, pausedUntil });
    expect(e.limited(claim, 5000, t + 1200, seen(t + 6200), false)).toBe(false);
    expect(e.settle(t + 6000, seen(t + 6200))).toBe(false); // still paused
    expect(e.estimate).toBe(Infinity);
    expect(e.settle(t + 6200, seen(t + 6200))).toBe(true);
    // The window opened 55 to 56 s before the 429: the 46 requests that reached the service since.
    expect(e.estimate).toBeCloseTo(0.98 * 920);
  });

  it('a 429 of a budget known and shared with others lowers nothing; one longer than a window only pauses', () => {
    const { ledger, t } = traffic(50, 1200);
    const seen = { got: ledger, firstGrantAt: 1200, pausedUntil: t + 5000 };
    const shared = new Estimator(6000, W);
    expect(shared.limited(ledger.open(20, t), 5000, t, seen, true)).toBe(false);
    expect(shared.settle(t + 10_000, seen)).toBe(false);
    expect(shared.estimate).toBe(6000);
    const blocked = new Estimator(6000, W);
    blocked.limited(ledger.open(20, t), 3_600_000, t, { ...seen, pausedUntil: t + 3_600_000 }, false);
    expect(blocked.settle(t + 3_600_000, seen)).toBe(false);
    expect(blocked.estimate).toBe(6000);
  });

  it('without retry-after, halves the rate seen lately at once', () => {
    const { ledger, t } = traffic(50, 1200);
    const e = new Estimator(Infinity, W);
    expect(e.limited(ledger.open(20, t), undefined, t, { got: ledger, firstGrantAt: 1200, pausedUntil: 0 }, false)).toBe(true);
    // Half of the 1,000 CU that got through since the first grant, as a rate per window.
    expect(e.estimate).toBeCloseTo((0.5 * 1000 * W) / (t - 1200));
  });

  it('steps up once per window spent at the budget without a 429, never above the cap', () => {
    const ledger = new Ledger(W);
    const e = new Estimator(900, W);
    e.grant(0, true, ledger, 1000);
    e.grant(W, true, ledger, 1000);
    expect(e.estimate).toBe(910); // a step of 1% of the cap
    e.grant(2 * W, false, ledger, 1000);
    e.grant(3 * W, false, ledger, 1000); // demand below the budget: no step
    expect(e.estimate).toBe(910);
    const low = new Estimator(500, W);
    low.grant(0, true, ledger, 1000);
    low.grant(W, true, ledger, 1000);
    expect(low.estimate).toBe(600); // far below: the recovery step, 10%
  });

  it('keeps its rates over a window of another length', () => {
    const e = new Estimator(6000, W);
    e.setWindow(5000);
    expect(e.estimate).toBe(500);
    e.announce(400);
    expect(e.estimate).toBe(400);
  });
});

describe('Pause', () => {
  it('a retry-after pauses until its end, the later of two wins; one over the bound closes instead', () => {
    const p = new Pause();
    expect(p.hold(5000, 1000, 300_000)).toBe(true);
    expect(p.until).toBe(6000);
    p.extend(4000);
    expect(p.until).toBe(6000);
    expect(p.hold(3_600_000, 2000, 300_000)).toBe(false);
    expect(p.until).toBe(6000);
    expect(p.closed(2000)).toBe(3_602_000);
    expect(p.closed(3_602_000)).toBeUndefined();
  });
});
