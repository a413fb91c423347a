#!/usr/bin/env node
// Would Arrow record batches beat the staged text lines as the hand-off from the transform to
// DuckDB? Rows/s of each way from the same transformed erc_transfers rows to zstd Parquet, in
// batches of 10,000 rows (a run's batches), one file per batch, as the pipeline writes them:
//   (c) today: staged lines -> a spool file -> DuckDB's CSV reader -> COPY (load/parquet.ts);
//   (b) Arrow: the values -> an Arrow record batch (apache-arrow) -> DuckDB data chunks through the
//       appender -> COPY with the same casts;
//   (b0) the same appender fed from the values directly, without Arrow: what (b) costs without it;
//   (a) Arrow IPC bytes read by DuckDB: @duckdb/node-api has no Arrow scan and the extension that
//       reads Arrow IPC (nanoarrow) is neither bundled nor fetchable here, so only the Arrow side
//       is timed (values -> record batch -> IPC bytes): a floor under what (a) would cost.
// Every way starts from the transform's values (the fields of each row before they are joined
// into a line) and includes what it does with them, so (c) includes joining the lines. The rows
// come from the simulator's world in this process, page by page through the transform; the
// Parquet files of (b) and (b0) are checked to hold the same rows as (c)'s. DuckDB's COPY alone
// (casts and zstd Parquet of rows already in DuckDB) is timed too: no way can be faster than its
// own part in JS plus that. Prints figures; asserts nothing.
//   node bench/arrow.mjs [--rows 200000] [--rounds 3]
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { makeVector, RecordBatch, Table, tableToIPC } from 'apache-arrow';
import { BOOLEAN, DOUBLE, INTEGER, VARCHAR } from '@duckdb/node-api';
import { buildWorld } from '../dist/simulator/world.js';
import { STREAM_BY_TABLE } from '../dist/streams/index.js';
import { FIELD, NULL, stageText, Transformer, unstage } from '../dist/transform/rows.js';
import { stagedColumns } from '../dist/transform/columns.js';
import { makeDir, Spool } from '../dist/load/spool.js';
import { ParquetWriter, PARQUET, duck } from '../dist/load/parquet.js';
import { sqlString } from '../dist/load/paths.js';
import { arrowData } from '../dist/warehouse/arrow.js';

const { values: args } = parseArgs({ options: { rows: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '3' } } });
const ROWS = Number(args.rows);
const ROUNDS = Number(args.rounds);
const BATCH = 10_000;
const CHUNK = 2048;

const decl = STREAM_BY_TABLE.get('erc_transfers');
const cols = stagedColumns(decl);

/** The transform's values of `rows` transfers of chain 43114, as the service would page them. */
function transformedRows(rows) {
  const small = buildWorld({ seed: 1, scale: 1 });
  const contracts = small.contractsOf('43114').map((c) => c.address);
  const perScale = contracts.reduce((n, c) => n + small.transferCountFor('43114', c), 0);
  const world = buildWorld({ seed: 1, scale: Math.ceil(rows / perScale) + 1 });
  const lines = [];
  for (const contract of contracts) {
    const tr = new Transformer(decl, { id: 'bench', path: {}, query: {}, values: { chainId: '43114' } });
    let page = [];
    for (const item of world.transfers('43114', contract)) {
      page.push(item);
      if (page.length === 100 || lines.length + page.length >= rows) {
        // Through JSON, as a page arrives.
        tr.push(JSON.parse(JSON.stringify(page)));
        for (const l of tr.takeLines()) lines.push(l);
        page = [];
        if (lines.length >= rows) break;
      }
    }
    if (lines.length >= rows) break;
  }
  // The fields of each row as the transform had them before joining them into its line.
  return lines.slice(0, rows).map((l) => {
    const named = unstage(cols, l);
    return cols.map((c) => named[c.name]);
  });
}

const DUCK_TYPE = { VARCHAR, INTEGER, DOUBLE, BOOLEAN };

/**
 * A batch's values as an Arrow record batch of the staged types (Utf8, Int32, Float64, Bool), built
 * as warehouse/arrow.ts builds a query's columns: straight into Arrow's buffers, about four times
 * faster for text than apache-arrow's builders (vectorFromArray).
 */
function recordBatch(batch) {
  return new RecordBatch(Object.fromEntries(cols.map((c, i) => [c.name, makeVector(arrowData(DUCK_TYPE[c.type], batch.length, (r) => batch[r][i]))])));
}

/** Columns as DuckDB's appender takes them. */
function duckColumns(batch) {
  return cols.map((_, i) => batch.map((r) => r[i]));
}

function arrowColumns(rb) {
  // Iterating an Arrow vector gives null for a NULL (its typed arrays would give 0).
  return cols.map((c) => [...rb.getChild(c.name)]);
}

/** The staged lines of a batch, as the transform joins them. */
function lines(batch) {
  return batch.map((r) => r.map((v, i) => (v === null || v === undefined ? NULL : cols[i].text ? stageText(v) : String(v))).join(FIELD));
}

