import { describe, expect, it } from 'vitest';
import { LoopGuard, MAX_PAGE_TOKEN, oversized, paginate } from '../../src/extract/paginate.js';
import { newRequestStats } from '../../src/decl/request.js';

function fake(pages: Record<string, unknown>) {
  const calls: Array<Record<string, string>> = [];
  return {
    calls,
    client: {
      get: async (_path: string, query: Record<string, string>) => {
        calls.push(query);
        return pages[query.pageToken ?? 'first'];
      },
    },
  };
}

const opts = { path: '/p', query: { pageSize: '2' }, items: 'items', endpoint: '/p', stats: newRequestStats() };

async function collect(gen: AsyncGenerator<{ items: unknown[] }>) {
  const out: unknown[] = [];
  for await (const p of gen) out.push(...p.items);
  return out;
}

describe('paginate', () => {
  it('follows nextPageToken until a page has none, passing the token as pageToken', async () => {
    const f = fake({ first: { items: [1, 2], nextPageToken: 'a' }, a: { items: [3, 4], nextPageToken: 'b' }, b: { items: [5] } });
    expect(await collect(paginate(f.client, opts))).toEqual([1, 2, 3, 4, 5]);
    expect(f.calls).toEqual([{ pageSize: '2' }, { pageSize: '2', pageToken: 'a' }, { pageSize: '2', pageToken: 'b' }]);
  });
  it('follows the legacy nextPageStartKey as it follows nextPageToken, sending it back as pageToken', async () => {
    const f = fake({ first: { results: [1], nextPageStartKey: 'k1' }, k1: { results: [2], nextPageStartKey: 'k2' }, k2: { results: [3], nextPageStartKey: '' } });
    expect(await collect(paginate(f.client, { ...opts, items: 'results' }))).toEqual([1, 2, 3]);
    expect(f.calls).toEqual([{ pageSize: '2' }, { pageSize: '2', pageToken: 'k1' }, { pageSize: '2', pageToken: 'k2' }]);
  });
  it('treats an empty-string token as the end', async () => {
    const f = fake({ first: { items: [1], nextPageToken: '' } });
    expect(await collect(paginate(f.client, opts))).toEqual([1]);
  });
  it('follows empty pages that carry a token, up to a bound', async () => {
    const f = fake({ first: { items: [], nextPageToken: 'a' }, a: { items: [], nextPageToken: 'b' }, b: { items: [7] } });
    expect(await collect(paginate(f.client, opts))).toEqual([7]);
    const endless: Record<string, unknown> = { first: { items: [], nextPageToken: 't0' } };
    for (let i = 0; i < 50; i++) endless[`t${i}`] = { items: [], nextPageToken: `t${i + 1}` };
    await expect(collect(paginate(fake(endless).client, { ...opts, maxEmptyPages: 5 }))).rejects.toThrow(/5 empty pages in a row/);
  });
  it('stops on a token seen twice (loop guard)', async () => {
    const f = fake({ first: { items: [1], nextPageToken: 'a' }, a: { items: [2], nextPageToken: 'b' }, b: { items: [3], nextPageToken: 'a' } });
    await expect(collect(paginate(f.client, opts))).rejects.toThrow(/twice in one listing/);
  });
  it('catches a loop longer than the tokens it keeps, within a few turns', async () => {
    // 3,000 pages, then back to page 1,000: a loop of 2,000 pages, longer than the 1,024 tokens
    // kept, so only Brent's anchor can catch it, within two turns of the loop after it starts.
    const pages: Record<string, unknown> = { first: { items: [0], nextPageToken: 't1' } };
    for (let i = 1; i < 3000; i++) pages[`t${i}`] = { items: [i], nextPageToken: i === 2999 ? 't1000' : `t${i + 1}` };
    const f = fake(pages);
    await expect(collect(paginate(f.client, opts))).rejects.toThrow(/page token "t\d+" twice in one listing/);
    expect(f.calls.length).toBeGreaterThan(3000);
    expect(f.calls.length).toBeLessThan(1000 + 3 * 2000);
  });
  it('holds a bounded number of tokens however long the listing', () => {
    const g = new LoopGuard(16);
    for (let i = 0; i < 100_000; i++) expect(g.repeated(`t${i}`)).toBe(false);
    expect(g.held).toBeLessThanOrEqual(17);
    // A short loop is caught at its first repeat; a loop longer than the kept tokens, by the anchor.
    expect(g.repeated('t99990')).toBe(true);
    const long = new LoopGuard(16);
    const seq = (i: number) => (i < 50 ? i : 50 + ((i - 50) % 100)); // 50 pages, then a loop of 100
    let n = 0;
    while (!long.repeated(`t${seq(n)}`)) n++;
    expect(n).toBeGreaterThanOrEqual(150);
    expect(n).toBeLessThan(50 + 3 * 100);
  });
  it('resumes from a stored token', async () => {
    const f = fake({ first: { items: [1], nextPageToken: 'a' }, a: { items: [2] } });
    expect(await collect(paginate(f.client, { ...opts, startToken: 'a' }))).toEqual([2]);
  });
  it('fails clearly when the item list is missing', async () => {
    const f = fake({ first: { results: [] } });
    await expect(collect(paginate(f.client, opts))).rejects.toThrow(/no "items" list \(keys: results\)/);
  });
});

