// `chainlake check`: a clean lake passes; each kind of damage a check is there for is made on a
// copy of the lake and must fail that check, naming the place.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { beforeAll, describe, expect, it } from 'vitest';
import { runChecks, type CheckResult } from '../../src/warehouse/check.js';
import { afterWindow, coveredRange, listingsOf, nextWindowStart, skipAt, type Cursor } from '../../src/state/cursor.js';
import { LAKE_TABLES, openWarehouse } from '../../src/warehouse/views.js';
import { StateStore, type PartitionState } from '../../src/state/store.js';
import { icebergPublisher } from '../../src/iceberg/table.js';
import type { StreamDecl } from '../../src/decl/stream.js';
import { BLOCK_CURSOR } from '../../src/streams/common.js';
import { cliHere, demoLake, lakeOf, sharedWholeLake } from '../lake-fixture.js';

let lake: string;
const TABLES = ['erc_transfers', 'internal_transactions', 'historical_rewards', 'delegators', 'chain_metrics', 'avg_tps'];

beforeAll(async () => {
  // The shared whole run's small commits (partitions own several files each), these tables alone.
  lake = lakeOf(TABLES, (await sharedWholeLake()).lake, join(mkdtempSync(join(tmpdir(), 'cl-check-')), 'lake'));
}, 300_000);

/**
 * The checks of `dir`; with `table`, only that table's (and only its view made): a damage made to
 * one table is found by its checks, and the other tables' views and checks would only repeat the
 * clean lake's.
 */
async function checks(dir: string, setup?: (conn: DuckDBConnection) => Promise<void>, table?: string): Promise<CheckResult[]> {
  const conn = await openWarehouse(dir, {}, table ? new Set([table]) : undefined);
  try {
    await setup?.(conn);
    return await runChecks(conn, dir, table ? LAKE_TABLES.filter((d) => d.table === table) : undefined);
  } finally {
    conn.closeSync();
  }
}

// The clean lake's checks, run once for the tests that read them.
let clean: Promise<CheckResult[]> | undefined;
const cleanChecks = () => (clean ??= checks(lake));

function result(rs: CheckResult[], check: string, table: string): CheckResult {
  const r = rs.find((x) => x.check === check && x.table === table);
  if (!r) throw new Error(`no check "${check}" on ${table} in: ${rs.map((x) => `${x.check}/${x.table}`).join(', ')}`);
  return r;
}

const failures = (rs: CheckResult[]) => rs.filter((r) => r.status === 'fail').map((r) => `${r.table}: ${r.check}`);

function copyLake(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'cl-check-')), 'lake');
  cpSync(lake, dir, { recursive: true });
  return dir;
}

function states(dir: string, table: string): Array<{ file: string; state: PartitionState }> {
  const root = join(dir, '_state', table);
  return readdirSync(root).map((f) => ({ file: join(root, f), state: JSON.parse(readFileSync(join(root, f), 'utf8')) as PartitionState }));
}

function editState(file: string, edit: (s: PartitionState) => void): void {
  const s = JSON.parse(readFileSync(file, 'utf8')) as PartitionState;
  edit(s);
  writeFileSync(file, JSON.stringify(s));
}

async function rewriteParquet(file: string, select: string): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  await conn.run(`COPY (${select.replace('$file', `read_parquet('${file}')`)}) TO '${file}.new' (FORMAT parquet)`);
  conn.closeSync();
  renameSync(`${file}.new`, file);
}

