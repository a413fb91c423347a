// One listing, the whole budget: a block-ranged listing is fetched as chunks at once (append.ts),
// and its table, cursor and checks are those of the same listing paged one page after another.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { formatReport } from '../../src/pipeline/report.js';
import { rebuildTable } from '../../src/pipeline/rebuild.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { StateStore } from '../../src/state/store.js';
import { listingsOf, tilingProblem, type ChunkedWindow } from '../../src/state/cursor.js';
import { ercTransfers } from '../../src/streams/erc_transfers.js';
import { lakeContents, quiet, recordingProxy } from '../helpers.js';
import { cliHere } from '../lake-fixture.js';
import { WORLD_NOW } from '../../src/simulator/evm.js';

const CONTRACT = '0xb10644cea485f69a5f8859e127911157a0d6d30d';
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-chunks-'));
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function sim(): Promise<Simulator> {
  const s = await startSimulator({ port: 0, seed: 7 });
  closers.push(() => s.close());
  return s;
}

/** One contract's transfers, in pages of 10 so that the listing runs to many pages. */
function pipeline(url: string, chunks?: number): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = url;
  p.streams = [{ table: 'erc_transfers', chainId: '43114', contracts: [CONTRACT], pageSize: 10, ...(chunks ? { chunks } : {}) }];
  return p;
}

/**
 * The lake of one listing paged one page after another, and its tables (lakeContents): what chunks
 * must give back. Made once for the tests that compare with it (none changes it), on a simulator
 * of its own: the world of a seed is the same on each.
 */
function oneListing(): Promise<{ lake: string; pages: number; tables: Record<string, string[]> }> {
  listed ??= (async () => {
    const s = await startSimulator({ port: 0, seed: 7 });
    try {
      const lake = tmp();
      const r = await runPipeline(pipeline(s.url, 1), { lake, logger: quiet, flushRows: 30 });
      expect(r.status).toBe('ok');
      expect(r.streams[0]!.chunks).toBe(1);
      return { lake, pages: r.streams[0]!.pages, tables: await lakeContents(lake) };
    } finally {
      await s.close();
    }
  })();
  return listed;
}
let listed: ReturnType<typeof oneListing> | undefined;

const stateOf = (lake: string, table = 'erc_transfers') => new StateStore(lake).all().find((s) => s.table === table)!;

