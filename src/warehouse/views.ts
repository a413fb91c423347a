// DuckDB over the lake: every table is a view of its name over its committed Parquet files, so SQL
// (bundled in sql/ or typed by a user) reads views, never paths. A table with no files yet is an
// empty view of the declared columns, so queries do not break on a fresh lake.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { connectWarehouse, queryDatabase, soleConnection, type DuckDBConnection, type DuckDBInstance } from './duckdb.js';
import { STREAMS } from '../streams/index.js';
import type { StreamDecl } from '../decl/stream.js';
import { listParquet, sqlString } from '../load/paths.js';
import { exactSelect, viewColumns } from './amounts.js';
import { committedBefore, REJECTS, RUNS, STATE, StateStore } from '../state/store.js';
import { OPERATIONS } from '../decl/operations.js';
import type { EngineOptions } from '../load/limits.js';
import { committedFiles, currentRows, ROWS_DB, rowsView } from './rows.js';
import type { BloomProbe, Described } from './prune.js';
import { VIEW_NAMES, viewsFor } from './names.js';
import { remember } from './kept.js';

export { connectWarehouse, viewsFor };

/** Every table of a lake: the streams' and `operations` (written by `chainlake export-op`). */
export const LAKE_TABLES: readonly StreamDecl[] = [...STREAMS, OPERATIONS];

/** Every Parquet file under `dir`, as a glob for read_parquet. */
function parquetGlob(dir: string): string {
  return sqlString(join(dir, '**', '*.parquet'));
}

function hasParquet(dir: string): boolean {
  return existsSync(dir) && listParquet(dir).length > 0;
}

/** No rows, the declared columns as the views give them: a table before its first files (and its types, for src/tables.ts). */
export function emptySelect(decl: StreamDecl): string {
  return `SELECT ${viewColumns(decl).map(([n, t]) => `CAST(NULL AS ${t}) AS "${n}"`).join(', ')} WHERE false`;
}

/**
 * What a table's view reads when it reads Parquet: `read_parquet(...)` of its committed files
 * (lined up by name unless `oneSchema`), or none when it has no files.
 */
export function filesOf(lake: string, decl: StreamDecl, oneSchema = false, store = stateStoreOf(lake), some?: readonly string[]): string | undefined {
  const root = resolve(lake);
  const byName = oneSchema ? '' : 'union_by_name = true, ';
  // Pruned for a query (warehouse/prune.ts): only the files it can need.
  if (some) return `read_parquet([${some.map((f) => sqlString(join(root, f))).join(', ')}], ${byName}hive_partitioning = false)`;
  const dir = join(root, decl.table);
  if (!hasParquet(dir)) return undefined;
  // A table whose folder also holds files kept for older Iceberg snapshots (a retention) reads
  // the files its states list; otherwise its folder, which holds those alone.
  const mine = store?.statesOf(decl.table) ?? [];
  const files = mine.some((s) => s.retained?.length) ? mine.flatMap(committedBefore).map((f) => join(root, f)) : undefined;
  const from = files ? (files.length ? `[${files.map(sqlString).join(', ')}]` : undefined) : parquetGlob(dir);
  return from ? `read_parquet(${from}, ${byName}hive_partitioning = false)` : undefined;
}

function stateStoreOf(lake: string): StateStore | undefined {
  const root = resolve(lake);
  return existsSync(join(root, STATE)) ? new StateStore(root) : undefined;
}

/**
 * The tables of the lake whose Parquet files all have one schema (the same columns, by name and
 * type), read from every footer once: their views need not read every footer again at each query
 * to line columns up by name (union_by_name), which a table with files from before a column was
 * declared does.
 */
export async function oneSchemaTables(conn: DuckDBConnection, lake: string, only?: Set<string>): Promise<Set<string>> {
  const root = resolve(lake);
  const dirs = LAKE_TABLES.filter((d) => (!only || only.has(d.table)) && hasParquet(join(root, d.table))).map((d) => join(root, d.table));
  if (!dirs.length) return new Set();
  // One query over every table's files (a query a table cost more than the reading).
  const r = await conn.runAndReadAll(
    `SELECT split_part(substr(file_name, length(${sqlString(root)}) + 2), '/', 1) AS t, count(DISTINCT sig) AS n FROM (SELECT file_name, string_agg(concat_ws(' ', name, type, converted_type, logical_type, scale, precision, repetition_type), ',' ORDER BY name) AS sig FROM parquet_schema([${dirs.map(parquetGlob).join(', ')}]) GROUP BY file_name) GROUP BY t`,
  );
  return new Set(r.getRowObjects().filter((row) => Number(row.n) === 1).map((row) => String(row.t)));
}

