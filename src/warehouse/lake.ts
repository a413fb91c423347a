// The library (`import { openLake } from 'chainlake'`): a lake opened from TypeScript, its query
// results as Apache Arrow tables with the same types as `query --format arrow` (warehouse/arrow.ts).
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { Table, type RecordBatch, type TypeMap } from 'apache-arrow';
import { UsageError } from '../errors.js';
import type { LakeTables } from '../tables.js';
import { existingLake } from '../state/cache.js';
import { arrowResult } from './arrow.js';
import type { EngineOptions } from '../load/limits.js';
import { connectWarehouse, LAKE_TABLES, prunedViews, readLakeDatabase, type LakeDatabase } from './views.js';
import { rowsFileOf } from './rows.js';

export interface Lake {
  /** The lake folder, as given. */
  readonly path: string;
  /** The result of `sql` (its last statement) as one Arrow table, held in memory. */
  query<T extends TypeMap = any>(sql: string): Promise<Table<T>>;
  /** The result of `sql` batch by batch (up to 2,048 rows each), for results too big to hold. */
  batches<T extends TypeMap = any>(sql: string): AsyncGenerator<RecordBatch<T>>;
  /** A whole table of the lake, typed from the stream declarations (src/tables.ts). */
  table<K extends keyof LakeTables>(name: K): Promise<Table<LakeTables[K]>>;
  /** Closes the lake's DuckDB; the lake's files are only read, never changed. */
  close(): void;
}

export interface LakeOptions extends EngineOptions {
  /**
   * The warehouse file whose copies of the tables' rows (`chainlake warehouse --rows`) to read
   * where they hold exactly the lake's committed files (default: `<lake>.warehouse.duckdb` beside
   * the lake folder; false: the Parquet files only). A table whose copy is stale or absent reads its files. A file
   * named that is missing or is not a warehouse chainlake wrote rejects the open, naming it.
   */
  warehouse?: string | false;
}

/**
 * Opens the lake at `path` (a folder `chainlake run` writes) for reading: every table is a view of
 * its name. `options`: DuckDB's memory limit, threads and spill folder, over CHAINLAKE_DUCKDB_*
 * (src/load/limits.ts; by default a quarter of the machine's memory, at most 2 GiB, spilling to the
 * system's temporary folder), and the warehouse file to read rows from. Tables read from the
 * warehouse file's rows are as they were when the lake was opened; those read from Parquet files
 * see files committed later. A path that is missing or holds no lake (no partition state and no run
 * report) rejects the open: its every table would read as empty.
 */
export async function openLake(path: string, options: LakeOptions = {}): Promise<Lake> {
  const { warehouse, ...engine } = options;
  const lake = existingLake(path, 'openLake:');
  return new OpenLake(path, lake, await readLakeDatabase(lake, engine, { lineUpOnce: true, ...rowsFileOf(lake, warehouse, 'openLake: warehouse') }));
}

class OpenLake implements Lake {
  private closed = false;

  private readonly db: DuckDBInstance;

  constructor(
    readonly path: string,
    private readonly lake: string,
    private readonly views: LakeDatabase,
  ) {
    this.db = views.db;
  }

  // A connection per query: a second streaming query on one connection ends the first one's
  // result early without an error, so two queries at once (Promise.all) would lose rows. Its
  // tables read from Parquet are, for `sql`, views of only the files it can need (its own TEMP
  // views: warehouse/prune.ts), read as the lake's files are now.
  private async connect(sql: string): Promise<DuckDBConnection> {
    if (this.closed) throw new UsageError(`lake ${this.path}: closed`);
    const conn = await connectWarehouse(this.db);
    try {
      for (const v of await prunedViews(conn, this.lake, sql, this.views.parquet, this.views.oneSchema)) await conn.run(v);
    } catch (err) {
      conn.closeSync();
      throw err;
    }
    return conn;
  }

  async query<T extends TypeMap = any>(sql: string): Promise<Table<T>> {
    const conn = await this.connect(sql);
    try {
      const result = await arrowResult(conn, sql);
      const batches: RecordBatch[] = [];
      for await (const b of result.batches()) batches.push(b);
      return new Table(result.schema, batches) as Table<T>;
    } finally {
      conn.closeSync();
    }
  }

  async *batches<T extends TypeMap = any>(sql: string): AsyncGenerator<RecordBatch<T>> {
    const conn = await this.connect(sql);
    try {
      yield* (await arrowResult(conn, sql)).batches() as AsyncGenerator<RecordBatch<T>>;
    } finally {
      conn.closeSync();
    }
  }

  async table<K extends keyof LakeTables>(name: K): Promise<Table<LakeTables[K]>> {
    if (!LAKE_TABLES.some((d) => d.table === name)) throw new UsageError(`lake.table: ${JSON.stringify(name)} is not a table of the lake (${LAKE_TABLES.map((d) => d.table).join(', ')})`);
    return this.query<LakeTables[K]>(`SELECT * FROM "${name}"`);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.closeSync();
  }
}