describe('chainlake check on a clean lake', () => {
  it('passes every check, and skips only what has nothing to assert on', async () => {
    const rs = await cleanChecks();
    expect(failures(rs)).toEqual([]);
    for (const t of TABLES) {
      expect(result(rs, 'key unique', t).status).toBe('pass');
      expect(result(rs, 'files owned by a partition', t).status).toBe('pass');
      expect(result(rs, 'rows match partition states', t).status).toBe('pass');
    }
    for (const t of ['erc_transfers', 'internal_transactions']) expect(result(rs, 'rows within the block cursor', t).status).toBe('pass');
    expect(result(rs, 'amounts exact', 'delegators').detail).toContain('amount_delegated, delegation_fee, gross_reward, net_reward');
    expect(result(rs, 'metric timestamps aligned', 'chain_metrics').status).toBe('pass');
    expect(result(rs, 'one metric point per interval', 'chain_metrics').status).toBe('pass');
    expect(result(rs, 'txCount metric = block transactions per day', 'chain_metrics, blocks')).toMatchObject({ status: 'skip' });
    // Tables this lake has no rows of are skipped, never passed.
    expect(result(rs, 'key unique', 'pending_rewards')).toMatchObject({ status: 'skip', detail: 'no rows' });
  });

  it('a lake killed before its first run report (a _runs folder without one) is checked and queried', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-noreport-'));
    cpSync(lake, dir, { recursive: true });
    rmSync(join(dir, '_runs'), { recursive: true });
    mkdirSync(join(dir, '_runs'));
    writeFileSync(join(dir, '_runs', 'run.json.tmp'), '{"runId"');
    const conn = await openWarehouse(dir);
    expect((await conn.runAndReadAll('SELECT count(*)::INTEGER FROM _runs')).getRows()).toEqual([[0]]);
    conn.closeSync();
    expect(failures(await checks(dir))).toEqual([]);
  });

  it('prints the counts (every check with --all) and exits 0; exits 2 on a lake that does not exist, or a folder that holds none', async () => {
    // Nothing failed: one line, not a line per check.
    const r = await cliHere(['check', '--lake', lake]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+ passed, 0 failed, \d+ skipped \(--all lists every check\)\n$/);
    const all = await cliHere(['check', '--lake', lake, '--all']);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^status\s+table\s+check\s+detail/);
    expect(all.stdout).toMatch(/^PASS\s+erc_transfers\s+key unique/m);
    expect(all.stdout).toMatch(/^SKIP\s/m);
    expect(all.stdout).toMatch(/\n\n\d+ passed, 0 failed, \d+ skipped\n$/);
    expect(await cliHere(['check', '--lake', join(lake, 'nope')])).toMatchObject({ code: 2, stderr: expect.stringContaining('no such folder') });
    // A mistyped --lake naming some other folder: every check would pass there.
    const other = mkdtempSync(join(tmpdir(), 'cl-not-a-lake-'));
    mkdirSync(join(other, 'erc_transfers'));
    expect(await cliHere(['check', '--lake', other])).toEqual({ code: 2, stdout: '', stderr: `chainlake: --lake ${other}: no lake there (no partition state and no run report in this folder)\n` });
  });

  it('--format json: one document with the counts and every check whole; exit 0', async () => {
    const r = await cliHere(['check', '--lake', lake, '--format', 'json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    const rs = await cleanChecks();
    expect(doc.checks).toEqual(rs.map(({ table, check, status, detail }) => ({ table, check, status, detail })));
    const count = (status: string) => rs.filter((x) => x.status === status).length;
    expect(doc).toMatchObject({ passed: count('pass'), failed: 0, skipped: count('skip') });
    expect(doc.passed).toBeGreaterThan(0);
  });
});