/**
 * The statements that make the lake's views (`only`: those of these names), each amount as its
 * exact BIGNUM (warehouse/amounts.ts; `conn` reads the columns each view's source has).
 * `oneSchema`: tables known to have one schema in all their files (oneSchemaTables), read without
 * union_by_name. `rows`: tables read from the copy of their rows in the warehouse file attached as ROWS_DB.
 */
export async function viewSql(conn: DuckDBConnection, lake: string, only?: Set<string>, oneSchema?: Set<string>, rows?: Set<string>, pruned?: ReadonlyMap<string, string[]>): Promise<string[]> {
  const root = resolve(lake);
  const out: string[] = [];
  const store = stateStoreOf(root);
  for (const decl of LAKE_TABLES) {
    if (only && !only.has(decl.table)) continue;
    if (rows?.has(decl.table)) {
      out.push(await rowsView(conn, decl, ROWS_DB));
      continue;
    }
    const some = pruned?.get(decl.table);
    const from = filesOf(root, decl, oneSchema?.has(decl.table), store, some);
    out.push(`CREATE OR REPLACE VIEW "${decl.table}" AS ${from ? await (some ? prunedSelect(conn, decl, from) : exactSelect(conn, decl, from)) : emptySelect(decl)}`);
  }
  const rejects = join(root, REJECTS);
  const has = sourcesOf(root);
  if (!only || only.has('_rejects')) {
    out.push(
      has.rejects
        ? `CREATE OR REPLACE VIEW _rejects AS SELECT * FROM read_parquet(${parquetGlob(rejects)}, union_by_name = true, hive_partitioning = false)`
        : `CREATE OR REPLACE VIEW _rejects AS SELECT NULL::VARCHAR AS table_name, NULL::VARCHAR AS partition_id, NULL::VARCHAR AS run_id, NULL::VARCHAR AS reason, NULL::VARCHAR AS raw_json, NULL::TIMESTAMPTZ AS rejected_at WHERE false`,
    );
  }
  const runs = join(root, RUNS);
  if (!only || only.has('_runs')) {
    out.push(
      has.runs
        ? `CREATE OR REPLACE VIEW _runs AS SELECT * FROM read_json(${sqlString(join(runs, '*.json'))}, union_by_name = true)`
        : `CREATE OR REPLACE VIEW _runs AS SELECT NULL::VARCHAR AS runId, NULL::VARCHAR AS pipeline, NULL::VARCHAR AS status WHERE false`,
    );
  }
  return out;
}

/**
 * The select of a view over some files (exactSelect), kept by what it reads: a file's columns
 * never change (a new name for every write), so the same files give the same select, and a
 * process that runs the same selective query again (the library) skips the binding of its files
 * that reading their columns costs.
 */
const prunedSelects = new Map<string, string>();
const PRUNED_KEPT = 64;

async function prunedSelect(conn: DuckDBConnection, decl: StreamDecl, from: string): Promise<string> {
  const key = `${decl.table}\n${from}`;
  const known = prunedSelects.get(key);
  if (known !== undefined) return known;
  return remember(prunedSelects, key, await exactSelect(conn, decl, from), PRUNED_KEPT);
}

/**
 * What each of a lake's views (viewSql) is made from, as a digest a view (by its name), by which a
 * views-only warehouse file knows which of its views are current: the Parquet files in a table's
 * folder or `_rejects` (a view reads its folder, so new files show without a rewrite, but whether
 * they share one schema, and so how the view reads them and which columns it has, follows the
 * files), the files a table's states commit (a view reads those where the folder keeps older
 * snapshots' files too), and whether `_runs` has reports (their view reads every one, so new
 * reports need no rewrite).
 */
export function viewInputs(lake: string): Record<string, string> {
  const root = resolve(lake);
  const store = stateStoreOf(root);
  const files = (dir: string) => (existsSync(join(root, dir)) ? listParquet(join(root, dir)).map((f) => f.slice(root.length)) : []);
  const digest = (x: unknown) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 16);
  const out: Record<string, string> = {};
  for (const d of LAKE_TABLES) out[d.table] = digest([files(d.table), store?.statesOf(d.table).flatMap(committedBefore).sort() ?? []]);
  out[REJECTS] = digest(files(REJECTS));
  out[RUNS] = digest(sourcesOf(root).runs);
  return out;
}

/** Whether the lake has files for `_rejects` and `_runs` (their views are empty placeholders until it has). */
export function sourcesOf(lake: string): { rejects: boolean; runs: boolean } {
  const root = resolve(lake);
  const runs = join(root, RUNS);
  // A run killed between making the folder and writing its first report leaves it without one.
  return { rejects: hasParquet(join(root, REJECTS)), runs: existsSync(runs) && readdirSync(runs).some((f) => f.endsWith('.json')) };
}

