// The window's ledger of claims (src/sources/ledger.ts): pure, the time passed in.
import { describe, expect, it } from 'vitest';
import { Ledger } from '../../src/sources/ledger.js';

const W = 60_000;

describe('Ledger', () => {
  it('a claim holds from its grant until a window after its answer', () => {
    const l = new Ledger(W);
    const c = l.open(40, 0);
    expect(l.used(0)).toBe(40);
    l.close(c, 1000);
    expect(l.used(1000 + W - 1)).toBe(40);
    expect(l.used(1000 + W)).toBe(0);
  });

  it('a request waits for enough claims to drop out; Infinity while the budget is all in flight', () => {
    const l = new Ledger(W);
    const a = l.open(60, 0);
    expect(l.earliest(40, 10, 100)).toBe(10);
    expect(l.earliest(50, 10, 100)).toBe(Infinity);
    l.close(a, 2000);
    expect(l.earliest(50, 10, 100)).toBe(2000 + W);
    // Heavier than the whole budget: it goes alone, once nothing else is claimed.
    expect(l.earliest(150, 10, 100)).toBe(2000 + W);
  });

  it('closing a claim twice counts it once', () => {
    const l = new Ledger(W);
    const c = l.open(10, 0);
    l.close(c, 5);
    l.close(c, 6);
    expect(l.used(10)).toBe(10);
  });

  it('claims what the service counted beyond its own requests, and frees the claims once its own count shows the window turned', () => {
    const l = new Ledger(5000);
    const big = l.open(300, 0);
    l.serviceCount(big, 200, 400, 100, 4000);
    l.close(big, 4000);
    expect(l.used(4000)).toBe(300);
    const small = l.open(20, 5200);
    l.serviceCount(small, 200, 400, 380, 5250); // a new window of the service: only this one counted
    l.close(small, 5250);
    expect(l.earliest(300, 5250, 400)).toBe(5250);
    const other = l.open(20, 6000);
    l.serviceCount(other, 200, 400, 0, 6100); // 60 more than ours: someone else spends on the key
    expect(l.used(6100)).toBe(400);
  });

  it('reads what got through by answer and by arrival, counting only what the service counted', () => {
    const l = new Ledger(W);
    const a = l.open(10, 0);
    const b = l.open(20, 0);
    b.counted = true;
    a.counted = false;
    l.close(a, 1000);
    l.close(b, 3000);
    expect(l.gotSince(999)).toBe(20);
    expect(l.gotSince(3000)).toBe(0);
    expect(l.arrivedSince(1500)).toBe(20); // arrived midway, at 1500
    expect(l.arrivedSince(1501)).toBe(0);
  });
});
