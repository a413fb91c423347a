#!/usr/bin/env node
// What a query's result costs as Arrow (warehouse/arrow.ts) next to DuckDB producing it alone: a
// result of mixed types (BIGINT, DOUBLE, DECIMAL(38,0) with NULLs, VARCHAR of 42 characters,
// TIMESTAMPTZ with microseconds) built with range(), timed as
//   duckdb:  the same query on the lake's own DuckDB set-up, every chunk fetched, nothing converted;
//   library: openLake(lake).query(sql), the whole result as one Arrow table;
//   cli:     `chainlake query --format arrow` of it to /dev/null, a process each, with its peak RSS
//            (GNU time), start-up included; and of the same with LIMIT 0, start-up alone.
// Minimum of the rounds. Prints figures; asserts nothing.
//   node bench/arrow-query.mjs [--rows 1000000] [--rounds 3]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openLake } from '../dist/index.js';
import { connectWarehouse, lakeDatabase } from '../dist/warehouse/views.js';

const { values: args } = parseArgs({ options: { rows: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '3' } } });
const ROWS = Number(args.rows);
const ROUNDS = Number(args.rounds);
const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'chainlake.js');

const SQL = `SELECT range AS id, range * 1.5 AS ratio,
    CASE WHEN range % 97 = 0 THEN NULL ELSE CAST(range::HUGEINT * 12345678901234567890123456789 AS DECIMAL(38,0)) END AS amount,
    printf('0x%040x', range * 2654435761) AS address,
    TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_microseconds(range * 1234567) AS at
  FROM range(${ROWS})`;

/** The least seconds each of `fs` takes, the rounds interleaved so that all see the same load. */
async function best(...fs) {
  const min = fs.map(() => Infinity);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [k, f] of fs.entries()) {
      const t0 = performance.now();
      await f();
      min[k] = Math.min(min[k], (performance.now() - t0) / 1000);
    }
  }
  return min;
}

async function main() {
  const lake = mkdtempSync(join(tmpdir(), 'chainlake-bench-arrow-query-'));
  try {
    const db = await lakeDatabase(lake);
    const l = await openLake(lake);
    const [duck, library] = await best(
      async () => {
        const conn = await connectWarehouse(db);
        const result = await conn.stream(SQL);
        let rows = 0;
        for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) rows += chunk.rowCount;
        conn.closeSync();
        if (rows !== ROWS) throw new Error(`duckdb: ${rows} rows`);
      },
      async () => {
        const t = await l.query(SQL);
        if (t.numRows !== ROWS) throw new Error(`library: ${t.numRows} rows`);
      },
    );
    l.close();
    db.closeSync();

    const time = existsSync('/usr/bin/time');
    /** `query --format arrow` of `sql` to /dev/null: the least seconds and peak RSS (KB) of the rounds. */
    const cli = (sql) => {
      let s = Infinity;
      let kb = Infinity;
      for (let r = 0; r < ROUNDS; r++) {
        const args = [process.execPath, BIN, 'query', '--lake', lake, '--format', 'arrow', sql];
        const p = time ? spawnSync('/usr/bin/time', ['-f', '%e %M', ...args], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' }) : { status: 1, stderr: 'no /usr/bin/time' };
        if (p.status !== 0) throw new Error(`cli: ${p.stderr}`);
        const [e, m] = p.stderr.trim().split('\n').at(-1).split(' ').map(Number);
        s = Math.min(s, e);
        kb = Math.min(kb, m);
      }
      return [s, kb];
    };
    const [whole, rss] = time ? cli(SQL) : [NaN, NaN];
    // The same command with no row to write: start-up, DuckDB and the Arrow writer's set-up.
    const [empty, emptyRss] = time ? cli(`SELECT * FROM (${SQL}) LIMIT 0`) : [NaN, NaN];

    const n = ROWS.toLocaleString('en-US');
    console.log(`${n} rows (BIGINT, DOUBLE, DECIMAL(38,0), VARCHAR(42), TIMESTAMPTZ), min of ${ROUNDS}:`);
    console.log(`  DuckDB alone (chunks fetched, not converted): ${duck.toFixed(3)} s`);
    console.log(`  library query -> Arrow table:                 ${library.toFixed(3)} s (${(library / duck).toFixed(1)}x DuckDB)`);
    if (!time) console.log('  query --format arrow: no /usr/bin/time here');
    else {
      console.log(`  query --format arrow > /dev/null:             ${whole.toFixed(2)} s, peak RSS ${(rss / 1024).toFixed(0)} MB`);
      console.log(`  the same, LIMIT 0 (start-up):                 ${empty.toFixed(2)} s, peak RSS ${(emptyRss / 1024).toFixed(0)} MB`);
    }
  } finally {
    rmSync(lake, { recursive: true, force: true });
  }
}

await main();
