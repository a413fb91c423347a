// The library (`import { openLake } from 'chainlake'`): a lake opened from TypeScript, its query
// results as Apache Arrow tables with the same types as `query --format arrow` (warehouse/arrow.ts).
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { Table, type RecordBatch, type TypeMap } from 'apache-arrow';
import { RunError, UsageError } from '../errors.js';
import { LAKE_TABLE_NAMES, type LakeTables } from '../tables.js';
import { existingLake } from '../state/location.js';
import { arrowResult } from './arrow.js';
import type { EngineOptions } from '../load/limits.js';
import { bindViews, connectWarehouse, filesFor, KeptCatalogue, lakeDatabase, prunedViews, viewSql, viewsFor, type LakeDatabaseOptions } from './views.js';
import { currentRows, ROWS_DB, rowsFileOf } from './rows.js';
import { queryError, VIEW_NAMES } from './names.js';

const TABLES: ReadonlySet<string> = new Set(LAKE_TABLE_NAMES);

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
 * system's temporary folder), and the warehouse file to read rows from. A table's view is made when
 * a query first names it, and reads what the lake commits then: a table read from the warehouse
 * file's rows is as it was at that query; one read from Parquet files sees files committed later. A path that is missing or holds no lake (no partition state and no run
 * report) rejects the open: its every table would read as empty.
 */
export async function openLake(path: string, options: LakeOptions = {}): Promise<Lake> {
  const { warehouse, ...engine } = options;
  const lake = existingLake(path, 'openLake:');
  const rows = rowsFileOf(lake, warehouse, 'openLake: warehouse');
  // No view yet (a file named is checked now): a lake of many tables and files opens as fast as DuckDB.
  return new OpenLake(path, lake, await lakeDatabase(lake, engine, { only: new Set(), ...rows }), rows);
}

class OpenLake implements Lake {
  private closed = false;

  /** The views made so far, and the tables of them read from Parquet (and of those, the ones read without lining up by name). */
  private readonly bound = new Set<string>();
  private readonly parquet = new Set<string>();
  private readonly oneSchema = new Set<string>();
  /** Views are made one query at a time: two queries at once must not both make the same view. */
  private binding: Promise<unknown> = Promise.resolve();
  /**
   * Whether the warehouse file is attached as ROWS_DB, once asked: only currentRows attaches or
   * detaches it, so it is asked again after that alone (asking cost each query a statement).
   */
  private rowsAttached?: boolean;
  /** The warehouse file's blooms, attached by the first query that asks for a hash and kept. */
  private readonly catalogue = new KeptCatalogue();

  constructor(
    readonly path: string,
    private readonly lake: string,
    private readonly db: DuckDBInstance,
    private readonly rows: Pick<LakeDatabaseOptions, 'rowsFrom' | 'rowsNamed'>,
  ) {}

  /**
   * Makes the views `sql` may read (viewsFor) that are not made yet: a table read from the
   * warehouse file's rows, its view of them; one read from Parquet of which `sql` can need only
   * some files (warehouse/prune.ts), none (returned, for a TEMP view of those files alone: its
   * other files' footers stay unread); any other, its view of every file, each footer read once.
   */
  private bind(conn: DuckDBConnection, sql: string): Promise<Map<string, string[]>> {
    const made = this.binding.then(async () => {
      const names = viewsFor(sql) ?? new Set(VIEW_NAMES);
      const fresh = [...names].filter((t) => !this.bound.has(t) && !this.parquet.has(t));
      const tables = fresh.filter((t) => TABLES.has(t));
      if (this.rows.rowsFrom && tables.length) {
        await this.catalogue.release(conn);
        this.rowsAttached = undefined;
      }
      const rows = this.rows.rowsFrom && tables.length ? await currentRows(conn, this.lake, this.rows.rowsFrom, tables, this.rows.rowsNamed) : new Set<string>();
      for (const v of rows.size ? await viewSql(conn, this.lake, rows, undefined, rows) : []) await conn.run(v);
      for (const t of fresh) (rows.has(t) ? this.bound : this.parquet).add(t);
      // The bounds from the manifests (decoded once a version); the blooms of the warehouse file,
      // where there is one, for a query that asks for a hash.
      const file = this.rows.rowsFrom;
      const attached = async () => (this.rowsAttached ??= Number((await conn.runAndReadAll(`SELECT count(*) FROM duckdb_databases() WHERE database_name = '${ROWS_DB}'`)).getRows()[0]![0]) > 0);
      const pruned = await filesFor(conn, this.lake, sql, this.parquet, file ? { file, attached: await attached(), manifests: true, kept: this.catalogue } : undefined);
      const whole = new Set([...this.parquet].filter((t) => names.has(t) && !this.bound.has(t) && !pruned.has(t)));
      if (whole.size) {
        const views = await bindViews(conn, this.lake, { only: whole, lineUpOnce: true });
        for (const t of whole) this.bound.add(t);
        for (const t of views.oneSchema ?? []) this.oneSchema.add(t);
      }
      return pruned;
    });
    // A query whose views failed (a file unreadable) fails; the next one tries them again.
    this.binding = made.catch(() => undefined);
    return made;
  }

