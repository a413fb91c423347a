// `compact` merges a partition's small files; the table, the state's counts and what later runs do
// stay exactly as they were.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, watch } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/run.js';
import { compactLake, inColumnOrder, planGroups } from '../../src/pipeline/compact.js';
import { DuckDBInstance } from '@duckdb/node-api';
import { startSimulator } from '../../src/simulator/server.js';
import { DEMO } from '../../src/simulator/world.js';
import { StateStore } from '../../src/state/store.js';
import { listingsOf, type Cursor } from '../../src/state/cursor.js';
import { lakeContents, quiet } from '../helpers.js';
import { icebergOutOfStep } from '../iceberg-reader.js';
import { demoPipeline, lakeOf } from '../lake-fixture.js';
import { RunError } from '../../src/errors.js';
import { LakeLock } from '../../src/state/lock.js';

const BIN = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/**
 * A lake of many small files: the demo's erc_transfers, internal_transactions and delegators (a
 * merge table) in batches of 20 rows, run once for the file and copied for each test (each changes
 * its own). A copy's Iceberg metadata names the files where the first lake has them (the product
 * starts a table's history afresh at the copy's first commit); `bare` leaves it out, as a lake of a
 * chainlake before Iceberg: its first commit writes the metadata of its own files.
 */
async function smallFiles(): Promise<{ make(prefix: string, o?: { bare?: boolean }): Promise<string> }> {
  smallLake ??= (async () => {
    const sim = await startSimulator({ port: 0, seed: 8 });
    try {
      const lake = mkdtempSync(join(tmpdir(), 'cl-compact-small-'));
      expect((await runPipeline(demoPipeline(sim.url, SMALL_TABLES), { lake, logger: quiet, flushRows: 20 })).status).toBe('ok');
      return lake;
    } finally {
      await sim.close();
    }
  })();
  const made = await smallLake;
  return {
    async make(prefix, o = {}) {
      const lake = mkdtempSync(join(tmpdir(), prefix));
      cpSync(made, lake, { recursive: true, filter: (from) => !(o.bare && /^[^/\\]+[/\\]metadata$/.test(relative(made, from))) });
      return lake;
    },
  };
}
const SMALL_TABLES = ['erc_transfers', 'internal_transactions', 'delegators'];
let smallLake: Promise<string> | undefined;

describe('planGroups', () => {
  const f = (...rows: number[]) => rows.map((r, i) => ({ file: `f${i}`, rows: r }));
  it('groups consecutive small files up to the target; big files and lone files stay', () => {
    expect(planGroups(f(10, 10, 10), 100)).toEqual([['f0', 'f1', 'f2']]);
    expect(planGroups(f(40, 40, 40, 40), 100)).toEqual([['f0', 'f1'], ['f2', 'f3']]);
    // f2 holds half the target: left alone, and it splits the run of small files around it.
    expect(planGroups(f(10, 10, 50, 10, 60), 100)).toEqual([['f0', 'f1']]);
    expect(planGroups(f(10), 100)).toEqual([]);
    expect(planGroups(f(), 100)).toEqual([]);
  });
});

describe('inColumnOrder', () => {
  it('orders files by their least value, keeps fetch order among equals, and puts files without one last', () => {
    const f = (file: string, low?: string) => ({ file, low });
    expect(inColumnOrder([f('a', '00000000000000000030'), f('b', '00000000000000000010'), f('c'), f('d', '00000000000000000010'), f('e', '00000000000000000002')]).map((x) => x.file)).toEqual(['e', 'b', 'd', 'a', 'c']);
    expect(inColumnOrder([f('x', '2024-01-02T00:00:00.000000'), f('y', '2023-12-31T23:59:59.999999')]).map((x) => x.file)).toEqual(['y', 'x']);
  });
});

/**
 * The block numbers of a partition's data files, each file's rows in the order they are stored:
 * a batch of a newest-first listing holds a descending run of blocks.
 */
