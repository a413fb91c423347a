// The pacer (src/sources/pacer.ts) and the day's quota (src/sources/quota.ts): pure, the time passed in.
import { describe, expect, it } from 'vitest';
import { BURST, Pacer } from '../../src/sources/pacer.js';
import { DayQuota } from '../../src/sources/quota.js';
import { DAY_MS } from '../../src/sources/clock.js';

const W = 60_000;

describe('Pacer', () => {
  it('lets a burst of a twelfth of the window go at once, then one request per its share of the window', () => {
    const p = new Pacer();
    let t = 0;
    let n = 0;
    while (p.earliest(t, W) === t) p.grant(20, t, W, 1200), n++;
    expect(n).toBe(6); // 100 CU at once (a twelfth of 1,200), the sixth starting inside the allowance
    expect(p.earliest(t, W)).toBe(1000);
    expect(p.firstGrantAt).toBe(0);
  });

  it('paces nothing while no budget is known, and counts what went out then once one is', () => {
    const p = new Pacer();
    for (let i = 0; i < 9; i++) p.grant(100, 0, W, Infinity);
    expect(p.earliest(0, W)).toBe(0);
    p.catchUp(900, W, 6000);
    expect(p.earliest(0, W)).toBe(9000 - W * BURST);
  });

  it('reopens paced after a decrease, not with a burst', () => {
    const p = new Pacer();
    p.reopen(10_000, W);
    expect(p.earliest(10_000, W)).toBe(10_000);
    expect(p.earliest(0, W)).toBe(10_000);
  });
});

describe('DayQuota', () => {
  const day = Date.UTC(2025, 0, 2);

  it('holds a request that would pass the day until the next UTC day; a new day starts empty', () => {
    const q = new DayQuota(100);
    for (let i = 0; i < 5; i++) q.grant(20, day + i);
    expect(q.earliest(20, day + 3_600_000)).toBe(day + DAY_MS);
    expect(q.earliest(20, day + DAY_MS)).toBe(day + DAY_MS);
  });

  it('lets a request heavier than the whole day go first rather than never; the lower of the pipeline and the service wins', () => {
    const q = new DayQuota();
    expect(q.limit).toBe(Infinity);
    q.announce(50);
    expect(q.limit).toBe(50);
    expect(q.earliest(80, day)).toBe(day);
    q.grant(80, day);
    expect(q.earliest(1, day + 1)).toBe(day + DAY_MS);
    expect(new DayQuota(30).limit).toBe(30);
  });
});
