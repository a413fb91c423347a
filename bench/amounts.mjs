#!/usr/bin/env node
// What the views' exact amounts cost (src/warehouse/amounts.ts): the same queries over a lake's
// erc_transfers through a view as it was before (`value` the files' DECIMAL(38,0), NULL over 38
// digits) and as it is (`value` the BIGNUM of `value_raw`), in one DuckDB, interleaved, the minimum
// of --repeat rounds: the machine's other work falls on both alike. Asserts nothing.
// Usage: node bench/amounts.mjs --lake data/bench-query/rerun [--repeat 5]
import { join } from 'node:path';
import { arg } from './common.mjs';
import { defaultQueryMemory } from '../dist/load/limits.js';

const LAKE = arg('lake', join('data', 'bench-query', 'rerun'));
const REPEAT = Number(arg('repeat', '5'));
const { DuckDBInstance } = await import('@duckdb/node-api');
const db = await DuckDBInstance.create(':memory:', { memory_limit: defaultQueryMemory() });
const c = await db.connect();
await c.run("SET TimeZone = 'UTC'");
await c.run('SET GLOBAL parquet_metadata_cache = true');
const files = `read_parquet('${join(LAKE, 'erc_transfers', '**', '*.parquet')}', union_by_name = true, hive_partitioning = false)`;
await c.run('CREATE SCHEMA was; CREATE SCHEMA now');
await c.run(`CREATE VIEW was.erc_transfers AS SELECT * FROM ${files}`);
await c.run(`CREATE VIEW now.erc_transfers AS SELECT * REPLACE (CAST(value_raw AS BIGNUM) AS value) FROM ${files}`);
const one = async (sql) => (await c.runAndReadAll(sql)).getRowObjectsJson()[0];
const { n } = await one('SELECT count(*) AS n FROM was.erc_transfers');
const { address } = await one('SELECT to_address AS address FROM was.erc_transfers GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1');

// [what, SQL as it was, SQL as it is (the same when not given)]
const QUERIES = [
  ['sum per token (was: sum(value_raw::BIGNUM), the one exact form then)', 'SELECT token_address, sum(value_raw::BIGNUM) FROM erc_transfers GROUP BY 1 ORDER BY 1', 'SELECT token_address, sum(value) FROM erc_transfers GROUP BY 1 ORDER BY 1'],
  ['sum per token as DOUBLE, CAST(value AS DOUBLE) (was: over 38 digits left out)', 'SELECT token_address, sum(CAST(value AS DOUBLE)) FROM erc_transfers GROUP BY 1 ORDER BY 1'],
  ['sum per token as DOUBLE, CAST(value_raw AS DOUBLE) (the fast approximate path)', 'SELECT token_address, sum(CAST(value_raw AS DOUBLE)) FROM erc_transfers GROUP BY 1 ORDER BY 1'],
  ['max per token (was: over 38 digits left out)', 'SELECT token_address, max(value) FROM erc_transfers GROUP BY 1 ORDER BY 1'],
  ['top 5 transfers by value (was: over 38 digits left out)', 'SELECT tx_hash, value FROM erc_transfers ORDER BY value DESC NULLS LAST LIMIT 5'],
  ['one receiver, SELECT *', `SELECT * FROM erc_transfers WHERE to_address = '${address}' ORDER BY block_number, log_index`],
  ['count per token (no amount read)', 'SELECT token_address, count(*) FROM erc_transfers GROUP BY 1 ORDER BY 1'],
];
const best = QUERIES.map(() => [Infinity, Infinity]);
for (let round = 0; round < REPEAT; round++) {
  for (const [i, [, was, now = was]] of QUERIES.entries()) {
    for (const [k, schema, sql] of [[0, 'was', was], [1, 'now', now]]) {
      await c.run(`SET search_path = '${schema}'`);
      const t0 = performance.now();
      await c.runAndReadAll(sql);
      best[i][k] = Math.min(best[i][k], (performance.now() - t0) / 1000);
    }
  }
}
console.log(`${LAKE}: ${Number(n).toLocaleString('en-US')} rows; the minimum of ${REPEAT} rounds, interleaved`);
console.log('| query | view as it was | exact view | ratio |\n|---|---:|---:|---:|');
for (const [i, [what]] of QUERIES.entries()) console.log(`| ${what} | ${best[i][0].toFixed(3)} s | ${best[i][1].toFixed(3)} s | ${(best[i][1] / best[i][0]).toFixed(2)}x |`);
c.closeSync();
db.closeSync();