async function main() {
  const t0 = performance.now();
  const rows = transformedRows(ROWS);
  const batches = [];
  for (let i = 0; i < rows.length; i += BATCH) batches.push(rows.slice(i, i + BATCH));
  console.log(`${rows.length.toLocaleString('en-US')} transformed erc_transfers rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const work = mkdtempSync(join(tmpdir(), 'chainlake-bench-arrow-'));
  const writer = await ParquetWriter.open(join(work, 'spill'));
  const conn = await (await duck()).connect();
  const select = cols.map((c) => c.select).join(', ');

  /**
   * Columns -> one Parquet file through the appender: the writer's own staging (a temporary
   * table filled chunk by chunk, as for rejects), then the casts of `write` in one COPY. Both are
   * private to the writer (TypeScript only), and the table is its connection's.
   */
  async function copyStaged(dir, k) {
    makeDir(dir);
    await writer['conn'].run(`COPY (SELECT ${select} FROM stage) TO ${sqlString(join(dir, `b${k}.parquet`))} (${PARQUET})`);
  }
  async function appendAndCopy(columns, n, dir, k) {
    await writer['stage']('stage', cols, columns, n);
    await copyStaged(dir, k);
  }

  const ways = {
    '(c) staged lines -> read_csv -> Parquet (today)': async (dir) => {
      for (const [k, b] of batches.entries()) {
        const spool = new Spool(join(dir, `b${k}.rows`));
        spool.append(lines(b));
        spool.close();
        await writer.write(decl, spool.path, b.length, dir, `b${k}`);
        spool.discard();
      }
    },
    '(b) Arrow batch -> appender -> Parquet': async (dir) => {
      for (const [k, b] of batches.entries()) {
        await appendAndCopy(arrowColumns(recordBatch(b)), b.length, dir, k);
      }
    },
    '(b0) values -> appender -> Parquet (no Arrow)': async (dir) => {
      for (const [k, b] of batches.entries()) {
        await appendAndCopy(duckColumns(b), b.length, dir, k);
      }
    },
    '(a) values -> Arrow batch -> IPC bytes (Arrow side only)': async () => {
      for (const b of batches) tableToIPC(new Table(recordBatch(b)), 'stream');
    },
    '(a) values -> Arrow batch, without IPC (Arrow side only)': async () => {
      for (const b of batches) recordBatch(b);
    },
    // DuckDB's part of every way: the casts and the zstd Parquet of rows already in DuckDB.
    '(-) COPY alone, from rows already in DuckDB': async (dir) => {
      let copying = 0;
      for (const [k, b] of batches.entries()) {
        await writer['stage']('stage', cols, duckColumns(b), b.length);
        const t = performance.now();
        await copyStaged(dir, k);
        copying += performance.now() - t;
      }
      return copying / 1000;
    },
  };

  const seconds = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, run] of Object.entries(ways)) {
        const dir = join(work, `r${round}-${name.slice(1, name.indexOf(')'))}`);
        const t = performance.now();
        const own = await run(dir);
        seconds[name].push(own ?? (performance.now() - t) / 1000);
      }
    }
    // The three ways that write Parquet must write the same rows.
    const read = (way) => `SELECT * FROM read_parquet(${sqlString(join(work, `r0-${way}`, '**', '*.parquet'))})`;
    const same = [];
    for (const way of ['b', 'b0']) {
      const r = await conn.runAndReadAll(`SELECT (SELECT count(*) FROM (${read('c')} EXCEPT ALL ${read(way)})) + (SELECT count(*) FROM (${read(way)} EXCEPT ALL ${read('c')})) AS diff, (SELECT count(*) FROM (${read(way)})) AS n`);
      const [diff, n] = r.getRows()[0].map(Number);
      same.push(`(${way}): ${diff === 0 && n === rows.length ? 'yes' : `NO (${diff} rows differ, ${n} rows)`}`);
    }
    const fmt = (n) => Math.round(n).toLocaleString('en-US');
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(`\nArrow as the transform -> load hand-off (${cpus()[0]?.model ?? 'cpu'} x${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version})`);
    console.log(`  ${fmt(rows.length)} rows in ${batches.length} batches of ${fmt(BATCH)}, zstd Parquet, median of ${ROUNDS} rounds (DuckDB chunks of ${CHUNK} rows)`);
    const today = median(seconds[Object.keys(ways)[0]]);
    for (const [name, s] of Object.entries(seconds)) {
      const m = median(s);
      console.log(`  ${name.padEnd(58)} ${fmt(rows.length / m).padStart(9)} rows/s  (${(today / m).toFixed(2)}x today)`);
    }
    // The most favourable case for (a): DuckDB scanning the record batches in place, for nothing.
    const best = median(seconds[Object.keys(ways)[4]]) + median(seconds[Object.keys(ways)[5]]);
    console.log('  (a) Arrow -> DuckDB itself: no Arrow reader in @duckdb/node-api or in the bundled extensions;');
    console.log(`      at best (the batch without IPC + COPY alone, DuckDB reading Arrow for free) ${fmt(rows.length / best)} rows/s  (${(today / best).toFixed(2)}x today)`);
    console.log(`  same rows in Parquet as (c): ${same.join(', ')}`);
  } finally {
    conn.closeSync();
    writer.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
