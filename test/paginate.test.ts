import { describe, expect, it } from 'vitest';
import { paginate } from '../src/extract/paginate.js';
import { newRequestStats } from '../src/sources/client.js';

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
  it('resumes from a stored token', async () => {
    const f = fake({ first: { items: [1], nextPageToken: 'a' }, a: { items: [2] } });
    expect(await collect(paginate(f.client, { ...opts, startToken: 'a' }))).toEqual([2]);
  });
  it('fails clearly when the item list is missing', async () => {
    const f = fake({ first: { results: [] } });
    await expect(collect(paginate(f.client, opts))).rejects.toThrow(/no "items" list \(keys: results\)/);
  });
});