describe('chainlake check finds damage', () => {
  it('a stray copy of a data file: unowned file and duplicate keys; the CLI exits 1', async () => {
    const dir = copyLake();
    const { state } = states(dir, 'erc_transfers')[0]!;
    const data = state.files.find((f) => f.startsWith('erc_transfers/'))!;
    cpSync(join(dir, data), join(dir, data.replace('.parquet', '-copy.parquet')));
    const rs = await checks(dir);
    expect(result(rs, 'files owned by a partition', 'erc_transfers')).toMatchObject({ status: 'fail', detail: expect.stringContaining('-copy.parquet') });
    expect(result(rs, 'key unique', 'erc_transfers')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/keys? on more than one row/) });
    expect(failures(rs).every((f) => f.startsWith('erc_transfers'))).toBe(true);
    const r = await cliHere(['check', '--lake', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL\s+erc_transfers\s+files owned by a partition/);
    // The failures only, then the counts.
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.slice(2, -2).map((l) => l.split(/\s+/)[0])).toEqual(failures(rs).map(() => 'FAIL'));
    expect(lines.at(-1)).toMatch(new RegExp(`^\\d+ passed, ${failures(rs).length} failed, \\d+ skipped \\(--all lists every check\\)$`));
    const j = await cliHere(['check', '--lake', dir, '--format', 'json']);
    expect(j.code).toBe(1);
    const doc = JSON.parse(j.stdout);
    expect(doc.failed).toBe(failures(rs).length);
    expect(doc.checks.filter((c: CheckResult) => c.status === 'fail').map((c: CheckResult) => `${c.table}: ${c.check}`)).toEqual(failures(rs));
  });

  it('a committed file gone: missing file and rows short of the state', async () => {
    const dir = copyLake();
    const { state } = states(dir, 'internal_transactions')[0]!;
    const data = state.files.find((f) => f.startsWith('internal_transactions/'))!;
    unlinkSync(join(dir, data));
    const rs = await checks(dir, undefined, 'internal_transactions');
    expect(result(rs, 'files owned by a partition', 'internal_transactions')).toMatchObject({ status: 'fail', detail: expect.stringContaining('missing') });
    expect(result(rs, 'rows match partition states', 'internal_transactions')).toMatchObject({ status: 'fail', detail: expect.stringContaining(state.partition) });
  });

  it('a state that counts more rows than its files hold', async () => {
    const dir = copyLake();
    const [{ file, state }] = states(dir, 'chain_metrics');
    editState(file!, (s) => (s.rows += 1));
    const rs = await checks(dir, undefined, 'chain_metrics');
    expect(result(rs, 'rows match partition states', 'chain_metrics')).toMatchObject({ status: 'fail', detail: `1 partition differs: ${state!.partition}: state ${state!.rows + 1}, files ${state!.rows}` });
  });

  it('the table-wide merge is compared through its (table) state', async () => {
    const dir = copyLake();
    const own = states(dir, 'delegators').find((s) => s.state.partition === '(table)')!;
    editState(own.file, (s) => (s.rows -= 2));
    const rs = await checks(dir, undefined, 'delegators');
    expect(result(rs, 'rows match partition states', 'delegators')).toMatchObject({ status: 'fail', detail: expect.stringContaining('(table)') });
  });

  it('a cursor behind the committed rows: rows above the cursor', async () => {
    const dir = copyLake();
    const { file, state } = states(dir, 'erc_transfers')[0]!;
    const back = state.cursor.nextBlock! - 1000;
    editState(file, (s) => {
      s.cursor = { nextBlock: back };
    });
    const rs = await checks(dir, undefined, 'erc_transfers');
    expect(result(rs, 'rows within the block cursor', 'erc_transfers')).toMatchObject({ status: 'fail', detail: expect.stringContaining(`${state.partition}: `) });
    expect(result(rs, 'rows within the block cursor', 'erc_transfers').detail).toMatch(new RegExp(`above block ${back - 1}`));
  });

  it('a high-water block whose rows differ from the keys the cursor skips', async () => {
    const dir = copyLake();
    const { file, state } = states(dir, 'erc_transfers').find((s) => (s.state.cursor.skip?.keys.length ?? 0) > 0)!;
    editState(file, (s) => s.cursor.skip!.keys.push('not-a-committed-key'));
    const rs = await checks(dir, undefined, 'erc_transfers');
    const n = state.cursor.skip!.keys.length;
    expect(result(rs, 'rows within the block cursor', 'erc_transfers')).toMatchObject({ status: 'fail', detail: expect.stringContaining(`block ${state.cursor.nextBlock} holds ${n} rows, the cursor skips ${n + 1}`) });
  });

  it('a DECIMAL that lost its value while _raw has the digits', async () => {
    const dir = copyLake();
    const { state } = states(dir, 'delegators').find((s) => s.state.partition === '(table)')!;
    const file = join(dir, state.files[0]!);
    await rewriteParquet(file, `SELECT * REPLACE (CAST(NULL AS DECIMAL(38,0)) AS net_reward) FROM $file`);
    const rs = await checks(dir, undefined, 'delegators');
    expect(result(rs, 'amounts exact', 'delegators')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^net_reward: \d+ rows differ from net_reward_raw$/) });
    expect(result(rs, 'rows match partition states', 'delegators').status).toBe('pass');
  });

  it('metric points off their interval start, and a missing interval', async () => {
    const shifted = await checks(lake, async (conn) => {
      await conn.run(`CREATE TABLE cm AS SELECT * FROM chain_metrics`);
      await conn.run(`CREATE OR REPLACE VIEW chain_metrics AS SELECT * REPLACE (CASE WHEN metric = 'txCount' AND time_interval = 'week' AND timestamp = (SELECT max(timestamp) FROM cm WHERE metric = 'txCount' AND time_interval = 'week') THEN timestamp + INTERVAL 1 DAY ELSE timestamp END AS timestamp) FROM cm`);
    }, 'chain_metrics');
    expect(result(shifted, 'metric timestamps aligned', 'chain_metrics')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^43114\/txCount\/week: 1 point off, first \d{4}-\d\d-\d\d/) });
    const holed = await checks(lake, async (conn) => {
      await conn.run(`CREATE TABLE cm AS SELECT * FROM chain_metrics`);
      await conn.run(`CREATE OR REPLACE VIEW chain_metrics AS SELECT * FROM cm WHERE NOT (chain_id = 'total' AND metric = 'gasUsed' AND timestamp = TIMESTAMPTZ '2025-03-10 00:00:00+00')`);
    }, 'chain_metrics');
    expect(result(holed, 'one metric point per interval', 'chain_metrics')).toMatchObject({ status: 'fail', detail: 'total/gasUsed/day: 1 gap, first missing 2025-03-10 00:00:00+00' });
    expect(result(holed, 'metric timestamps aligned', 'chain_metrics').status).toBe('pass');
  });
});