export interface LakeDatabaseOptions {
  /** Only the views of these names (viewsFor). */
  only?: Set<string>;
  /**
   * Every footer read at once, so that tables of one schema need no lining up by name at each
   * query (the library, whose lake serves many queries; a one-query process would read them twice).
   */
  lineUpOnce?: boolean;
  /** A warehouse file whose copies of tables' rows to read where they are current (warehouse/rows.ts). */
  rowsFrom?: string;
  /** How the user named `rowsFrom` (`--warehouse`), when they did: then it must be a warehouse file. */
  rowsNamed?: string;
  /** The one query the database is for: the views of the tables it reads from Parquet bind only the files it can need (prunedViews). */
  sql?: string;
}

/**
 * For `sql`, the files it can need of each table of `tables` (those read from Parquet), where fewer
 * than all (warehouse/prune.ts): their views bind those files alone. `warehouse`: the warehouse
 * file whose catalogue to read (`attached`: as ROWS_DB); with `manifests`, its blooms alone (the
 * bounds from the manifests, which a long-lived process has decoded once), the file attached only
 * for a query that asks for a hash; with `kept`, left attached for the next one (KeptCatalogue).
 */
export async function filesFor(conn: DuckDBConnection, lake: string, sql: string, tables: ReadonlySet<string>, warehouse?: { file: string; attached: boolean; manifests?: boolean; kept?: KeptCatalogue }): Promise<Map<string, string[]>> {
  const named = viewsFor(sql);
  const read = [...tables].filter((t) => !named || named.has(t));
  if (!read.length || !/\bwhere\b/i.test(sql)) return new Map();
  const { bloomProbe, catalogueIn, prunedFiles, snapshotBounds } = await import('./prune.js');
  const prune = (catalogue: Map<string, Map<string, Described>>, probe?: BloomProbe) => prunedFiles(conn, lake, sql, committedFiles(lake, read), async (t) => catalogue.get(t) ?? snapshotBounds(lake, t), probe);
  if (warehouse?.attached) return prune(warehouse.manifests ? new Map() : await catalogueIn(conn, ROWS_DB, read), bloomProbe(conn, ROWS_DB));
  if (!warehouse || !existsSync(warehouse.file)) return prune(new Map());
  const kept = warehouse.kept;
  if (kept) return prune(new Map(), async (t, c, values) => ((await kept.attach(conn, warehouse.file)) ? bloomProbe(conn, CATALOGUE_DB)(t, c, values) : new Map()));
  // Attached once, when first needed: the attach reads the file's whole catalogue of views.
  let attached: boolean | undefined;
  const attach = async () => {
    if (attached === undefined) {
      try {
        await conn.run(`ATTACH ${sqlString(warehouse.file)} AS ${CATALOGUE_DB} (READ_ONLY)`);
        attached = true;
      } catch {
        // Held open for writing elsewhere, or not a database: the manifests, and no blooms.
        attached = false;
      }
    }
    return attached;
  };
  const probe: BloomProbe = async (t, c, values) => ((await attach()) ? bloomProbe(conn, CATALOGUE_DB)(t, c, values) : new Map());
  try {
    // The warehouse file's catalogue of the files' bounds (a run writes it), else the manifests.
    return await prune(!warehouse.manifests && (await attach()) ? await catalogueIn(conn, CATALOGUE_DB, read) : new Map(), probe);
  } finally {
    if (attached) await conn.run(`DETACH ${CATALOGUE_DB}`);
  }
}

/** The name the warehouse file is attached under to read its catalogue of file bounds alone. */
const CATALOGUE_DB = 'chainlake_catalogue';

/**
 * The warehouse file attached for its blooms and left so between queries (the library): attaching
 * reads the file's whole catalogue of views, which cost a hash query more than its probe. A file
 * replaced since (a run renames a new one over it) is attached anew; one attached while it was
 * replaced still answers rightly, as a bloom describes a file whose name is never reused and a file
 * it does not describe is read.
 */
export class KeptCatalogue {
  /** The file as it was when last attached or tried (device, inode, time, size), and whether it attached. */
  private stamp?: string;
  private attached = false;