describe('a page larger than the page size asked', () => {
  it('fails the listing naming the endpoint, the count and the size asked, before the page is handed on', async () => {
    const f = fake({ first: { items: [1, 2], nextPageToken: 'a' }, a: { items: [3, 4, 5], nextPageToken: 'b' }, b: { items: [6] } });
    const got: unknown[] = [];
    const run = (async () => {
      for await (const p of paginate(f.client, opts)) got.push(...p.items);
    })();
    await expect(run).rejects.toThrow('/p: the service sent a page of 3 items where 2 were asked (pageSize)');
    expect(got).toEqual([1, 2]);
  });
  it('is not checked where no page size is asked (or 0, the service\'s own)', async () => {
    const f = fake({ first: { items: [1, 2, 3] } });
    expect(await collect(paginate(f.client, { ...opts, query: {} }))).toEqual([1, 2, 3]);
    expect(await collect(paginate(fake({ first: { items: [1, 2, 3] } }).client, { ...opts, query: { pageSize: '0' } }))).toEqual([1, 2, 3]);
  });
  it('oversized: the size asked when exceeded, else undefined', () => {
    expect(oversized(3, '2')).toBe(2);
    expect(oversized(2, '2')).toBeUndefined();
    expect(oversized(500, undefined)).toBeUndefined();
    expect(oversized(500, '0')).toBeUndefined();
    expect(oversized(500, 'x')).toBeUndefined();
  });
});

describe('a page token longer than chainlake follows', () => {
  it('fails the listing before the page that carries it is handed on, saying its length; one at the bound is followed', async () => {
    const long = 'x'.repeat(MAX_PAGE_TOKEN + 1);
    const f = fake({ first: { items: [1, 2], nextPageToken: 'a' }, a: { items: [3, 4], nextPageToken: long } });
    const got: unknown[] = [];
    const run = (async () => {
      for await (const p of paginate(f.client, opts)) got.push(...p.items);
    })();
    await expect(run).rejects.toThrow(`/p: the service sent a page token of 8,193 characters, longer than the 8,192 chainlake follows`);
    expect(got).toEqual([1, 2]);
    expect(f.calls).toHaveLength(2);
    const atBound = 'y'.repeat(MAX_PAGE_TOKEN);
    expect(await collect(paginate(fake({ first: { items: [1], nextPageToken: atBound }, [atBound]: { items: [2] } }).client, opts))).toEqual([1, 2]);
  });
});
