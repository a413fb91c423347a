import { describe, expect, it } from 'vitest';
import { pageDigest, RecentRows } from '../../src/transform/repeats.js';

const keys = (from: number, n: number) => Array.from({ length: n }, (_, i) => `k${from + i}`);

describe('rows a listing sends again (RecentRows)', () => {
  it('keeps new rows, drops a row the page before sent (a one-row overlap) and one sent twice within a page', () => {
    const r = new RecentRows();
    expect(r.sift(['a', 'b', 'c'])).toEqual({ keep: [true, true, true], fresh: 3, twice: 0, nothingNew: false });
    expect(r.sift(['c', 'd', 'e'])).toEqual({ keep: [false, true, true], fresh: 2, twice: 1, nothingNew: false });
    expect(r.sift(['f', 'f', 'g'])).toEqual({ keep: [true, false, true], fresh: 2, twice: 1, nothingNew: false });
  });

  it('a page with rows and none new is nothing new, and is not remembered', () => {
    const r = new RecentRows(2);
    r.sift(['a', 'b']);
    r.sift(['c', 'd']);
    const held = r.held;
    expect(r.sift(['a', 'b'])).toMatchObject({ fresh: 0, twice: 2, nothingNew: true });
    expect(r.sift(['c', 'c'])).toMatchObject({ fresh: 0, twice: 2, nothingNew: true });
    // Not remembered: 'a' and 'b' are still one page before the last two, not pushed out by repeats.
    expect(r.held).toBe(held);
    expect(r.sift(['a'])).toMatchObject({ nothingNew: true });
  });

  it('an empty page, or one of rejects only (no keys), is not a loop', () => {
    const r = new RecentRows();
    expect(r.sift([])).toEqual({ keep: [], fresh: 0, twice: 0, nothingNew: false });
  });

  it('remembers the last few pages only: a repeat from further back is not caught', () => {
    const r = new RecentRows(3);
    for (let p = 0; p < 5; p++) r.sift(keys(p * 10, 10));
    // Pages 2, 3 and 4 are held; page 1 is gone.
    expect(r.sift(['k20'])).toMatchObject({ nothingNew: true });
    expect(r.sift(['k19'])).toMatchObject({ fresh: 1, nothingNew: false });
  });

  it('holds a bounded number of keys however long the listing and however large its pages', () => {
    const r = new RecentRows(4, 1000);
    let most = 0;
    for (let p = 0; p < 2000; p++) {
      r.sift(keys(p * 100, 100));
      most = Math.max(most, r.held);
    }
    expect(most).toBe(400);
    const capped = new RecentRows(4, 1000);
    for (let p = 0; p < 50; p++) {
      capped.sift(keys(p * 300, 300));
      expect(capped.held).toBeLessThanOrEqual(1000);
    }
    // A page larger than the cap is held alone: the next page's overlap is still caught.
    const big = new RecentRows(4, 1000);
    big.sift(keys(0, 5000));
    expect(big.held).toBe(5000);
    big.sift(keys(4999, 5000));
    expect(big.held).toBe(4999);
  });

  it('tells a page sent again identically by its digest, among the pages held', () => {
    const r = new RecentRows(2);
    const page = [{ txHash: '0x1', value: '1' }, { txHash: '0x1', value: '1' }];
    const d = pageDigest(page);
    expect(r.repeats(d)).toBe(false);
    r.sift(['a', 'b'], d);
    expect(r.repeats(pageDigest(structuredClone(page)))).toBe(true);
    expect(r.repeats(pageDigest([page[0]]))).toBe(false);
    r.sift(['c'], 'x');
    r.sift(['d'], 'y');
    expect(r.repeats(d)).toBe(false);
  });

  it('forgets everything when a listing starts again', () => {
    const r = new RecentRows();
    r.sift(['a'], 'd');
    r.clear();
    expect(r.held).toBe(0);
    expect(r.repeats('d')).toBe(false);
    expect(r.sift(['a'])).toMatchObject({ fresh: 1 });
  });
});