describe('day-level txCount against blocks', () => {
  // Blocks every hour from noon of the day before to 11:00 of the day after one day D: D alone is
  // wholly covered. Its 24 blocks carry the metric's txCount for D between them.
  const DAY = '2025-10-01';
  async function withBlocks(edit: (blocks: string) => string = (b) => b): Promise<CheckResult> {
    const rs = await checks(lake, async (conn) => {
      const v = Number((await conn.runAndReadAll(`SELECT value FROM chain_metrics WHERE chain_id = '43114' AND metric = 'txCount' AND time_interval = 'day' AND timestamp = TIMESTAMPTZ '${DAY} 00:00:00+00'`)).getRowObjects()[0]!.value);
      const per = Math.floor(v / 24);
      const first = v - per * 23;
      const blocks = `SELECT '43114' AS chain_id, 1000 + i AS block_number, TIMESTAMPTZ '${DAY} 00:00:00+00' + INTERVAL (i - 12) HOUR AS block_timestamp,
                             CAST(CASE WHEN i - 12 = 0 THEN ${first} WHEN i - 12 BETWEEN 1 AND 23 THEN ${per} ELSE 7 END AS INTEGER) AS tx_count
                      FROM range(48) t(i)`;
      await conn.run(`CREATE OR REPLACE VIEW blocks AS ${edit(blocks)}`);
    }, 'chain_metrics');
    return result(rs, 'txCount metric = block transactions per day', 'chain_metrics, blocks');
  }

  it('passes when the blocks of a whole day add up to the metric', async () => {
    expect(await withBlocks()).toMatchObject({ status: 'pass', detail: '1 day compared, all equal' });
  });

  it('fails naming the day when they do not', async () => {
    const r = await withBlocks((b) => `SELECT * REPLACE (CASE WHEN block_number = 1020 THEN tx_count + 5 ELSE tx_count END AS tx_count) FROM (${b})`);
    expect(r).toMatchObject({ status: 'fail', detail: expect.stringMatching(new RegExp(`^1 day compared, 1 differs, e.g. 43114 ${DAY}: metric (\\d+), blocks \\d+`)) });
    const [, metric, blocks] = /metric (\d+), blocks (\d+)/.exec(r.detail)!;
    expect(Number(blocks) - Number(metric)).toBe(5);
  });

  it('compares no day that a missing block leaves partial, and says so', async () => {
    const r = await withBlocks((b) => `SELECT * FROM (${b}) WHERE block_number <> 1020`);
    expect(r).toMatchObject({ status: 'skip', detail: 'no day both fully covered by blocks and in a txCount day series' });
  });

  it('is skipped while the blocks table is empty', async () => {
    expect(await withBlocks((b) => `SELECT * FROM (${b}) WHERE false`)).toMatchObject({ status: 'skip', detail: 'the blocks table has no rows' });
  });
});