async function storedBlocks(lake: string, files: string[]): Promise<number[][]> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const out: number[][] = [];
    for (const f of files) {
      const r = await conn.runAndReadAll(`SELECT block_number FROM read_parquet('${join(lake, f)}', file_row_number = true) ORDER BY file_row_number`);
      out.push(r.getRows().map(([b]) => Number(b)));
    }
    return out;
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** The greatest block of each descending run: a new run starts where the blocks go up. */
function runMaxima(blocks: number[]): number[] {
  const maxima: number[] = [];
  for (let i = 0; i < blocks.length; i++) if (i === 0 || blocks[i]! > blocks[i - 1]!) maxima.push(blocks[i]!);
  return maxima;
}

describe('compact', () => {
  it('joins the files in block order: the batches of a newest-first listing come out oldest first', async () => {
    const lake = await (await smallFiles()).make('cl-compact-order-');
    const store = new StateStore(lake);
    const before = store.all().filter((s) => s.table === 'erc_transfers');
    // Committed newest first: the first file holds the newest blocks.
    const committed = await storedBlocks(lake, before[0]!.files.filter((f) => f.endsWith('.parquet')));
    expect(committed.length).toBeGreaterThan(3);
    expect(committed[0]![0]).toBeGreaterThan(committed.at(-1)![0]!);
    await compactLake(lake, ['erc_transfers'], { logger: quiet, targetRows: 1_000_000 });
    for (const s of new StateStore(lake).all().filter((x) => x.table === 'erc_transfers')) {
      const data = s.files.filter((f) => f.startsWith('erc_transfers/'));
      expect(data.length, s.partition).toBe(1);
      const [blocks] = await storedBlocks(lake, data);
      // Each batch stays a descending run; the runs come in ascending order of their blocks.
      const maxima = runMaxima(blocks!);
      expect(maxima.length, s.partition).toBeGreaterThan(1);
      expect(maxima, s.partition).toEqual([...maxima].sort((a, b) => a - b));
      expect(blocks![0], s.partition).toBeLessThan(blocks!.at(-1)!);
    }
  });

  it('a run given compactAfter merges the small files of its partitions at its end, rows unchanged', async () => {
    const lakes = await smallFiles();
    // A day later, a run on two copies of the small lake, one given compactAfter: its partitions
    // hold the earlier run's small files and its own. erc_transfers alone (the small lake's other
    // tables are internal_transactions and delegators): the claim is of a table's partitions, and
    // the others' fetch and merge would prove it again.
    const sim = await startSimulator({ port: 0, seed: 8, worldNow: () => DEMO.now + 86400 });
    closers.push(() => sim.close());
    const p = demoPipeline(sim.url, ['erc_transfers']);
    const plain = await lakes.make('cl-compact-run-');
    expect((await runPipeline(p, { lake: plain, logger: quiet, flushRows: 20 })).status).toBe('ok');
    const lake = await lakes.make('cl-compact-run-');
    const report = await runPipeline(p, { lake, logger: quiet, flushRows: 20, compactAfter: 4 });
    expect(report.status).toBe('ok');
    const filesOf = (l: string) => new StateStore(l).all().filter((st) => st.table === 'erc_transfers').reduce((n, st) => n + st.files.filter((f) => f.startsWith('erc_transfers/')).length, 0);
    expect(filesOf(lake)).toBeLessThan(filesOf(plain));
    const told = report.compacted?.find((c) => c.table === 'erc_transfers');
    // The report counts the partitions it looked into: those with at least compactAfter files
    // (a run's batches may split otherwise than another's: split points depend on timing).
    expect(told!.filesAfter).toBeLessThan(told!.filesBefore);
    expect(told!.filesAfter).toBeLessThanOrEqual(filesOf(lake));
    expect((await lakeContents(lake)).erc_transfers).toEqual((await lakeContents(plain)).erc_transfers);
  });

  it('rewrites small files without changing a row; an open window keeps its files and resumes', async () => {
    const lakes = await smallFiles();
    const later = DEMO.now + 4 * 86400;
    const sim = await startSimulator({ port: 0, seed: 8, worldNow: () => later });
    closers.push(() => sim.close());
    const p = demoPipeline(sim.url, SMALL_TABLES);
    // The lake as uninterrupted runs leave it: the small lake's run, then one four days later.
    const clean = await lakes.make('cl-compact-');
    expect((await runPipeline(p, { lake: clean, logger: quiet, flushRows: 40 })).status).toBe('ok');
    const want = await lakeContents(clean);

    // The same, but the second run is cut short once a window has committed batches; on a copy
    // without Iceberg metadata, so that all the metadata it ends with is of its own files.
    const lake = await lakes.make('cl-compact-', { bare: true });
    const store = new StateStore(lake);
    const windowFiles = (c: Cursor) => listingsOf(c.window).flatMap((l) => l.files);
    const open = () => store.all().filter((s) => windowFiles(s.cursor).length > 1);
    const ac = new AbortController();
    const cut = runPipeline(p, { lake, logger: quiet, flushRows: 40, signal: ac.signal });
    const timer = setInterval(() => open().length > 0 && ac.abort(new Error('cut')), 2);
    expect((await cut).status).toBe('failed');
    clearInterval(timer);
    const windows = open().map((s) => ({ table: s.table, partition: s.partition, files: windowFiles(s.cursor) }));
    expect(windows.length).toBeGreaterThan(0);

    const before = await lakeContents(lake);
    const states = new Map(store.all().map((s) => [`${s.table} ${s.partition}`, s]));
    const reports = await compactLake(lake, [], { logger: quiet, targetRows: 1000 });
    const transfers = reports.find((r) => r.table === 'erc_transfers')!;
    expect(transfers.filesAfter).toBeLessThan(transfers.filesBefore);
    expect(transfers.rowsRewritten).toBeGreaterThan(0);
    expect(await lakeContents(lake)).toEqual(before);
    expect(await icebergOutOfStep(lake)).toEqual([]);
    for (const s of store.all()) {
      const was = states.get(`${s.table} ${s.partition}`)!;
      expect(s.rows, `${s.table} ${s.partition}`).toBe(was.rows);
      expect(s.cursor).toEqual(was.cursor);
      for (const f of s.files) expect(existsSync(join(lake, f)), f).toBe(true);
    }
    for (const w of windows) {
      const s = store.load(w.table, w.partition);
      for (const f of w.files) expect(s.files, `${w.table} ${w.partition}`).toContain(f);
    }
    // Compacting again finds nothing to do.
    expect((await compactLake(lake, ['erc_transfers'], { logger: quiet, targetRows: 1000 }))[0]!.rowsRewritten).toBe(0);

    expect((await runPipeline(p, { lake, logger: quiet, flushRows: 40 })).status).toBe('ok');
    expect(await lakeContents(lake)).toEqual(want);
    expect(await icebergOutOfStep(lake)).toEqual([]);
  });

  it('a compaction killed at any moment leaves the table whole once the next command recovers', async () => {
    // erc_transfers alone: the claim is of the table the killed command was merging, and each
    // recovery's compaction and read of the small lake's other two tables would prove nothing more.
    const small = lakeOf(['erc_transfers'], await (await smallFiles()).make('cl-compact-'), mkdtempSync(join(tmpdir(), 'cl-compact-erc-')));
    const want = await lakeContents(small);
    const outcomes: string[] = [];
    // Killed at the nth change the compaction makes to the lake's folder and to the table's states
    // (its staging made, then each state written, committed and moved on: about 60 for this lake),
    // not after a delay: a process starting on a busy machine was killed before it began.
    for (const nth of [1, 6, 23, 45]) {
      const lake = mkdtempSync(join(tmpdir(), 'cl-compact-kill-'));
      cpSync(small, lake, { recursive: true });
      const child = spawn(process.execPath, [BIN, 'compact', '--lake', lake, '--target-rows', '500'], { stdio: 'ignore' });
      let changes = 0;
      const seen = () => ++changes === nth && child.kill('SIGKILL');
      const watchers = [watch(lake, seen), watch(join(lake, '_state', 'erc_transfers'), seen)];
      const [code, signal] = await new Promise<[number | null, string | null]>((r) => child.on('exit', (c, sg) => r([c, sg])));
      for (const w of watchers) w.close();
      outcomes.push(signal ?? `exit ${code}`);
      // The next command on the lake finishes or drops what the killed one left, then compacts.
      await compactLake(lake, [], { logger: quiet, targetRows: 500 });
      expect(await lakeContents(lake), `killed at change ${nth}`).toEqual(want);
      const store = new StateStore(lake);
      for (const st of store.all()) for (const f of st.files) expect(existsSync(join(lake, f)), f).toBe(true);
      const files = store.all().flatMap((st) => st.files.filter((f) => f.endsWith('.parquet') && !f.startsWith('_')));
      const onDisk = readdirSync(join(lake, 'erc_transfers'), { recursive: true }).filter((f) => String(f).endsWith('.parquet'));
      expect(onDisk.length, 'no file outside the state').toBe(files.filter((f) => f.startsWith('erc_transfers/')).length);
    }
    expect(outcomes.filter((o) => o === 'SIGKILL').length, outcomes.join(', ')).toBeGreaterThan(0);
    // Four compactions in processes, each waited on to its kill: past a minute on a busy machine.
  }, 300_000);

  it('a stop lands between groups: what was merged stays, the lock goes, a rerun merges the rest', async () => {
    const lakes = await smallFiles();
    const lake = await lakes.make('cl-compact-stop-');
    const want = await lakeContents(lake);
    const filesOf = (table: string) => new StateStore(lake).all().filter((st) => st.table === table).reduce((n, st) => n + st.files.filter((f) => f.startsWith(`${table}/`)).length, 0);
    const before = { erc: filesOf('erc_transfers'), internal: filesOf('internal_transactions') };
    // SIGTERM as the first table is done (its "compacted" line): the second one is left as it was.
    const ac = new AbortController();
    const logger = { ...quiet, info: () => ac.abort(new RunError('stopped by SIGTERM')) } as unknown as typeof quiet;
    await expect(compactLake(lake, ['erc_transfers', 'internal_transactions'], { logger, targetRows: 500, signal: ac.signal })).rejects.toThrow(/stopped by SIGTERM/);
    expect(filesOf('erc_transfers')).toBeLessThan(before.erc);
    expect(filesOf('internal_transactions')).toBe(before.internal);
    expect(await LakeLock.held(lake)).toBe(false);
    expect(await lakeContents(lake)).toEqual(want);
    await compactLake(lake, [], { logger: quiet, targetRows: 500 });
    expect(filesOf('internal_transactions')).toBeLessThan(before.internal);
    expect(await lakeContents(lake)).toEqual(want);

    // The CLI wires SIGTERM to that stop: exit 143 as a shell reports a stop by SIGTERM, the lock released.
    const cli = await lakes.make('cl-compact-stop-cli-');
    const child = spawn(process.execPath, [BIN, 'compact', 'erc_transfers', 'internal_transactions', '--lake', cli, '--target-rows', '500'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += String(d);
      if (stderr.includes('"msg":"compacted"') && !child.killed) child.kill('SIGTERM');
    });
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code, stderr).toBe(143);
    expect(stderr).toContain('chainlake: stopped by SIGTERM; the groups merged so far stay, a rerun merges the rest\n');
    expect(await LakeLock.held(cli)).toBe(false);
    expect(await lakeContents(cli)).toEqual(want);
  });

  it('refuses an unknown table and a bad target', async () => {
    const lake = mkdtempSync(join(tmpdir(), 'cl-compact-'));
    await expect(compactLake(lake, ['nope'], { logger: quiet })).rejects.toThrow(/"nope" is not a table/);
    await expect(compactLake(lake, [], { logger: quiet, targetRows: 0.5 })).rejects.toThrow(/--target-rows/);
  });
});
