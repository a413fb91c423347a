// The window machine (src/pipeline/window.ts) on its own: random listings paged in chunks, split,
// killed between any two steps, stopped, their page tokens refused, each run resumed from what the
// last one committed; the table each leaves must hold every row of the range once and end with the
// cursor of one uninterrupted listing. No I/O, no clock: hundreds of cases in milliseconds.
import { describe, expect, it } from 'vitest';
import { headNote, ListingGate, nextWindow, openWindow, WindowMachine, type Track, type WindowConfig } from '../../src/pipeline/window.js';
import { KEEP, SKIPPED, OUTSIDE, BELOW, UNASKED } from '../../src/transform/rows.js';
import type { BlockParams } from '../../src/state/cursor.js';
import { seeded as random } from '../random.js';

const BP: BlockParams = { start: 'startBlock', end: 'endBlock' };

const int = (rand: () => number, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

interface Row {
  block: number;
  key: string;
}

/** A chain's rows by block, and a service that lists a block range newest first in pages. */
class World {
  blocks: string[][] = [];
  constructor(
    rand: () => number,
    blocks: number,
    private readonly pageSize: number,
  ) {
    for (let b = 0; b < blocks; b++) this.grow(rand, b);
  }

  get head(): number {
    return this.blocks.length - 1;
  }

  /** Adds rows to block `b` (the head may grow between runs). */
  grow(rand: () => number, b: number): void {
    while (this.blocks.length <= b) this.blocks.push([]);
    const n = int(rand, 0, 3);
    for (let i = 0; i < n; i++) this.blocks[b]!.push(`${b}:${this.blocks[b]!.length}`);
  }

  rows(from: number, to: number): Row[] {
    const out: Row[] = [];
    for (let b = Math.min(to, this.blocks.length) - 1; b >= from; b--) for (const key of this.blocks[b]!) out.push({ block: b, key });
    return out;
  }

  /** A broken index: every listing's first page also carries this row (above the head, say), whatever its range. */
  stray?: Row;

  /** One page of the listing of `query`, from `token` (an offset): newest first. */
  page(query: Record<string, string>, token?: string): { rows: Row[]; next?: string } {
    const all = this.rows(Number(query[BP.start] ?? 0), query[BP.end] === undefined ? Infinity : Number(query[BP.end]));
    if (this.stray) all.unshift(this.stray);
    const at = token === undefined ? 0 : Number(token);
    const rows = all.slice(at, at + this.pageSize);
    return { rows, next: at + this.pageSize < all.length ? String(at + this.pageSize) : undefined };
  }
}

/** What the cases went through, so that the test knows they reached the paths it means to try. */
const seen = { splits: 0 };

/** The committed lake of one partition: its track and the rows of each file it names. */
interface Lake {
  track: Track;
  files: Map<string, Row[]>;
}

interface Chaos {
  /** Chance, at each step, that the process is killed (what is not committed is lost). */
  kill: number;
  /** Chance that a page token is refused (it expired): the chunk's listing starts again. */
  expire: number;
  /** Chance that the run is stopped (SIGTERM): each chunk commits what it fetched, then the run ends. */
  stop: number;
}

/**
 * One run over the lake, as append.ts drives the machine, with the steps of chunks interleaved at
 * random: a page, a commit of a staged batch (staging takes time: other chunks page meanwhile),
 * a refused token, a kill, a stop. Returns whether the window was paged to its end.
 */
function runOnce(lake: Lake, world: World, cfg: WindowConfig, rand: () => number, chaos: Chaos, flushRows: number): boolean {
  const next = nextWindow(lake.track.cursor, cfg);
  const window = next.needsHead ? openWindow(lake.track.cursor, cfg, world.head) : next.window;
  if (!window) return true;
  const m = WindowMachine.of(lake.track, window, cfg);
  const live = new Map<number, { batch: Row[]; staging?: { rows: Row[]; last: boolean } }>();
  let files = 0;
  const launch = () => {
    for (let n = m.next(int(rand, 0, 2)); n; n = m.next(int(rand, 0, 2))) {
      live.set(n.id, { batch: [] });
      if (n.split) seen.splits++;
    }
  };
  const commit = (id: number, rows: Row[]) => {
    const name = `f${lake.files.size}.${files++}.${rand().toString(36).slice(2)}`;
    const intent = m.commit(id, lake.track, { files: [name], rows: rows.length, rejected: 0 }, {});
    lake.files.set(name, rows);
    for (const f of intent.drop) lake.files.delete(f);
    lake.track = intent.track;
  };
  launch();
  for (let step = 0; live.size > 0; step++) {
    if (step > 100_000) throw new Error('the window does not end');
    if (rand() < chaos.kill) return false;
    const ids = [...live.keys()];
    const id = ids[int(rand, 0, ids.length - 1)]!;
    const c = live.get(id)!;
    if (c.staging) {
      const { rows, last } = c.staging;
      c.staging = undefined;
      commit(id, rows);
      if (last) live.delete(id);
      launch();
      continue;
    }
    if (rand() < chaos.stop) {
      // A stop: every chunk's batch so far commits, up to the next page's token.
      for (const [i, x] of live) {
        if (x.staging) commit(i, x.staging.rows);
        else if (m.stopping(i)) commit(i, x.batch);
      }
      return false;
    }
    const { query, token } = m.listing(id);
    if (token !== undefined && rand() < chaos.expire) {
      m.restart(id);
      c.batch = [];
      continue;
    }
    const page = world.page(query, token);
    const gate = m.gate(id);
    for (const r of page.rows) if (gate.admit(r.block, r.key, NaN) === KEEP) c.batch.push(r);
    const after = m.paged(id, page.next, page.rows.length, c.batch.length, flushRows);
    launch();
    if (after.commit) {
      c.staging = { rows: c.batch, last: after.last };
      c.batch = [];
    }
  }
  return true;
}

/** Runs until one pages its window to the end, from an empty lake or `lake`. */
function runToEnd(world: World, cfg: WindowConfig, rand: () => number, chaos: Chaos, flushRows: number, lake: Lake = { track: { cursor: {}, files: [], rows: 0, rejects: 0 }, files: new Map() }): Lake {
  for (let run = 0; ; run++) {
    if (run > 10_000) throw new Error('runs do not end');
    if (runOnce(lake, world, cfg, rand, chaos, flushRows)) return lake;
  }
}

const rowsOf = (lake: Lake) =>
  lake.track.files
    .flatMap((f) => lake.files.get(f)!)
    .map((r) => r.key)
    .sort();

const config = (o: Partial<WindowConfig>): WindowConfig => ({ bp: BP, chunks: 1, query: {}, pageSize: 2, rebuilding: false, ...o });

describe('the window machine', () => {
  it('a chunk cut at a floor (as rebuild replays a file of it): rows below it go, the checkpoint keeps it, a lower floor does not lower it', () => {
    const m = new WindowMachine({ start: 10, end: 100, endConfigured: false, chunks: [{ query: { endBlock: '100' }, files: [] }], splits: 0 }, { block: 10, keys: ['10:0'] }, BP, 1, 1);
    const { id } = m.next(0)!;
    m.cutAt(id, 40);
    m.cutAt(id, 30);
    const g = m.gate(id);
    expect([g.admit(60, '60:0'), g.admit(40, '40:0'), g.admit(39, '39:0')]).toEqual([KEEP, KEEP, BELOW]);
    expect(m.range(id)).toEqual({ from: 40, to: 100 });
    m.paged(id, undefined, 3, 2, 10);
    const track: Track = { cursor: {}, files: [], rows: 0, rejects: 0 };
    const done = m.commit(id, track, { files: [], rows: 2, rejected: 0 }, {});
    expect(done.complete).toBe(true);
    expect(done.track.cursor).toEqual({ nextBlock: 60, skip: { block: 60, keys: ['60:0'] } });
  });

  it('chunks, splits, kills, stops and refused tokens at random: every row once, the cursor of one listing', () => {
    const calm: Chaos = { kill: 0, expire: 0, stop: 0 };
    let kills = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const rand = random(seed);
      const pageSize = int(rand, 1, 4);
      const world = new World(rand, int(rand, 1, 80), pageSize);
      // Below the head: a start past it leaves the cursor empty with chunks (no window below the head), at the start without.
      const startBlock = rand() < 0.3 ? int(rand, 0, Math.min(10, world.head)) : undefined;
      const endBlock = rand() < 0.5 ? int(rand, 0, world.head + 1) : undefined;
      const flushRows = int(rand, 1, 6);
      const one = runToEnd(world, config({ pageSize, startBlock, endBlock }), rand, calm, flushRows);
      const chaos: Chaos = { kill: rand() * 0.05, expire: rand() * 0.05, stop: rand() * 0.02 };
      const cfg = config({ pageSize, startBlock, endBlock, chunks: int(rand, 1, 4) });
      const lake = runToEnd(world, cfg, rand, chaos, flushRows);
      const want = world.rows(startBlock ?? 0, endBlock ?? Infinity).map((r) => r.key).sort();
      expect(rowsOf(one), `seed ${seed}`).toEqual(want);
      expect(rowsOf(lake), `seed ${seed}`).toEqual(want);
      expect(lake.track.rows, `seed ${seed}`).toBe(want.length);
      expect(lake.track.cursor, `seed ${seed}`).toEqual(one.track.cursor);
      kills += chaos.kill > 0 ? 1 : 0;
    }
    expect(seen.splits).toBeGreaterThan(100);
    expect(kills).toBeGreaterThan(0);
  });

  it('a chain that grows between runs: each run resumes at the newest block, skipping its rows committed already', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rand = random(1000 + seed);
      const pageSize = int(rand, 1, 4);
      const world = new World(rand, int(rand, 1, 30), pageSize);
      const cfg = config({ pageSize, chunks: int(rand, 1, 3) });
      const chaos: Chaos = { kill: rand() * 0.05, expire: rand() * 0.05, stop: rand() * 0.02 };
      let lake: Lake | undefined;
      for (let run = 0; run < 4; run++) {
        lake = runToEnd(world, cfg, rand, chaos, int(rand, 1, 6), lake);
        // The newest block gains rows and new blocks come.
        world.grow(rand, world.head);
        for (let n = int(rand, 0, 5); n > 0; n--) world.grow(rand, world.head + 1);
      }
      lake = runToEnd(world, cfg, rand, chaos, 3, lake);
      expect(rowsOf(lake), `seed ${seed}`).toEqual(world.rows(0, Infinity).map((r) => r.key).sort());
      // The newest block with rows is refetched next time, its committed rows skipped by key.
      const newest = world.blocks.map((b) => b.length > 0).lastIndexOf(true);
      if (newest >= 0) expect(lake.track.cursor, `seed ${seed}`).toEqual({ nextBlock: newest, skip: { block: newest, keys: expect.arrayContaining(world.blocks[newest]!) } });
    }
  });

  it('splits a dense chunk while the service has room, never a listing that is not newest first', () => {
    const world = new World(random(5), 200, 2);
    for (let b = 0; b < 200; b++) world.blocks[b] = [`${b}:0`, `${b}:1`];
    const m = WindowMachine.of({ cursor: {}, files: [], rows: 0, rejects: 0 }, openWindow({}, config({ chunks: 4 }), 199)!, config({ chunks: 4 }));
    const first = m.next(1)!;
    expect(first).toEqual({ id: 0, split: false });
    expect(m.next(1)).toBeUndefined(); // nothing known of its density yet
    const page = world.page(m.listing(0).query);
    for (const r of page.rows) m.gate(0).admit(r.block, r.key);
    m.paged(0, page.next, page.rows.length, 2, 100);
    expect(m.next(0)).toBeUndefined(); // the service has no room
    const split = m.next(1)!;
    expect(split.split).toBe(true);
    // The lower half goes, from block 0 to the middle of what is left below the rows fetched.
    expect(m.listing(split.id).query).toEqual({ endBlock: '100' });
    expect(m.range(0)).toEqual({ from: 100, to: 200 });
    // A row out of order: no more splits.
    m.gate(0).admit(150, 'x');
    m.gate(0).admit(151, 'y');
    m.paged(0, '4', 2, 4, 100);
    expect(m.next(1)).toBeUndefined();
  });

  it('a row above the head (a broken index) is never committed: the cursor stays below the head and later runs go on', () => {
    for (const [chunks, endBlock] of [[1, undefined], [8, undefined], [1, 1_000_000], [8, 1_000_000]] as const) {
      const rand = random(chunks * 7 + (endBlock ?? 0));
      const world = new World(rand, 300, 5);
      world.stray = { block: 9_999_999, key: 'stray' };
      const cfg = config({ chunks, findsHead: true, ...(endBlock === undefined ? {} : { endBlock }) });
      const lake = runToEnd(world, cfg, rand, { kill: 0.01, expire: 0.01, stop: 0.01 }, 7);
      expect(rowsOf(lake), `chunks ${chunks}`).toEqual(world.rows(0, Infinity).map((r) => r.key).sort());
      expect(lake.track.cursor.nextBlock).toBeLessThanOrEqual(world.head);
      // The chain grows: the next run lands the new blocks (the stray row still never).
      for (let b = world.head + 1; b < 340; b++) world.grow(rand, b);
      runToEnd(world, cfg, rand, { kill: 0, expire: 0, stop: 0 }, 7, lake);
      expect(rowsOf(lake)).toEqual(world.rows(0, Infinity).map((r) => r.key).sort());
    }
  });

  it('a window ends at the head, or at an end block below it; a cursor ahead of the head is said', () => {
    const cfg = config({ findsHead: true, startBlock: 100 });
    expect(nextWindow({}, cfg)).toEqual({ needsHead: true });
    expect(openWindow({}, cfg, 499)).toMatchObject({ start: 100, end: 500, endConfigured: false });
    expect(openWindow({}, { ...cfg, endBlock: 300 }, 499)).toMatchObject({ start: 100, end: 300, endConfigured: true });
    // An end block the chain has not reached: to the head, and the window is not taken as reaching it.
    expect(openWindow({}, { ...cfg, endBlock: 900 }, 499)).toMatchObject({ start: 100, end: 500, endConfigured: false });
    expect(headNote({}, { ...cfg, endBlock: 900 }, 499)).toBe("endBlock 900 is above the chain's head (block 499): fetched to the head; a later run goes on to endBlock");
    // A cursor past the head (rows above it committed by a run before this gate): nothing to fetch, and said.
    expect(openWindow({ nextBlock: 9_000 }, cfg, 499)).toBeUndefined();
    expect(headNote({ nextBlock: 9_000 }, cfg, 499)).toMatch(/^the cursor \(block 9000\) is ahead of the chain's head \(block 499\): nothing fetched; .*chainlake reset/);
    expect(headNote({ nextBlock: 499 }, cfg, 499)).toBeUndefined();
    expect(headNote({ nextBlock: 500 }, cfg, 499)).toBeUndefined();
  });

  it('a window gate calls rows outside the window (or in the future) UNASKED, and says why', () => {
    const g = new ListingGate({ from: 10, to: 20 }, { bounds: { start: 5, end: 30, maxTime: 1_000 } });
    expect(g.admit(30, 'a', 500)).toBe(UNASKED);
    expect(g.unasked).toBe("block 30 is at or above the window's end 30");
    expect(g.admit(4, 'b', 500)).toBe(UNASKED);
    expect(g.reachedFloor).toBe(true);
    expect(g.admit(15, 'c', 1_001)).toBe(UNASKED);
    expect(g.unasked).toMatch(/^block 15's time 1970-01-01T00:16:41Z is in the future/);
    // In the window, outside the listing's own range: another listing's.
    expect(g.admit(25, 'd', 500)).toBe(OUTSIDE);
    expect(g.admit(15, 'e', 1_000)).toBe(KEEP);
    expect(g.admit(16, 'f', NaN)).toBe(KEEP);
    expect(g.getTop()).toEqual({ block: 16, keys: ['f'] });
  });

  it('a gate keeps the rows of its range above its floor, skips those committed, and learns top, low and order', () => {
    const g = new ListingGate({ from: 10, to: 20 }, { floor: 12, skip: { block: 19, keys: ['a'] } });
    expect([g.admit(20, 'z'), g.admit(19, 'a'), g.admit(19, 'b'), g.admit(15, 'c')]).toEqual([OUTSIDE, SKIPPED, KEEP, KEEP]);
    expect(g.getTop()).toEqual({ block: 19, keys: ['b'] });
    expect([g.low, g.newestFirst, g.reachedFloor]).toEqual([15, true, false]);
    expect(g.admit(11, 'd')).toBe(BELOW);
    expect(g.reachedFloor).toBe(true);
    expect(g.admit(16, 'e')).toBe(KEEP);
    expect(g.newestFirst).toBe(false);
    expect(g.admit(9, 'f')).toBe(OUTSIDE);
  });
});