  // A connection per query: a second streaming query on one connection ends the first one's
  // result early without an error, so two queries at once (Promise.all) would lose rows. Its
  // tables read from Parquet are, for `sql`, views of only the files it can need (its own TEMP
  // views: warehouse/prune.ts), read as the lake's files are now.
  private async connect(sql: string): Promise<DuckDBConnection> {
    if (this.closed) throw new UsageError(`lake ${this.path}: closed`);
    const conn = await connectWarehouse(this.db);
    try {
      const pruned = await this.bind(conn, sql);
      for (const v of await prunedViews(conn, this.lake, pruned, this.oneSchema)) await conn.run(v);
    } catch (err) {
      conn.closeSync();
      throw err;
    }
    return conn;
  }

  async query<T extends TypeMap = any>(sql: string): Promise<Table<T>> {
    checkSql('lake.query', sql);
    try {
      const conn = await this.connect(sql);
      try {
        const result = await arrowResult(conn, sql);
        const batches: RecordBatch[] = [];
        for await (const b of result.batches()) batches.push(b);
        return new Table(result.schema, batches) as Table<T>;
      } finally {
        conn.closeSync();
      }
    } catch (err) {
      throw asUsage('lake.query', err);
    }
  }

  async *batches<T extends TypeMap = any>(sql: string): AsyncGenerator<RecordBatch<T>> {
    checkSql('lake.batches', sql);
    // A reader that stops early returns the generator (no error reaches this catch): only
    // DuckDB's and the lake's errors do.
    try {
      const conn = await this.connect(sql);
      try {
        yield* (await arrowResult(conn, sql)).batches() as AsyncGenerator<RecordBatch<T>>;
      } finally {
        conn.closeSync();
      }
    } catch (err) {
      throw asUsage('lake.batches', err);
    }
  }

  async table<K extends keyof LakeTables>(name: K): Promise<Table<LakeTables[K]>> {
    if (!TABLES.has(name)) throw new UsageError(`lake.table: ${JSON.stringify(name)} is not a table of the lake (${LAKE_TABLE_NAMES.join(', ')})`);
    return this.query<LakeTables[K]>(`SELECT * FROM "${name}"`);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.closeSync();
  }
}

/** SQL with nothing in it is refused as the CLI refuses it (DuckDB's own error says only "native callback"). */
function checkSql(where: string, sql: string): void {
  if (typeof sql !== 'string' || !sql.trim()) throw new UsageError(`${where}: the SQL is empty`);
}

/** DuckDB's error of a query (bad SQL, an unknown table or column) as the library's own, as the CLI says it. */
function asUsage(where: string, err: unknown): Error {
  if (err instanceof UsageError || err instanceof RunError) return err;
  return new UsageError(`${where}: ${queryError(err instanceof Error ? err.message : String(err), VIEW_NAMES)}`);
}