describe('a table with one row per block', () => {
  const decl = {
    table: 'blocks',
    doc: 'test',
    service: 'data',
    endpoint: '/x',
    items: 'blocks',
    weight: 10,
    pageSize: { min: 0, max: 0, default: 0 },
    options: {},
    partitions: () => [],
    refresh: 'append',
    blockCursor: BLOCK_CURSOR,
    key: ['chain_id', 'block_number'],
    columns: [
      { name: 'chain_id', type: 'varchar', doc: '' },
      { name: 'block_number', type: 'bigint', doc: '' },
    ],
  } as unknown as StreamDecl;

  async function blockLake(numbers: number[], after?: (store: StateStore) => Promise<void>): Promise<CheckResult[]> {
    const dir = mkdtempSync(join(tmpdir(), 'cl-blocks-'));
    mkdirSync(join(dir, 'blocks'));
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    await conn.run(`COPY (SELECT '43114' AS chain_id, CAST(unnest([${numbers.join(',')}]) AS BIGINT) AS block_number) TO '${join(dir, 'blocks', 'p.parquet')}' (FORMAT parquet)`);
    conn.closeSync();
    const top = Math.max(...numbers);
    const store = new StateStore(dir, { publisher: icebergPublisher });
    await store.commit({ table: 'blocks', partition: '43114', files: ['blocks/p.parquet'], rows: numbers.length, rejects: 0, cursor: { nextBlock: top, skip: { block: top, keys: [`43114|${top}`] } } }, []);
    await store.publisher!.adopt('blocks');
    await after?.(store);
    const wh = await DuckDBInstance.create(':memory:');
    const c = await wh.connect();
    await c.run(`CREATE VIEW blocks AS SELECT * FROM read_parquet('${join(dir, 'blocks', '*.parquet')}')`);
    try {
      return await runChecks(c, dir, [decl]);
    } finally {
      c.closeSync();
    }
  }

  it('passes with every block from the first to the last', async () => {
    const rs = await blockLake([100, 101, 102, 103, 104, 105]);
    expect(failures(rs)).toEqual([]);
    expect(result(rs, 'no gaps in block numbers', 'blocks').status).toBe('pass');
    expect(result(rs, 'rows within the block cursor', 'blocks').status).toBe('pass');
  });

  it('fails when the Iceberg snapshot names a file twice (an engine would read its rows twice)', async () => {
    const rs = await blockLake([100, 101], (store) => store.publisher!.publish({ table: 'blocks', values: {}, added: ['blocks/p.parquet'], removed: [], commit: 'again' }));
    expect(result(rs, 'Iceberg snapshot names the committed files', 'blocks')).toMatchObject({ status: 'fail', detail: expect.stringContaining('1 file named more than once, e.g. blocks/p.parquet') });
  });

  it('fails naming the hole when blocks are missing', async () => {
    const rs = await blockLake([100, 101, 104, 105, 107]);
    expect(result(rs, 'no gaps in block numbers', 'blocks')).toMatchObject({ status: 'fail', detail: '43114: 3 blocks missing in 2 gaps, first 102' });
  });
});

