// `chainlake check`: SQL assertions over a lake, derived from the stream declarations where they
// can be (keys, amounts, block cursors) so that a new stream is checked without new code here.
// Each check passes, fails, or is skipped when the lake holds nothing it could assert on; a
// skipped check says why, so a green table never hides a check that did not run.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { filesOf, LAKE_TABLES } from './views.js';
import { amountsOf } from './amounts.js';
import type { StreamDecl } from '../decl/stream.js';
import { listParquet, sqlString } from '../load/paths.js';
import { StateStore, TABLE_PARTITION, type PartitionState } from '../state/store.js';
import type { ObjectStore } from '../state/objects.js';
import { isTableData } from '../state/names.js';
import { icebergReader, lakeUri, type IcebergTables } from '../iceberg/table.js';
import { coveredRange, cursorProblem, listingRange, tilingProblem, type ChunkedWindow } from '../state/cursor.js';
import { textTable } from '../text.js';
import { strategyOf } from '../pipeline/strategies.js';
import { bounded, inert, LINE_CHARS } from '../text.js';
import { query } from './query.js';

export type CheckStatus = 'pass' | 'fail' | 'skip';

export interface CheckResult {
  check: string;
  table: string;
  status: CheckStatus;
  detail: string;
}

/** Examples quoted in a failure's detail: enough to start looking, bounded for huge lakes. */
const EXAMPLES = 3;

export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function rows(conn: DuckDBConnection, sql: string): Promise<Array<Record<string, unknown>>> {
  return (await query(conn, sql)).rows;
}

