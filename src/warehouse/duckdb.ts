// DuckDB for the modules `chainlake query` loads, and the database a query over a lake runs in.
// Its values come from load/duckdb.ts (the package by require, without the export scan).
import type * as DuckDB from '@duckdb/node-api';
import { duckdb } from '../load/duckdb.js';
import { engineOptions, querySettings, type EngineOptions } from '../load/limits.js';
import { RunError } from '../errors.js';

export const DuckDBInstance = duckdb.DuckDBInstance;
export type DuckDBInstance = DuckDB.DuckDBInstance;
export const DuckDBTypeId = duckdb.DuckDBTypeId;
export type DuckDBTypeId = DuckDB.DuckDBTypeId;
export type { DuckDBConnection, DuckDBResult } from '@duckdb/node-api';

/** An in-memory DuckDB for queries over a lake, its memory, threads and spill folder from `engine` over the environment (load/limits.ts). */
export async function queryDatabase(engine: EngineOptions = {}): Promise<DuckDBInstance> {
  const db = await DuckDBInstance.create(':memory:', querySettings(engineOptions(engine)));
  const conn = await db.connect();
  try {
    // Footers read once per instance, not at each bind and scan: the lake's files never change in
    // place (a new name for every write), so a cached footer cannot go stale. Set here, not at
    // create: the Parquet reader that owns the setting loads with the first use.
    await conn.run('SET GLOBAL parquet_metadata_cache = true');
  } finally {
    conn.closeSync();
  }
  return db;
}

/**
 * The one connection to `db`, which closes `db` with it: nothing else holds that database, and
 * until it is closed (not merely collected) a warehouse file it attached stays locked for this
 * process, so that another program could not open it for writing after a query in a long-lived
 * process (the CLI's main called in-process, a test).
 */
export async function soleConnection(db: DuckDBInstance): Promise<DuckDB.DuckDBConnection> {
  const conn = await connectWarehouse(db);
  const close = conn.closeSync.bind(conn);
  conn.closeSync = () => {
    close();
    db.closeSync();
  };
  return conn;
}

/** A connection to a lake's database (the zone is a setting of each connection). */
export async function connectWarehouse(db: DuckDBInstance): Promise<DuckDB.DuckDBConnection> {
  const conn = await db.connect();
  // Timestamps print in UTC whatever the machine's zone, as the services define them.
  await conn.run("SET TimeZone = 'UTC'");
  return conn;
}

/**
 * Throws when a streamed result that ended (an empty chunk) ended because its query failed
 * midway: @duckdb/node-api's fetch returns the same empty chunk for both and drops DuckDB's error
 * (its bindings never ask for it), but the failed result's return type is INVALID, where a
 * finished one keeps its own. `rows` were read before it; `sql`, when given, is the SQL whose
 * result it was: when that is one statement, it is run again (every column computed, its rows
 * only counted: bounded memory) for DuckDB's reason, which is otherwise lost.
 */
export async function checkStreamEnd(conn: DuckDB.DuckDBConnection, result: DuckDB.DuckDBResult, rows: number, sql?: string): Promise<void> {
  if (result.returnType !== duckdb.ResultReturnType.INVALID) return;
  let reason = "DuckDB's Node client does not pass on the reason (run that statement alone to see it)";
  // Only a query of one statement is run again: the others before it have run already.
  if (sql !== undefined && (await conn.extractStatements(sql)).count === 1) {
    try {
      await conn.run(`SELECT count(*) FROM (${sql.trim().replace(/;+$/, '')}\n) AS chainlake_q WHERE hash(chainlake_q) IS NOT NULL`);
      reason = 'DuckDB gave no reason, and the query ran to its end when run again';
    } catch (err) {
      reason = (err as Error).message.split('\n')[0]!;
    }
  }
  throw new RunError(`the query failed after ${rows} rows of its result had been read, and what was read is not the whole result: ${reason}`);
}
