// `chainlake export`: one table (or a filtered part of it) to one Parquet, CSV, NDJSON or Arrow file.
// The predicate is user text spliced into SQL, so it is parsed by DuckDB first and only a plain
// filter over the table is accepted; the statement that runs is DuckDB's own rendering of that
// parsed filter, not the user's text. Then the connection is locked down (no file access but the
// lake and the output file, no extension loading) before the export runs, as a second wall.
// A CSV is often opened in a spreadsheet, which runs a cell such as =HYPERLINK(...) that a token
// name brought from a service: text cells that begin like a formula get a leading quote, unless
// asked to write them as they are.
import { closeSync, existsSync, lstatSync, openSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { RunError, UsageError } from '../errors.js';
import { didYouMean } from '../closest.js';
import { PARQUET } from '../load/parquet.js';
import { sqlString } from '../load/paths.js';
import { existingFolder } from '../state/location.js';
import { REJECTS } from '../state/store.js';
import { FORMULA_START } from '../text.js';
import { ident } from './check.js';
import { LAKE_TABLES, openWarehouse } from './views.js';
import { amountsOf, landedAmount } from './amounts.js';
import { unitsOf, UNITS_SUFFIX } from '../transform/columns.js';

export const EXPORT_FORMATS = ['parquet', 'csv', 'ndjson', 'arrow'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const BY_EXTENSION: Record<string, ExportFormat> = { '.parquet': 'parquet', '.pq': 'parquet', '.csv': 'csv', '.ndjson': 'ndjson', '.jsonl': 'ndjson', '.json': 'ndjson', '.arrow': 'arrow' };

export interface ExportOptions {
  lake: string;
  table: string;
  to: string;
  format?: ExportFormat;
  where?: string;
  columns?: string[];
  /** Replace an existing file. */
  force?: boolean;
  /** CSV: write text cells that begin like a formula as they are, without the leading quote. */
  csvFormulas?: boolean;
}

export interface ExportResult {
  file: string;
  format: ExportFormat;
  rows: number;
  columns: string[];
}

export function exportableTables(): string[] {
  return [...LAKE_TABLES.map((s) => s.table), REJECTS];
}

/** The format asked for, else the one the file name says. */
export function exportFormat(to: string, format?: string): ExportFormat {
  if (format !== undefined) {
    if (!(EXPORT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format ${format}: one of ${EXPORT_FORMATS.join(', ')}`);
    return format as ExportFormat;
  }
  const f = BY_EXTENSION[extname(to).toLowerCase()];
  if (!f) throw new UsageError(`--to ${to}: cannot tell the format from the name; give --format ${EXPORT_FORMATS.join('|')} (or name it .parquet, .csv, .ndjson, .arrow)`);
  return f;
}

function realDir(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * The output file: not a folder or a device, its folder exists, it is outside the lake (a file
 * dropped into a table folder would be read as table data; elsewhere a run may clear it), and an
 * existing file is replaced only when asked.
 */
export function checkOutput(to: string, lake: string, force: boolean, flag = '--to'): string {
  if (to.trim() === '') throw new UsageError(`${flag}: give the file to write`);
  const file = resolve(to);
  const parent = dirname(file);
  if (!existsSync(parent)) throw new UsageError(`${flag} ${to}: the folder ${parent} does not exist`);
  if (!statSync(parent).isDirectory()) throw new UsageError(`${flag} ${to}: ${parent} is a file, not a folder`);
  if (existsSync(file) || isDanglingLink(file)) {
    const st = lstatSync(file);
    if (st.isDirectory() || (st.isSymbolicLink() && existsSync(file) && statSync(file).isDirectory())) throw new UsageError(`${flag} ${to}: is a folder; give a file name`);
    if (!st.isFile()) throw new UsageError(`${flag} ${to}: exists and is not a regular file; refusing to replace it`);
    if (!force) throw new UsageError(`${flag} ${to}: exists; add --force to replace it`);
  }
  const lakeReal = realDir(lake);
  const target = join(realDir(parent), basename(file));
  if (target === lakeReal || target.startsWith(lakeReal + sep)) throw new UsageError(`${flag} ${to}: is inside the lake ${lake}; write exports outside it`);
  return target;
}

function isDanglingLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Scalar functions that read settings, variables or the environment, or change state. */
const FORBIDDEN_FUNCTIONS = new Set(['current_setting', 'getvariable', 'getenv', 'nextval', 'currval', 'setseed']);

interface SqlNode {
  [k: string]: unknown;
}

/** The first thing in an expression tree that makes it more than a filter, if any. */
function forbiddenIn(node: unknown): string | undefined {
  if (Array.isArray(node)) {
    for (const x of node) {
      const bad = forbiddenIn(x);
      if (bad) return bad;
    }
    return undefined;
  }
  if (!node || typeof node !== 'object') return undefined;
  const n = node as SqlNode;
  if (n.class === 'SUBQUERY') return 'a subquery';
  if (n.class === 'WINDOW') return 'a window function';
  if (n.class === 'PARAMETER') return 'a parameter';
  if (n.class === 'FUNCTION' && FORBIDDEN_FUNCTIONS.has(String(n.function_name).toLowerCase())) return `the function ${n.function_name}()`;
  for (const v of Object.values(n)) {
    const bad = forbiddenIn(v);
    if (bad) return bad;
  }
  return undefined;
}

const empty = (v: unknown) => v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);

/**
 * Parses `SELECT * FROM <table> WHERE <predicate>` with DuckDB and returns DuckDB's rendering of
 * it, if it is exactly that: one plain SELECT of every column of the table, a WHERE, and nothing
 * else (no second statement, CTE, join, table function, grouping, ordering, limit, subquery).
 */
export async function filterSql(conn: DuckDBConnection, table: string, predicate: string): Promise<string> {
  const bad = (why: string) => new UsageError(`--where ${JSON.stringify(predicate)}: ${why}; give a filter on the columns of ${table}, e.g. --where "block_number >= 1000 AND token_type = 'ERC-20'"`);
  if (predicate.trim() === '') throw bad('is empty');
  const stmt = `SELECT * FROM ${ident(table)} WHERE ${predicate}`;
  const parsed = (await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR) AS j', [stmt])).getRowObjects()[0]!.j;
  const tree = JSON.parse(String(parsed)) as { error?: boolean; error_message?: string; statements?: Array<{ node: SqlNode }> };
  if (tree.error) throw bad(`not a predicate DuckDB can read (${tree.error_message})`);
  if (tree.statements?.length !== 1) throw bad('more than one statement');
  const node = tree.statements[0]!.node;
  if (node.type !== 'SELECT_NODE') throw bad('not a single filter (UNION, INTERSECT or the like)');
  const from = node.from_table as SqlNode;
  const star = node.select_list as SqlNode[];
  const plainStar = star.length === 1 && star[0]!.class === 'STAR' && empty(star[0]!.exclude_list) && empty(star[0]!.replace_list) && empty(star[0]!.rename_list) && !star[0]!.columns && empty(star[0]!.expr);
  const plainFrom = from?.type === 'BASE_TABLE' && from.table_name === table && empty(from.schema_name) && empty(from.catalog_name) && empty(from.alias) && empty(from.sample) && empty(from.at_clause);
  if (!plainStar || !plainFrom) throw bad('not a plain filter of the table');
  if (!empty(node.modifiers)) throw bad('ORDER BY, LIMIT or DISTINCT are not filters');
  if (!empty((node.cte_map as SqlNode | undefined)?.map)) throw bad('a WITH clause is not a filter');
  if (!empty(node.group_expressions) || !empty(node.group_sets) || node.aggregate_handling !== 'STANDARD_HANDLING' || !empty(node.having) || !empty(node.qualify) || !empty(node.sample)) throw bad('GROUP BY, HAVING, QUALIFY or SAMPLE are not filters');
  if (empty(node.where_clause)) throw bad('no condition');
  const forbidden = forbiddenIn(node.where_clause);
  if (forbidden) throw bad(`${forbidden} is not allowed in a filter`);
  const rendered = (await conn.runAndReadAll('SELECT json_deserialize_sql($1::JSON) AS s', [String(parsed)])).getRowObjects()[0]!.s;
  return String(rendered);
}

/** Columns of text: the only cells a spreadsheet could take for a formula (a number such as -5 stays a number). */
const TEXT = /^(VARCHAR|JSON)$/i;

/** A text column as the OWASP rule writes it to CSV (csvSafe in src/text.ts, in SQL, row by row as DuckDB streams them). */
function formulaSafe(column: string): string {
  const c = `CAST(${ident(column)} AS VARCHAR)`;
  return `CASE WHEN regexp_matches(${c}, ${sqlString(FORMULA_START.source)}) THEN '''' || ${c} ELSE ${c} END AS ${ident(column)}`;
}

/** Types a JSON reader would round as numbers: written as strings, as `query --format json` does. */
const BIG_NUMBER = /^(DECIMAL|NUMERIC|HUGEINT|UHUGEINT|BIGINT|UBIGINT|INT8|INT128|BIGNUM)/i;

async function describe(conn: DuckDBConnection, table: string): Promise<Array<{ name: string; type: string }>> {
  const r = await conn.runAndReadAll(`DESCRIBE ${ident(table)}`);
  return r.getRowObjects().map((x) => ({ name: String(x.column_name), type: String(x.column_type) }));
}

export function parseColumns(v: string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const cols = v.split(',').map((c) => c.trim());
  if (cols.some((c) => c === '')) throw new UsageError(`--columns ${JSON.stringify(v)}: an empty name; give names separated by commas, e.g. --columns tx_hash,value,value_raw`);
  return cols;
}

/** Refuses from here on any file access but reading the lake and writing `out`, for good. */
export async function sandbox(conn: DuckDBConnection, lake: string, out: string): Promise<void> {
  await conn.run(`SET allowed_directories = [${sqlString(realDir(lake) + sep)}]`);
  await conn.run(`SET allowed_paths = [${sqlString(out)}]`);
  await conn.run('SET enable_external_access = false');
  await conn.run('SET autoinstall_known_extensions = false');
  await conn.run('SET autoload_known_extensions = false');
  await conn.run('SET lock_configuration = true');
}

/**
 * The rows of `sql` as an Arrow IPC file at `path`, written batch by batch by this process (DuckDB
 * has no Arrow writer without an extension). The types are checked before the file is created.
 */
async function arrowFile(conn: DuckDBConnection, sql: string, path: string): Promise<number> {
  // Loaded here, not at the top: apache-arrow takes a quarter of a second to load, and only this format needs it.
  const { arrowResult, writeArrow } = await import('./arrow.js');
  const result = await arrowResult(conn, sql);
  const fd = openSync(path, 'w');
  try {
    return await writeArrow(result, 'file', (bytes) => {
      for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
    });
  } finally {
    closeSync(fd);
  }
}

export async function exportTable(o: ExportOptions): Promise<ExportResult> {
  const tables = exportableTables();
  if (!tables.includes(o.table)) {
    const guess = didYouMean(o.table, tables);
    throw new UsageError(`export: ${JSON.stringify(o.table)} is not a table of the lake${guess || ` (${tables.join(', ')})`}`);
  }
  existingFolder(o.lake, '--lake');
  const file = checkOutput(o.to, o.lake, o.force ?? false);
  const format = exportFormat(o.to, o.format);
  if (o.csvFormulas && format !== 'csv') throw new UsageError(`--csv-formulas: only with CSV (this export writes ${format})`);
  const conn = await openWarehouse(o.lake);
  try {
    const described = await describe(conn, o.table);
    const known = new Map(described.map((c) => [c.name, c.type]));
    const decl = LAKE_TABLES.find((d) => d.table === o.table);
    // Parquet keeps the files' columns: the amounts in whole units are the views' own (asked by name, they go).
    const own = new Set(format === 'parquet' && decl ? unitsOf(decl).map((u) => u.name + UNITS_SUFFIX) : []);
    const asked = o.columns ?? described.map((c) => c.name).filter((c) => !own.has(c));
    const seen = new Set<string>();
    for (const c of asked) {
      if (!known.has(c)) throw new UsageError(`--columns: ${o.table} has no column ${JSON.stringify(c)} (it has ${described.map((x) => x.name).join(', ')})`);
      if (seen.has(c)) throw new UsageError(`--columns: ${c} is given twice`);
      seen.add(c);
    }
    // Parquet keeps the lake's types: an amount is DECIMAL(38,0), NULL over 38 digits, so its
    // `_raw` digits go with it, after it, even when not asked for.
    const amounts = new Set(format === 'parquet' && decl ? amountsOf(decl).filter((a) => known.has(`${a}_raw`)) : []);
    const columns = asked.flatMap((c) => (amounts.has(c) && !seen.has(`${c}_raw`) ? [c, `${c}_raw`] : [c]));
    const source = o.where !== undefined ? `(${await filterSql(conn, o.table, o.where)}) AS filtered` : ident(o.table);
    const select = columns
      .map((c) => {
        if (amounts.has(c)) return `${landedAmount(c)} AS ${ident(c)}`;
        if (format === 'ndjson' && BIG_NUMBER.test(known.get(c)!)) return `CAST(${ident(c)} AS VARCHAR) AS ${ident(c)}`;
        if (format === 'csv' && !o.csvFormulas && TEXT.test(known.get(c)!)) return formulaSafe(c);
        return ident(c);
      })
      .join(', ');
    // Written next to the target and renamed: a failed export leaves no partial file behind.
    const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}`);
    await sandbox(conn, o.lake, tmp);
    let rows: number;
    try {
      if (format === 'arrow') rows = await arrowFile(conn, `SELECT ${select} FROM ${source}`, tmp);
      else {
        const options = { parquet: PARQUET, csv: 'FORMAT csv, HEADER true', ndjson: 'FORMAT json' }[format];
        const r = await conn.runAndReadAll(`COPY (SELECT ${select} FROM ${source}) TO ${sqlString(tmp)} (${options})`);
        rows = Number(r.getRowObjects()[0]?.Count ?? 0);
      }
      renameSync(tmp, file);
    } catch (err) {
      rmSync(tmp, { force: true });
      const message = `export ${o.table}${o.where !== undefined ? ` --where ${JSON.stringify(o.where)}` : ''}: ${(err as Error).message.split('\n')[0]}`;
      // A filter naming no column or comparing a number with text, or a column Arrow cannot hold,
      // is the user's to fix (exit 2); anything else (disk full, an unreadable file) is a failure
      // of the export (exit 1).
      if (err instanceof UsageError || /^(Binder|Parser|Conversion|Catalog|Invalid Input) Error/.test((err as Error).message)) throw new UsageError(message);
      throw new RunError(message);
    }
    return { file, format, rows, columns };
  } finally {
    conn.closeSync();
  }
}