async function one(conn: DuckDBConnection, sql: string): Promise<Record<string, unknown>> {
  return (await rows(conn, sql))[0] ?? {};
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const differ = (n: number) => (n === 1 ? 'differs' : 'differ');

/** What every check may read: the warehouse views plus the partition states loaded as tables. */
interface Context {
  conn: DuckDBConnection;
  lake: string;
  decls: readonly StreamDecl[];
  states: PartitionState[];
  /** Rows per table (views), so checks over empty tables are skipped, not passed. */
  counts: Map<string, number>;
  /** The tables' Iceberg metadata, where the lake's objects are, and the lake's URI. */
  iceberg: IcebergTables;
  uri: string;
  /** Where the lake's objects are: the folder, or the store of an s3:// lake (whose local copy holds the committed files alone). */
  objects: ObjectStore;
}

type Outcome = Omit<CheckResult, 'check' | 'table'>;

interface Check {
  check: string;
  table: string;
  run(ctx: Context): Promise<Outcome>;
}

const pass = (detail: string): Outcome => ({ status: 'pass', detail });
const fail = (detail: string): Outcome => ({ status: 'fail', detail });
const skip = (detail: string): Outcome => ({ status: 'skip', detail });

function keyUnique(decl: StreamDecl): Check {
  return {
    check: 'key unique',
    table: decl.table,
    async run({ conn, counts }) {
      const n = counts.get(decl.table) ?? 0;
      if (n === 0) return skip('no rows');
      const cols = decl.key.map(ident).join(', ');
      // GROUP BY treats NULLs as equal, as the merge does (IS NOT DISTINCT FROM).
      const dup = await rows(conn, `SELECT ${cols}, count(*) AS n FROM ${ident(decl.table)} GROUP BY ALL HAVING count(*) > 1 ORDER BY n DESC LIMIT ${EXAMPLES}`);
      if (dup.length === 0) return pass(`${plural(n, 'row')}, one per (${decl.key.join(', ')})`);
      const total = await one(conn, `SELECT count(*) AS k FROM (SELECT 1 FROM ${ident(decl.table)} GROUP BY ${cols} HAVING count(*) > 1)`);
      const ex = dup.map((r) => `(${decl.key.map((k) => String(r[k] ?? 'NULL')).join(', ')}) x${r.n}`).join('; ');
      return fail(`${plural(num(total.k), 'key')} on more than one row, e.g. ${ex}`);
    },
  };
}

/**
 * In the files, DECIMAL(38,0) must equal its `_raw` digits where they fit, and be NULL where they
 * do not (the views give the amount as the BIGNUM of those digits: amounts.ts).
 */
function amountsExact(decl: StreamDecl): Check | undefined {
  const amounts = amountsOf(decl);
  if (amounts.length === 0) return undefined;
  return {
    check: 'amounts exact',
    table: decl.table,
    async run({ conn, counts, lake }) {
      const n = counts.get(decl.table) ?? 0;
      const files = filesOf(lake, decl);
      if (n === 0 || !files) return skip('no rows');
      const parts = amounts.map((a) => {
        const [col, raw] = [ident(a), ident(`${a}_raw`)];
        const digits = `coalesce(nullif(ltrim(${raw}, '0'), ''), '0')`;
        return `count(*) FILTER (WHERE (${raw} IS NULL AND ${col} IS NOT NULL)
            OR (length(${digits}) <= 38 AND ${col}::VARCHAR IS DISTINCT FROM ${digits} AND ${raw} IS NOT NULL)
            OR (length(${digits}) > 38 AND ${col} IS NOT NULL)) AS ${ident(a)}`;
      });
      const r = await one(conn, `SELECT ${parts.join(', ')} FROM ${files}`);
      const bad = amounts.filter((a) => num(r[a]) > 0);
      if (bad.length === 0) return pass(`${amounts.join(', ')}: each equals its _raw digits (NULL over 38 digits)`);
      return fail(bad.map((a) => `${a}: ${plural(num(r[a]), 'row')} differ from ${a}_raw`).join('; '));
    },
  };
}

/** A state's files in its table folder (it also lists rejects and other side files). */
function dataFiles(s: PartitionState): string[] {
  return s.files.filter((f) => f.startsWith(`${s.table}/`));
}

/**
 * The partition states as tables: `_check_state` (one row per partition, with the block cursor
 * flattened) and `_check_files` (the data files each state lists, absolute paths as DuckDB's
 * `filename` reports them).
 */
async function loadStates(ctx: Context): Promise<void> {
  const { conn, states } = ctx;
  const store = new StateStore(ctx.lake);
  await conn.run(`CREATE OR REPLACE TEMP TABLE _check_state (tbl VARCHAR, part VARCHAR, n_rows BIGINT, high BIGINT, hw_block BIGINT, hw_keys BIGINT, open_window BOOLEAN)`);
  await conn.run(`CREATE OR REPLACE TEMP TABLE _check_files (tbl VARCHAR, part VARCHAR, path VARCHAR)`);
  const lit = (v: number | undefined) => (v === undefined ? 'NULL' : String(v));
  const stateRows: string[] = [];
  const fileRows: string[] = [];
  for (const s of states) {
    const { high, hw } = coveredRange(s.cursor);
    stateRows.push(`(${sqlString(s.table)}, ${sqlString(s.partition)}, ${s.rows}, ${lit(high)}, ${lit(hw?.block)}, ${lit(hw?.keys)}, ${s.cursor.window !== undefined})`);
    for (const f of dataFiles(s)) fileRows.push(`(${sqlString(s.table)}, ${sqlString(s.partition)}, ${sqlString(store.path(f))})`);
  }
  // Inserted in slices so that one statement stays small on a lake with many files.
  for (let i = 0; i < stateRows.length; i += 500) await conn.run(`INSERT INTO _check_state VALUES ${stateRows.slice(i, i + 500).join(', ')}`);
  for (let i = 0; i < fileRows.length; i += 500) await conn.run(`INSERT INTO _check_files VALUES ${fileRows.slice(i, i + 500).join(', ')}`);
}

function parquetGlob(ctx: Context, table: string): string | undefined {
  const dir = join(ctx.lake, table);
  return existsSync(dir) && listParquet(dir).length > 0 ? join(dir, '**', '*.parquet') : undefined;
}

/** Every Parquet file in a table folder is listed by exactly one partition state, and vice versa. */
function filesOwned(decl: StreamDecl): Check {
  return {
    check: 'files owned by a partition',
    table: decl.table,
    async run(ctx) {
      const dir = join(ctx.lake, decl.table);
      const onDisk = existsSync(dir) ? listParquet(dir) : [];
      const owners = new Map<string, string[]>();
      const rel = (f: string) => f.slice(ctx.lake.length + 1);
      const store = new StateStore(ctx.lake);
      // Files a partition keeps for the table's older Iceberg snapshots (a retention) are its own
      // too: on disk, and left out of the views.
      const kept = new Set<string>();
      for (const s of ctx.states.filter((x) => x.table === decl.table)) {
        for (const f of dataFiles(s)) owners.set(store.path(f), [...(owners.get(store.path(f)) ?? []), s.partition]);
        for (const f of s.retained ?? []) kept.add(f);
      }
      if (onDisk.length === 0 && owners.size === 0) return skip('no files');
      const disk = new Set(onDisk);
      const orphans = onDisk.filter((f) => !owners.has(f) && !kept.has(rel(f)));
      const missing = [...owners.keys()].filter((f) => !disk.has(f)).map(rel);
      for (const f of kept) if (!(await ctx.objects.head(f))) missing.push(f);
      const shared = [...owners.entries()].filter(([, p]) => p.length > 1);
      const problems: string[] = [];
      // An orphan is read by every query (the views glob the folder): its rows count twice or
      // were never committed.
      if (orphans.length) problems.push(`${plural(orphans.length, 'file')} no state lists (read by queries all the same), e.g. ${orphans.slice(0, EXAMPLES).map(rel).join(', ')}`);
      if (missing.length) problems.push(`${plural(missing.length, 'listed file')} missing, e.g. ${missing.slice(0, EXAMPLES).join(', ')}`);
      if (shared.length) problems.push(`${plural(shared.length, 'file')} listed by several partitions, e.g. ${rel(shared[0]![0])} (${shared[0]![1].join(', ')})`);
      const older = kept.size ? ` (and ${plural(kept.size, 'file')} kept for older snapshots)` : '';
      return problems.length ? fail(problems.join('; ')) : pass(`${plural(owners.size, 'file')}, each listed by one partition state${older}`);
    },
  };
}

/**
 * The table's Iceberg snapshot (what other engines read) names exactly the data files its
 * partition states list: no file missing (rows other engines would not see), none extra (rows
 * replaced or never committed).
 */
function icebergInStep(decl: StreamDecl): Check {
  return {
    check: 'Iceberg snapshot names the committed files',
    table: decl.table,
    async run(ctx) {
      const committed = ctx.states.filter((s) => s.table === decl.table).flatMap((s) => s.files.filter((f) => isTableData(s.table, f)));
      const snap = await ctx.iceberg.snapshotFiles(decl.table);
      if (!snap) return committed.length ? fail(`${plural(committed.length, 'committed file')} and no Iceberg metadata (${decl.table}/metadata/; \`chainlake compact ${decl.table}\` writes it)`) : skip('no files');
      const inSnap = new Set(snap.files);
      const inStates = new Set(committed);
      const missing = committed.filter((f) => !inSnap.has(f));
      const extra = snap.files.filter((f) => !inStates.has(f));
      // A file named twice is read twice by an engine: its rows doubled.
      const twice = snap.files.filter((f, i) => i > 0 && snap.files[i - 1] === f);
      const problems: string[] = [];
      if (twice.length) problems.push(`${plural(twice.length, 'file')} named more than once, e.g. ${twice.slice(0, EXAMPLES).join(', ')}`);
      if (missing.length) problems.push(`${plural(missing.length, 'committed file')} not in the snapshot, e.g. ${missing.slice(0, EXAMPLES).join(', ')}`);
      if (extra.length) problems.push(`${plural(extra.length, 'file')} in the snapshot that no state lists, e.g. ${extra.slice(0, EXAMPLES).join(', ')}`);
      const at = `snapshot ${snap.snapshot} (metadata v${snap.version})`;
      if (problems.length) return fail(`${at}: ${problems.join('; ')}`);
      const elsewhere = snap.location !== `${ctx.uri}/${encodeURI(decl.table)}` ? `; its location ${snap.location} is where the lake was (its next commit starts the table's history here)` : '';
      return pass(`${at}: ${plural(snap.files.length, 'file')}, the states' own${elsewhere}`);
    },
  };
}

/**
 * Rows in each partition's files equal the rows its state says it committed: a lost or doubled
 * batch shows here. Partitions of a table-wide merge own no data files (the table's `(table)`
 * state does), so only the latter is compared for those streams.
 */
function rowsMatchState(decl: StreamDecl): Check {
  return {
    check: 'rows match partition states',
    table: decl.table,
    async run(ctx) {
      const glob = parquetGlob(ctx, decl.table);
      const shared = strategyOf(decl).shared;
      const owning = ctx.states.filter((s) => s.table === decl.table && (shared === undefined || s.partition === shared));
      if (!glob && owning.every((s) => s.rows === 0)) return skip('no files');
      const sql = `
        WITH f AS (SELECT filename AS path, count(*) AS n FROM read_parquet(${sqlString(glob ?? '')}, filename = true, union_by_name = true, hive_partitioning = false) GROUP BY 1)
        SELECT s.part, s.n_rows AS expected, coalesce(sum(f.n), 0) AS actual
        FROM _check_state s LEFT JOIN _check_files cf ON cf.tbl = s.tbl AND cf.part = s.part LEFT JOIN f ON f.path = cf.path
        WHERE s.tbl = ${sqlString(decl.table)} ${shared !== undefined ? `AND s.part = ${sqlString(shared)}` : ''}
        GROUP BY s.part, s.n_rows
        HAVING s.n_rows <> coalesce(sum(f.n), 0)
        ORDER BY s.part`;
      const bad = glob
        ? await rows(ctx.conn, sql)
        : owning.filter((s) => s.rows > 0).map((s) => ({ part: s.partition, expected: s.rows, actual: 0 }));
      if (bad.length === 0) return pass(`${plural(owning.length, 'partition')}: files hold the rows their state committed`);
      const ex = bad.slice(0, EXAMPLES).map((r) => `${r.part}: state ${r.expected}, files ${r.actual}`).join('; ');
      return fail(`${plural(bad.length, 'partition')} ${differ(bad.length)}: ${ex}`);
    },
  };
}

/**
 * Block-ranged (append) partitions: no committed row lies above the cursor, and the high-water
 * block holds exactly the rows the cursor will skip when the next run refetches that block. With
 * windows that start where the previous one ended (inclusive), this makes the committed range
 * contiguous: a row above the cursor would be fetched twice, a missing high-water row never again.
 */
function blockRange(decl: StreamDecl): Check | undefined {
  const bc = decl.blockCursor;
  if (!bc) return undefined;
  return {
    check: 'rows within the block cursor',
    table: decl.table,
    async run(ctx) {
      const glob = parquetGlob(ctx, decl.table);
      if (!glob) return skip('no files');
      const b = ident(bc.column);
      const bad = await rows(
        ctx.conn,
        `WITH r AS (SELECT filename AS path, ${b} AS block FROM read_parquet(${sqlString(glob)}, filename = true, union_by_name = true, hive_partitioning = false))
         SELECT s.part, s.high, s.hw_block, s.hw_keys,
                count(r.block) FILTER (WHERE s.high IS NULL OR r.block > s.high) AS above,
                max(r.block) AS top,
                count(r.block) FILTER (WHERE r.block = s.hw_block) AS at_hw
         FROM _check_state s LEFT JOIN _check_files cf ON cf.tbl = s.tbl AND cf.part = s.part LEFT JOIN r ON r.path = cf.path
         WHERE s.tbl = ${sqlString(decl.table)}
         GROUP BY ALL
         HAVING above > 0 OR (s.hw_block IS NOT NULL AND at_hw <> s.hw_keys)
         ORDER BY s.part`,
      );
      const partitions = ctx.states.filter((s) => s.table === decl.table).length;
      if (bad.length === 0) return pass(`${plural(partitions, 'partition')}: rows at or below the cursor; high-water block rows = keys the cursor skips`);
      const ex = bad.slice(0, EXAMPLES).map((r) =>
        num(r.above) > 0
          ? `${r.part}: ${plural(num(r.above), 'row')} above block ${r.high ?? '(no cursor)'} (up to ${r.top})`
          : `${r.part}: block ${r.hw_block} holds ${r.at_hw} rows, the cursor skips ${r.hw_keys}`,
      );
      return fail(`${plural(bad.length, 'partition')}: ${ex.join('; ')}`);
    },
  };
}

/**
 * No cursor past what exists: an append partition's committed rows and next block at most the
 * chain's head its last run found, a series' newest point not in the future. Past it, every later
 * run fetches nothing there and says ok (cursorProblem; `chainlake reset` moves it back).
 */
function cursorsPossible(decl: StreamDecl): Check | undefined {
  if (!decl.blockCursor && !decl.timeCursor) return undefined;
  return {
    check: 'cursors within what exists',
    table: decl.table,
    async run(ctx) {
      const states = ctx.states.filter((s) => s.table === decl.table && s.partition !== TABLE_PARTITION);
      if (!states.length) return skip('no partitions');
      const now = Math.floor(Date.now() / 1000);
      const bad = states.flatMap((s) => {
        const p = cursorProblem(s, now);
        return p ? [`${s.partition}: ${p}`] : [];
      });
      if (bad.length) return fail(`${plural(bad.length, 'partition')}: ${bad.slice(0, EXAMPLES).join('; ')}`);
      return pass(`${plural(states.length, 'partition')}: ${decl.blockCursor ? "at or below the chain's head each last run found" : 'no point in the future'}`);
    },
  };
}

/**
 * A window fetched in chunks: the chunks' ranges cover the window once (no block in two chunks, none
 * in none), and every row a chunk committed lies in its range. With the block cursor's check, the
 * committed range of a partition keeps no hole while its chunks are under way: each chunk's rows
 * are its own listing's, and a resumed chunk continues its listing where its commit left it.
 */
function chunkRanges(decl: StreamDecl): Check | undefined {
  const bc = decl.blockCursor;
  if (!bc?.head) return undefined;
  return {
    check: 'chunks cover their window, rows within their chunk',
    table: decl.table,
    async run(ctx) {
      const store = new StateStore(ctx.lake);
      const open = ctx.states.filter((s) => s.table === decl.table && s.cursor.window !== undefined && 'chunks' in s.cursor.window);
      if (open.length === 0) return skip('no window being fetched in chunks');
      const problems: string[] = [];
      const files: string[] = [];
      let chunks = 0;
      for (const s of open) {
        const w = s.cursor.window as ChunkedWindow;
        chunks += w.chunks.length;
        const gap = tilingProblem(w, bc);
        if (gap) problems.push(`${s.partition}: ${gap}`);
        for (const l of w.chunks) {
          const { from, to } = listingRange(l, bc);
          for (const f of l.files) if (f.startsWith(`${decl.table}/`)) files.push(`(${sqlString(s.partition)}, ${sqlString(store.path(f))}, ${from}, ${Number.isFinite(to) ? to : 'NULL'})`);
        }
      }
      if (files.length) {
        await ctx.conn.run(`CREATE OR REPLACE TEMP TABLE _check_chunks (part VARCHAR, path VARCHAR, lo BIGINT, hi BIGINT)`);
        for (let i = 0; i < files.length; i += 500) await ctx.conn.run(`INSERT INTO _check_chunks VALUES ${files.slice(i, i + 500).join(', ')}`);
        const paths = (await rows(ctx.conn, `SELECT DISTINCT path FROM _check_chunks`)).map((r) => sqlString(String(r.path)));
        const b = ident(bc.column);
        const bad = await rows(
          ctx.conn,
          `SELECT c.part, c.lo, c.hi, count(*) AS outside, min(r.${b}) AS lowest, max(r.${b}) AS highest
           FROM read_parquet([${paths.join(', ')}], filename = true, union_by_name = true, hive_partitioning = false) r JOIN _check_chunks c ON r.filename = c.path
           WHERE r.${b} < c.lo OR (c.hi IS NOT NULL AND r.${b} >= c.hi)
           GROUP BY ALL ORDER BY ALL`,
        );
        for (const r of bad.slice(0, EXAMPLES)) problems.push(`${r.part}: ${plural(num(r.outside), 'row')} of the chunk of blocks ${r.lo} to ${r.hi === null ? 'the head' : num(r.hi) - 1} lie outside it (${r.lowest} to ${r.highest})`);
      }
      if (problems.length === 0) return pass(`${plural(open.length, 'window')} in ${plural(chunks, 'chunk')}: covered once, rows within their chunk`);
      return fail(problems.slice(0, EXAMPLES).join('; '));
    },
  };
}

/**
 * A table with one row per block (key = the chain + the block column): every block from a partition's
 * first to its last committed block is there. Tables of events (transfers) have no such rule, as
 * most blocks carry none of them.
 */
function blocksContiguous(decl: StreamDecl): Check | undefined {
  const bc = decl.blockCursor;
  if (!bc || decl.key.length !== 2 || !decl.key.includes(bc.column)) return undefined;
  return {
    check: 'no gaps in block numbers',
    table: decl.table,
    async run(ctx) {
      const glob = parquetGlob(ctx, decl.table);
      if (!glob) return skip('no files');
      const b = ident(bc.column);
      const bad = await rows(
        ctx.conn,
        `WITH r AS (SELECT DISTINCT cf.part, t.${b} AS block
                    FROM read_parquet(${sqlString(glob)}, filename = true, union_by_name = true, hive_partitioning = false) t
                    JOIN _check_files cf ON cf.path = t.filename AND cf.tbl = ${sqlString(decl.table)}),
              g AS (SELECT part, block, lead(block) OVER (PARTITION BY part ORDER BY block) AS next FROM r)
         SELECT part, count(*) AS gaps, sum(next - block - 1) AS missing, min(block + 1) AS first_missing
         FROM g WHERE next > block + 1 GROUP BY part ORDER BY part`,
      );
      if (bad.length === 0) return pass('every block between the first and the last committed one is present');
      const ex = bad.slice(0, EXAMPLES).map((r) => `${r.part}: ${plural(num(r.missing), 'block')} missing in ${plural(num(r.gaps), 'gap')}, first ${r.first_missing}`);
      return fail(ex.join('; '));
    },
  };
}

/** date_trunc units and the spec's alignment, per metrics time interval. */
const INTERVAL_UNITS: Record<string, string> = { hour: 'hour', day: 'day', week: 'week', month: 'month' };

/**
 * Timestamps aligned as the spec defines: the hour; 0:00 UTC of the day; the Monday of the week;
 * the first day of the month. DuckDB's date_trunc('week') is the ISO week, starting Monday; the
 * warehouse's session zone is UTC.
 */
function metricsAligned(): Check {
  return {
    check: 'metric timestamps aligned',
    table: 'chain_metrics',
    async run({ conn, counts }) {
      if (!(counts.get('chain_metrics') ?? 0)) return skip('no rows');
      const cases = Object.entries(INTERVAL_UNITS).map(([i, u]) => `WHEN '${i}' THEN date_trunc('${u}', timestamp)`).join(' ');
      const bad = await rows(
        conn,
        `SELECT chain_id, metric, time_interval, count(*) AS n, min(timestamp)::VARCHAR AS first
         FROM chain_metrics WHERE timestamp IS DISTINCT FROM (CASE time_interval ${cases} END)
         GROUP BY ALL ORDER BY ALL`,
      );
      if (bad.length === 0) return pass('every point starts its hour, day (0:00 UTC), week (Monday) or month (1st)');
      return fail(bad.slice(0, EXAMPLES).map((r) => `${r.chain_id}/${r.metric}/${r.time_interval}: ${plural(num(r.n), 'point')} off, first ${r.first}`).join('; '));
    },
  };
}

/** One point per interval: from a series' first to its last point no interval is missing. */
function metricsComplete(): Check {
  return {
    check: 'one metric point per interval',
    table: 'chain_metrics',
    async run({ conn, counts }) {
      if (!(counts.get('chain_metrics') ?? 0)) return skip('no rows');
      const step = Object.entries(INTERVAL_UNITS).map(([i, u]) => `WHEN '${i}' THEN INTERVAL 1 ${u}`).join(' ');
      // Duplicated timestamps are the key check's business; gaps are counted between distinct points.
      const bad = await rows(
        conn,
        `WITH p AS (SELECT DISTINCT chain_id, metric, time_interval, timestamp FROM chain_metrics),
              g AS (SELECT *, lead(timestamp) OVER (PARTITION BY chain_id, metric, time_interval ORDER BY timestamp) AS next FROM p)
         SELECT chain_id, metric, time_interval, count(*) AS gaps, min(timestamp + CASE time_interval ${step} END)::VARCHAR AS first_missing
         FROM g WHERE next IS NOT NULL AND next <> timestamp + CASE time_interval ${step} END
         GROUP BY ALL ORDER BY ALL`,
      );
      const series = num((await one(conn, `SELECT count(DISTINCT (chain_id, metric, time_interval)) AS n FROM chain_metrics`)).n);
      if (bad.length === 0) return pass(`${series} series without a missing interval`);
      return fail(bad.slice(0, EXAMPLES).map((r) => `${r.chain_id}/${r.metric}/${r.time_interval}: ${plural(num(r.gaps), 'gap')}, first missing ${r.first_missing}`).join('; '));
    },
  };
}

/**
 * Each block's transactions in block_transactions number its tx_count in blocks, for the blocks
 * both tables cover: from the first block with a transaction listed to the newest one, which is
 * left out while a window is open (its listing may stop inside that block).
 */
function blockTransactionsVsBlocks(): Check {
  return {
    check: 'block transactions = blocks.tx_count',
    table: 'blocks, block_transactions',
    async run({ conn, counts, decls }) {
      if (!decls.some((d) => d.table === 'blocks') || !decls.some((d) => d.table === 'block_transactions')) return skip('no blocks or block_transactions table');
      if (!(counts.get('blocks') ?? 0) || !(counts.get('block_transactions') ?? 0)) return skip('blocks or block_transactions has no rows');
      const r = await one(
        conn,
        `WITH open AS (SELECT coalesce(bool_or(open_window), false) AS open FROM _check_state WHERE tbl = 'block_transactions'),
              bt AS (SELECT chain_id, block_number, count(*) AS n FROM block_transactions GROUP BY ALL),
              span AS (SELECT chain_id, min(block_number) AS lo, max(block_number) AS hi FROM bt GROUP BY ALL),
              cmp AS (SELECT b.chain_id, b.block_number, b.tx_count, coalesce(bt.n, 0) AS n
                      FROM blocks b JOIN span ON span.chain_id = b.chain_id AND b.block_number >= span.lo
                        AND (b.block_number < span.hi OR (b.block_number = span.hi AND NOT (SELECT open FROM open)))
                      LEFT JOIN bt ON bt.chain_id = b.chain_id AND bt.block_number = b.block_number)
         SELECT count(*) AS compared, count(*) FILTER (WHERE n <> tx_count) AS differ,
                string_agg(chain_id || ' block ' || block_number || ': tx_count ' || tx_count || ', listed ' || n, '; ' ORDER BY block_number) FILTER (WHERE n <> tx_count) AS examples
         FROM cmp`,
      );
      const compared = num(r.compared);
      if (compared === 0) return skip('no block in both tables');
      if (num(r.differ) === 0) return pass(`${plural(compared, 'block')} compared, all equal`);
      return fail(`${plural(compared, 'block')} compared, ${num(r.differ)} ${differ(num(r.differ))}, e.g. ${String(r.examples).split('; ').slice(0, EXAMPLES).join('; ')}`);
    },
  };
}

const BLOCK_VIEW_COLUMNS = ['chain_id', 'block_number', 'block_timestamp', 'tx_count'];

/**
 * The day-level txCount metric equals the transactions of that day's blocks, on days the lake
 * holds every block of: a day inside one unbroken run of block numbers, strictly after the day of
 * the run's first block and before the day of its last (those two may be partial).
 */
function txCountVsBlocks(): Check {
  return {
    check: 'txCount metric = block transactions per day',
    table: 'chain_metrics, blocks',
    async run({ conn, counts }) {
      const cols = (await rows(conn, `SELECT column_name FROM information_schema.columns WHERE table_name = 'blocks'`)).map((r) => r.column_name);
      if (!BLOCK_VIEW_COLUMNS.every((c) => cols.includes(c))) return skip('no blocks table in the lake');
      const blocks = num((await one(conn, `SELECT count(*) AS n FROM blocks`)).n);
      if (blocks === 0) return skip('the blocks table has no rows');
      if (!(counts.get('chain_metrics') ?? 0)) return skip('no chain_metrics rows');
      const r = await rows(
        conn,
        `WITH b AS (SELECT DISTINCT ON (chain_id, block_number) chain_id, block_number, block_timestamp, tx_count FROM blocks ORDER BY ALL),
              i AS (SELECT *, block_number - row_number() OVER (PARTITION BY chain_id ORDER BY block_number) AS run FROM b),
              runs AS (SELECT chain_id, run, date_trunc('day', min(block_timestamp)) AS d0, date_trunc('day', max(block_timestamp)) AS d1 FROM i GROUP BY ALL),
              days AS (SELECT i.chain_id, date_trunc('day', i.block_timestamp) AS day, sum(i.tx_count) AS txs
                       FROM i JOIN runs USING (chain_id, run)
                       WHERE date_trunc('day', i.block_timestamp) > runs.d0 AND date_trunc('day', i.block_timestamp) < runs.d1
                       GROUP BY ALL)
         SELECT days.chain_id, days.day::DATE::VARCHAR AS day, days.txs, m.value
         FROM days JOIN chain_metrics m ON m.chain_id = days.chain_id AND m.metric = 'txCount' AND m.time_interval = 'day' AND m.timestamp = days.day
         ORDER BY ALL`,
      );
      if (r.length === 0) return skip('no day both fully covered by blocks and in a txCount day series');
      const bad = r.filter((x) => num(x.txs) !== num(x.value));
      if (bad.length === 0) return pass(`${plural(r.length, 'day')} compared, all equal`);
      return fail(`${plural(r.length, 'day')} compared, ${bad.length} ${differ(bad.length)}, e.g. ${bad.slice(0, EXAMPLES).map((x) => `${x.chain_id} ${x.day}: metric ${x.value}, blocks ${x.txs}`).join('; ')}`);
    },
  };
}

export function checksFor(decls: readonly StreamDecl[] = LAKE_TABLES): Check[] {
  const out: Check[] = [];
  for (const d of decls) {
    out.push(keyUnique(d));
    const extra = [amountsExact(d), filesOwned(d), icebergInStep(d), rowsMatchState(d), blockRange(d), cursorsPossible(d), chunkRanges(d), blocksContiguous(d)];
    for (const c of extra) if (c) out.push(c);
    if (d.table === 'chain_metrics') out.push(metricsAligned(), metricsComplete(), txCountVsBlocks());
    if (d.table === 'block_transactions') out.push(blockTransactionsVsBlocks());
  }
  return out;
}

/**
 * Runs every check on a warehouse connection over `lake` (openWarehouse). A check that errors
 * fails with the error, and the others still run.
 */
export async function runChecks(conn: DuckDBConnection, lake: string, decls: readonly StreamDecl[] = LAKE_TABLES, o: { objects?: ObjectStore; uri?: string } = {}): Promise<CheckResult[]> {
  const store = new StateStore(lake);
  const uri = o.uri ?? lakeUri(store);
  const iceberg = icebergReader(o.objects ?? store.objects, uri);
  const results: CheckResult[] = [];
  let states: PartitionState[] = [];
  try {
    states = store.all();
  } catch (err) {
    results.push({ check: 'partition states readable', table: '_state', status: 'fail', detail: (err as Error).message });
  }
  const counts = new Map<string, number>();
  for (const d of decls) counts.set(d.table, num((await one(conn, `SELECT count(*) AS n FROM ${ident(d.table)}`)).n));
  const ctx: Context = { conn, lake: store.lake, decls, states, counts, iceberg, uri, objects: o.objects ?? store.objects };
  await loadStates(ctx);
  for (const c of checksFor(decls)) {
    let outcome: Outcome;
    try {
      outcome = await c.run(ctx);
    } catch (err) {
      outcome = fail(`could not run: ${(err as Error).message.split('\n')[0]}`);
    }
    results.push({ check: c.check, table: c.table, ...outcome });
  }
  return results;
}

function counts(results: CheckResult[]): { passed: number; failed: number; skipped: number } {
  const failed = results.filter((r) => r.status === 'fail').length;
  const skipped = results.filter((r) => r.status === 'skip').length;
  return { passed: results.length - failed - skipped, failed, skipped };
}

/** The results as one JSON document for scripts: the counts, then every check whole. */
export function checksJson(lake: string, results: CheckResult[]): object {
  return { lake, ...counts(results), checks: results.map(({ table, check, status, detail }) => ({ table, check, status, detail: bounded(detail, LINE_CHARS) })) };
}

/**
 * The results for a person: the failures and the counts (most checks pass, and most skips are of
 * tables the lake does not hold: hundreds of lines that bury a failure); `all`, every check.
 */
export function formatChecks(results: CheckResult[], o: { all?: boolean } = {}): string {
  const { passed, failed, skipped } = counts(results);
  const shown = o.all ? results : results.filter((r) => r.status === 'fail');
  // A failure's detail quotes values of the lake, as the services sent them.
  const table = textTable(['status', 'table', 'check', 'detail'], shown.map((r) => [r.status.toUpperCase(), r.table, r.check, inert(bounded(r.detail, LINE_CHARS))]));
  const summary = `${passed} passed, ${failed} failed, ${skipped} skipped${o.all || passed + skipped === 0 ? '' : ' (--all lists every check)'}`;
  return shown.length ? `${table}\n\n${summary}` : summary;
}