  /** Whether `file` is attached as CATALOGUE_DB, as it is now. */
  async attach(conn: DuckDBConnection, file: string): Promise<boolean> {
    let stamp: string | undefined;
    try {
      const st = statSync(file);
      stamp = `${st.dev}:${st.ino}:${st.mtimeMs}:${st.size}`;
    } catch {
      stamp = undefined;
    }
    if (stamp !== undefined && stamp === this.stamp) return this.attached;
    await this.release(conn);
    this.stamp = stamp;
    if (stamp === undefined) return false;
    try {
      await conn.run(`ATTACH ${sqlString(file)} AS ${CATALOGUE_DB} (READ_ONLY)`);
      this.attached = true;
    } catch {
      // Held open for writing elsewhere, or not a database: no blooms, until the file changes.
    }
    return this.attached;
  }

  /** Detached (DuckDB attaches a file once: before it is attached under another name). */
  async release(conn: DuckDBConnection): Promise<void> {
    if (this.attached) await conn.run(`DETACH ${CATALOGUE_DB}`);
    this.attached = false;
    this.stamp = undefined;
  }
}

/**
 * TEMP views (they shadow the database's for one connection) over only the files a query can need
 * of each table `pruned` names (filesFor); none when nothing is pruned.
 */
export async function prunedViews(conn: DuckDBConnection, lake: string, pruned: ReadonlyMap<string, string[]>, oneSchema?: Set<string>): Promise<string[]> {
  if (!pruned.size) return [];
  return (await viewSql(conn, lake, new Set(pruned.keys()), oneSchema, undefined, pruned)).map((v) => v.replace(/^CREATE OR REPLACE VIEW/, 'CREATE OR REPLACE TEMP VIEW'));
}

/**
 * An in-memory DuckDB with the lake's views, which every connection to it sees; its memory,
 * threads and spill folder from `engine` over the environment (load/limits.ts).
 */
export async function lakeDatabase(lake: string, engine: EngineOptions = {}, o: LakeDatabaseOptions = {}): Promise<DuckDBInstance> {
  const db = await queryDatabase(engine);
  const conn = await db.connect();
  try {
    await bindViews(conn, lake, o);
  } finally {
    conn.closeSync();
  }
  return db;
}

/**
 * Makes the lake's views (`o.only`: those of these names) on the database of `conn`, and says which
 * of those read from Parquet read without lining up by name (with `lineUpOnce`).
 */
export async function bindViews(conn: DuckDBConnection, lake: string, o: LakeDatabaseOptions = {}): Promise<{ oneSchema?: Set<string> }> {
  const { only, lineUpOnce = false } = o;
  const tables = LAKE_TABLES.map((d) => d.table).filter((t) => !only || only.has(t));
  const rows = o.rowsFrom ? await currentRows(conn, lake, o.rowsFrom, tables, o.rowsNamed) : new Set<string>();
  const rest = new Set([...(only ?? VIEW_NAMES)].filter((t) => !rows.has(t)));
  const oneSchema = lineUpOnce ? await oneSchemaTables(conn, lake, rest) : undefined;
  const pruned = o.sql ? await filesFor(conn, lake, o.sql, rest, o.rowsFrom ? { file: o.rowsFrom, attached: rows.size > 0 } : undefined) : undefined;
  for (const sql of await viewSql(conn, lake, only, oneSchema, rows, pruned)) await conn.run(sql);
  return oneSchema ? { oneSchema } : {};
}

/**
 * An in-memory DuckDB with the lake's views (`only`: those of these names, see viewsFor;
 * `rowsFrom`: a warehouse file whose current rows to read; `sql`: the one query it is for).
 */
export async function openWarehouse(lake: string, engine: EngineOptions = {}, only?: Set<string>, rows: Pick<LakeDatabaseOptions, 'rowsFrom' | 'rowsNamed' | 'sql'> = {}): Promise<DuckDBConnection> {
  return soleConnection(await lakeDatabase(lake, engine, { only, ...rows }));
}

/** The bundled queries' folder (sql/), found from this module so it works from src/ and dist/. */
const SQL_DIR = new URL('../../sql/', import.meta.url);

/** A bundled query (sql/<name>). */
export function bundledSql(name: string): string {
  return readFileSync(new URL(name, SQL_DIR), 'utf8');
}

export interface BundledQuery {
  /** The file's name without `.sql`: the name of its view in the warehouse file. */
  name: string;
  file: string;
  /** The statement, without the trailing semicolon. */
  sql: string;
  /** The file's leading comment as one paragraph. */
  comment: string;
}

/** Every bundled query in sql/, by file name. */
export function bundledQueries(): BundledQuery[] {
  return readdirSync(SQL_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((file) => {
      const text = bundledSql(file);
      const head = text.match(/^(?:--.*\n)+/)?.[0] ?? '';
      const comment = head.split('\n').map((l) => l.replace(/^--\s?/, '').trim()).filter(Boolean).join(' ');
      return { name: file.slice(0, -'.sql'.length), file, sql: text.trim().replace(/;$/, ''), comment };
    });
}