describe('chunks of a block-ranged listing', () => {
  it('fetches ranges at once below the pinned head; the table and the cursor are those of one listing', async () => {
    const s = await sim();
    const one = await oneListing();
    // Answers come 20 ms late, as from a service far away: one listing would have one request under way.
    const proxy = await recordingProxy(s.url, { delayMs: 20 });
    closers.push(() => proxy.close());
    const lake = tmp();
    const r = await runPipeline(pipeline(proxy.url), { lake, logger: quiet, flushRows: 30 });
    expect(r.status).toBe('ok');
    const t = r.streams[0]!;
    expect(t.chunks).toBeGreaterThan(2);
    expect(t.splits).toBe(t.chunks - 1);
    expect(formatReport(r)).toContain(`erc_transfers: ${t.chunks} block ranges, ${t.splits} split off a range under way`);
    expect(proxy.inFlight.most).toBeGreaterThan(2);
    // Each chunk's last page may hold rows of the range below it (dropped), and a range may be empty.
    expect(t.pages).toBeLessThanOrEqual(one.pages + 2 * t.chunks);
    expect(await lakeContents(lake)).toEqual(one.tables);
    expect(stateOf(lake).cursor).toEqual(stateOf(one.lake).cursor);
    expect(stateOf(lake).rows).toBe(stateOf(one.lake).rows);

    // Every transfers request stays below the head asked once at the start, within disjoint ranges.
    const head = s.world.headBlock('43114');
    const heads = proxy.requests.filter((q) => /\/blocks\?/.test(q.url));
    expect(heads).toHaveLength(1);
    const listings = new Map<string, { start: number; end: number }>();
    for (const q of proxy.requests.filter((x) => x.url.includes('/transfers'))) {
      const u = new URL(q.url, 'http://x');
      const end = Number(u.searchParams.get('endBlock'));
      expect(end).toBeLessThanOrEqual(head + 1);
      listings.set(`${u.searchParams.get('startBlock') ?? 0}-${end}`, { start: Number(u.searchParams.get('startBlock') ?? 0), end });
    }
    expect(listings.size).toBe(t.chunks);
    expect((await cliHere(['check', '--lake', lake])).code).toBe(0);
  });

  it('stopped again and again at any moment, each rerun resumes every chunk: the table equals one listing', async () => {
    const s = await sim();
    const one = await oneListing();
    let stopAt = () => {};
    const proxy = await recordingProxy(s.url, { delayMs: 5, onRequest: () => stopAt() });
    closers.push(() => proxy.close());
    const lake = tmp();
    const p = pipeline(proxy.url);
    // Seeded stops: at the 1st to 12th request of each attempt (a stop commits the pages fetched).
    let seed = 11;
    const next = () => (seed = (seed * 48271) % 2147483647);
    let stops = 0;
    let chunkedStates = 0;
    for (let attempt = 0; attempt < 60; attempt++) {
      const ac = new AbortController();
      const at = proxy.requests.length + 1 + (next() % 12);
      stopAt = () => proxy.requests.length >= at && ac.abort(new Error('stopped by the test'));
      const r = await runPipeline(p, { lake, logger: quiet, flushRows: 20, signal: ac.signal });
      if (r.status === 'ok') break;
      stops++;
      const w = stateOf(lake)?.cursor.window;
      if (w && 'chunks' in w) {
        chunkedStates++;
        expect(tilingProblem(w as ChunkedWindow, ercTransfers.blockCursor!)).toBeUndefined();
      }
    }
    expect(stops).toBeGreaterThan(4);
    expect(chunkedStates).toBeGreaterThan(0);
    if (stateOf(lake).cursor.window) expect((await runPipeline(p, { lake, logger: quiet, flushRows: 20 })).status).toBe('ok');
    expect(stateOf(lake).cursor.window).toBeUndefined();
    expect(await lakeContents(lake)).toEqual(one.tables);
    expect(stateOf(lake).cursor).toEqual(stateOf(one.lake).cursor);
    expect((await cliHere(['check', '--lake', lake])).code).toBe(0);
    // Rebuilt from its raw pages alone, each chunk cut at its floor as the runs cut it: the same
    // table, without a merge by key behind it.
    const rebuilt = await rebuildTable(lake, 'erc_transfers', { logger: quiet, flushRows: 20 });
    expect(rebuilt.rows).toBe(stateOf(one.lake).rows);
    expect(await lakeContents(lake)).toEqual(one.tables);
  });

  it('a refused page token restarts that chunk alone; the table has no duplicate', async () => {
    const s = await sim();
    const one = await oneListing();
    let tokened = 0;
    // The sixth request that carries a page token is refused, as an expired token is.
    const proxy = await recordingProxy(s.url, { delayMs: 5, refuse: (q) => q.url.includes('pageToken=') && ++tokened === 6 });
    closers.push(() => proxy.close());
    const lake = tmp();
    const r = await runPipeline(pipeline(proxy.url), { lake, logger: quiet, flushRows: 20 });
    expect(r.status).toBe('ok');
    expect(r.streams[0]!.restarts).toBe(1);
    expect(r.streams[0]!.chunks).toBeGreaterThan(1);
    expect(await lakeContents(lake)).toEqual(one.tables);
    expect(stateOf(lake).rows).toBe(stateOf(one.lake).rows);
  });

  it('chunks: 1 pages one listing, as before chunks', async () => {
    const s = await sim();
    const proxy = await recordingProxy(s.url, { delayMs: 5 });
    closers.push(() => proxy.close());
    const r = await runPipeline(pipeline(proxy.url, 1), { lake: tmp(), logger: quiet, flushRows: 30 });
    expect(r.status).toBe('ok');
    expect(r.streams[0]!.splits).toBe(0);
    expect(proxy.inFlight.most).toBe(1);
    // One listing, ending at the head asked once: a row above it is no row of the window.
    expect(proxy.requests.filter((q) => /\/blocks\?/.test(q.url))).toHaveLength(1);
    const listings = proxy.requests.filter((q) => q.url.includes('/transfers'));
    expect(new Set(listings.map((q) => new URL(q.url, 'http://x').searchParams.get('endBlock'))).size).toBe(1);
    expect(listings.every((q) => q.url.includes('endBlock='))).toBe(true);
  });

  it('an open window in chunks: status says how many ranges are done', async () => {
    const s = await sim();
    const ac = new AbortController();
    const lake = tmp();
    // Looked at as each request arrives: a range's commit is followed by the next range's requests.
    const proxy = await recordingProxy(s.url, {
      delayMs: 10,
      onRequest: () => {
        const w = new StateStore(lake).all()[0]?.cursor.window;
        if (w && listingsOf(w).some((l) => l.done) && listingsOf(w).some((l) => !l.done)) ac.abort(new Error('stopped by the test'));
      },
    });
    closers.push(() => proxy.close());
    const run = runPipeline(pipeline(proxy.url), { lake, logger: quiet, flushRows: 20, signal: ac.signal });
    expect((await run).status).toBe('failed');
    const w = stateOf(lake).cursor.window as ChunkedWindow;
    const done = w.chunks.filter((l) => l.done).length;
    const out = await cliHere(['status', '--lake', lake, '--format', 'json']);
    expect(out.code).toBe(0);
    const text = await cliHere(['status', '--lake', lake]);
    expect(text.stdout).toContain(`${done} of ${w.chunks.length} ranges done`);
    expect((await cliHere(['check', '--lake', lake])).code).toBe(0);

    // The check's proof: a chunk missing from the state is a hole; a row outside its chunk, a double.
    const store = new StateStore(lake);
    const state = stateOf(lake);
    const file = join(lake, '_state', 'erc_transfers', readdirSync(join(lake, '_state', 'erc_transfers')).find((f) => f.endsWith('.json'))!);
    const original = readFileSync(file, 'utf8');
    const edit = (f: (w: ChunkedWindow) => void) => {
      const s = JSON.parse(original) as typeof state;
      f(s.cursor.window as ChunkedWindow);
      writeFileSync(file, JSON.stringify(s));
    };
    edit((win) => win.chunks.splice(win.chunks.findIndex((l) => !l.done), 1));
    const hole = await cliHere(['check', '--lake', lake, '--format', 'json']);
    expect(hole.code).toBe(1);
    expect(hole.stdout).toMatch(/no chunk covers blocks \d+ to \d+/);
    // A chunk with rows committed answers for fewer blocks than it holds rows of.
    edit((win) => {
      const l = win.chunks.find((x) => x.files.some((f) => f.startsWith('erc_transfers/')) && x.top)!;
      l.floor = l.top!.block;
    });
    const outside = await cliHere(['check', '--lake', lake, '--format', 'json']);
    expect(outside.code).toBe(1);
    expect(outside.stdout).toMatch(/rows? of the chunk of blocks \d+ to \d+ lie outside it/);
    writeFileSync(file, original);
    expect(store.all()).toHaveLength(1);
  });

  it('an hourly series fetched as ranges of a page each, at once: the same points as one listing', async () => {
    const s = await sim();
    const series = (url: string, chunks?: number): Pipeline => {
      const p = loadPipeline('pipelines/demo.yaml');
      for (const x of Object.values(p.sources)) x.url = url;
      // 200 days of hours: three pages of 2,160 points.
      p.streams = [{ table: 'chain_metrics', chainIds: ['43114'], metrics: ['txCount'], timeInterval: 'hour', startTimestamp: WORLD_NOW - 200 * 86400, ...(chunks ? { chunks } : {}) }];
      return p;
    };
    const one = tmp();
    expect((await runPipeline(series(s.url, 1), { lake: one, logger: quiet })).status).toBe('ok');
    const proxy = await recordingProxy(s.url, { delayMs: 20 });
    closers.push(() => proxy.close());
    const lake = tmp();
    const r = await runPipeline(series(proxy.url), { lake, logger: quiet });
    expect(r.status).toBe('ok');
    const asked = proxy.requests.filter((q) => q.url.includes('/metrics/'));
    expect(r.streams[0]!.chunks).toBeGreaterThanOrEqual(3);
    expect(asked.length).toBe(r.streams[0]!.chunks);
    expect(proxy.inFlight.most).toBeGreaterThanOrEqual(3);
    expect(await lakeContents(lake)).toEqual(await lakeContents(one));
    expect(stateOf(lake, 'chain_metrics').cursor.newest).toBe(stateOf(one, 'chain_metrics').cursor.newest);
    expect((await cliHere(['check', '--lake', lake])).code).toBe(0);
  });
});