describe('a run cut short (an open window in the cursor)', () => {
  it('its committed pages pass; a window whose newest block lost rows fails', async () => {
    const ac = new AbortController();
    const { lake: cut } = await demoLake(['erc_transfers'], {
      run: {
        flushRows: 100,
        signal: ac.signal,
        onStart: (r) => {
          const t = setInterval(() => {
            if (r.streams[0]!.rows >= 300) {
              ac.abort(new Error('cut short by the test'));
              clearInterval(t);
            }
          }, 1);
        },
      },
    });
    // The newest listing of a window: the one whose newest committed block is the highest.
    const newest = (c: Cursor) => listingsOf(c.window).filter((l) => l.top).sort((a, b) => b.top!.block - a.top!.block)[0];
    const open = states(cut, 'erc_transfers').filter((s) => newest(s.state.cursor));
    expect(open.length).toBeGreaterThan(0);
    // The lake holds erc_transfers alone: the other tables' checks have no rows to look at.
    const rs = await checks(cut, undefined, 'erc_transfers');
    expect(failures(rs)).toEqual([]);
    editState(open[0]!.file, (s) => newest(s.cursor)!.top!.keys.pop());
    const broken = await checks(cut, undefined, 'erc_transfers');
    expect(result(broken, 'rows within the block cursor', 'erc_transfers')).toMatchObject({ status: 'fail', detail: expect.stringContaining(open[0]!.state.partition) });
  });
});

describe('coveredRange', () => {
  const state = (cursor: Cursor): Cursor => cursor;
  it('reads the cursor forms', () => {
    expect(coveredRange(state({}))).toEqual({ high: undefined, hw: undefined });
    // Ended at an exclusive endBlock: rows stop below it.
    expect(coveredRange(state({ nextBlock: 500 }))).toEqual({ high: 499, hw: undefined });
    expect(coveredRange(state({ nextBlock: 500, skip: { block: 500, keys: ['a', 'b'] } }))).toEqual({ high: 500, hw: { block: 500, keys: 2 } });
    const window = { query: {}, files: [], top: { block: 650, keys: ['x'] } };
    expect(coveredRange(state({ nextBlock: 500, skip: { block: 500, keys: ['a'] }, window }))).toEqual({ high: 650, hw: { block: 650, keys: 1 } });
    expect(coveredRange(state({ window: { query: {}, files: [] } }))).toEqual({ high: undefined, hw: undefined });
  });

  it('reads the cursor a finished window leaves as the rows that window committed', () => {
    const top = { block: 150, keys: ['a', 'b'] };
    // An end block: every block below it is done.
    expect(coveredRange(afterWindow(100, 200, top, undefined))).toEqual({ high: 199, hw: undefined });
    // Following the head: the newest block's rows are listed, to be skipped when it is refetched.
    const open = afterWindow(100, undefined, top, undefined);
    expect(coveredRange(open)).toEqual({ high: 150, hw: { block: 150, keys: 2 } });
    expect(nextWindowStart(open, 120)).toBe(150);
    expect(skipAt(open, nextWindowStart(open, 120))).toEqual(top);
    // A start configured past the cursor: nothing of that block was committed, nothing is skipped.
    expect(skipAt(open, nextWindowStart(open, 180))).toBeUndefined();
    // A window that found no row keeps where it started and what it skipped there.
    const skip = { block: 100, keys: ['z'] };
    expect(afterWindow(100, undefined, undefined, skip)).toEqual({ nextBlock: 100, skip });
    expect(coveredRange(afterWindow(100, undefined, undefined, skip))).toEqual({ high: 100, hw: { block: 100, keys: 1 } });
  });
});
