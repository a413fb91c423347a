// The warehouse as a file (docs/warehouse.md): a DuckDB database that analysts open with
// their own tools (the DuckDB CLI, Python, DBeaver, dashboards). Views only (`--no-rows`), it holds
// one small marker table and views: a view per lake table over its Parquet files by absolute path
// (viewSql, as `chainlake query` builds them), `_runs`, `_rejects`, and every bundled query of sql/
// as a view of its file's name. With rows (a new file's default: the Parquet files scan slower than
// DuckDB's own storage and pay for their footers at each query; kept by later rewrites until
// `--no-rows`) each table's view reads a copy of its rows in the file instead (warehouse/rows.ts). It is built in a temporary file next to the target and renamed over it: a
// reader sees the old file or the new one, and a connection open on the old file keeps reading it.
// A rewrite starts from a copy of the old file where it can, and a file of this build keeps the
// views whose files (or rows) did not change, with their comments, which are most of a write's
// cost; a file with rows keeps its rows. A file with rows that no program has open is brought up
// to date in place instead, in one transaction: copying it cost more than the rows a run adds.
// Only a file that carries the marker is replaced, so a database of the user's that happens to sit
// at the path is never overwritten, and only one of this lake (the marker names it) or of a lake
// that is gone (moved): a file never silently starts answering for another lake than the one it
// was written for.
import { closeSync, constants, copyFileSync, existsSync, lstatSync, openSync, readdirSync, readSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { RunError, UsageError } from '../errors.js';
import { VERSION } from '../version.js';
import { sqlString } from '../load/paths.js';
import { alive } from '../state/process.js';
import { holdsLake } from '../state/location.js';
import { REJECTS, RUNS } from '../state/store.js';
import { createHash } from 'node:crypto';
import { columnDoc } from '../transform/columns.js';
import { viewColumns } from './amounts.js';
import { ident } from './check.js';
import { checkOutput } from './export.js';
import { bundledQueries, LAKE_TABLES, oneSchemaTables, sourcesOf, viewInputs, viewSql } from './views.js';
import type { StreamDecl } from '../decl/stream.js';
import { defaultWarehousePath, FILES, MARKER, rowsCurrent, syncRows, type RowsSync } from './rows.js';
import { engineOptions, querySettings, WRITER_MEMORY } from '../load/limits.js';
import { BLOOMS, CATALOGUE, writeCatalogue } from './prune.js';
import { DuckDBInstance, type DuckDBConnection } from './duckdb.js';

export { defaultWarehousePath, MARKER };


/** DuckDB's main header starts with an 8-byte checksum and then these bytes. */
const DUCKDB_MAGIC = Buffer.from('DUCK');

/**
 * `ours`: the lake its marker says it is of: the folder its views read (`lake`), and for an s3://
 * lake its URL (`url`: the read copy's folder differs from one cache to another).
 */
type Ours = { kind: 'ours'; rows: boolean; lake: string; url?: string };
type Found = { kind: 'absent' } | Ours | { kind: 'foreign' | 'busy'; why: string };

/**
 * DuckDB's settings for the warehouse file: one thread unless CHAINLAKE_DUCKDB_THREADS says
 * otherwise. Most of a write is hundreds of small statements, at each of which a second thread is
 * woken for nothing: it cost a third more CPU (docs/benchmarks.md, The warehouse file's rewrite).
 * A copy of the rows is no faster on two: DuckDB compresses a table's row groups in their order,
 * and a second thread only doubled the peak of a rebuild's copy (docs/benchmarks.md, "The
 * warehouse copy's upkeep"). The memory of a writer, unless the user sets it: the file is
 * written at the end of a run, whose peak it would otherwise be (a first copy of 10M rows: 2.4 GB
 * under a query's 2 GiB, 0.76-0.87 GB under this).
 */
function settings(readOnly = false): Record<string, string> {
  const user = engineOptions();
  return { threads: '1', ...(readOnly ? { access_mode: 'READ_ONLY' } : {}), ...querySettings({ ...user, memoryLimit: user.memoryLimit ?? WRITER_MEMORY }) };
}

function hasDuckdbMagic(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(12);
    return readSync(fd, head, 0, 12, 0) === 12 && head.subarray(8, 12).equals(DUCKDB_MAGIC);
  } finally {
    closeSync(fd);
  }
}

/**
 * What is at `file`: nothing, a warehouse chainlake wrote, someone else's file, or one a program
 * holds open for writing. `whileOpen` runs on a file that is ours before it is closed: meanwhile
 * no other process can open it for writing (the read-only open holds DuckDB's shared lock), so
 * what it reads or copies of the file is whole.
 */
async function inspect<T>(file: string, whileOpen?: (conn: DuckDBConnection, found: Ours) => Promise<T>): Promise<{ found: Found; used?: T }> {
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return { found: { kind: 'absent' } };
  }
  if (st.isDirectory()) return { found: { kind: 'foreign', why: 'is a folder' } };
  if (!st.isFile()) return { found: { kind: 'foreign', why: 'is not a regular file' } };
  if (!hasDuckdbMagic(file)) return { found: { kind: 'foreign', why: 'is not a DuckDB database' } };
  let db: DuckDBInstance;
  try {
    db = await DuckDBInstance.create(file, settings(true));
  } catch (err) {
    const message = (err as Error).message.split('\n')[0]!;
    // DuckDB locks a file it has open for writing: its owner may be writing to it right now.
    if (/Could not set lock|Conflicting lock/.test(message)) return { found: { kind: 'busy', why: message } };
    return { found: { kind: 'foreign', why: `cannot be opened by this DuckDB (${message})` } };
  }
  try {
    const conn = await db.connect();
    try {
      const r = await conn.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' AND table_name IN (${sqlString(MARKER)}, ${sqlString(FILES)})`);
      const names = new Set(r.getRows().map(([t]) => String(t)));
      if (!names.has(MARKER)) return { found: { kind: 'foreign', why: `is a DuckDB database without chainlake's ${MARKER} table` } };
      // A file from before the marker had lake_url has none.
      const marker = (await conn.runAndReadAll(`SELECT * FROM ${MARKER}`)).getRowObjects()[0] ?? {};
      const found: Ours = { kind: 'ours', rows: names.has(FILES), lake: String(marker.lake), ...(typeof marker.lake_url === 'string' ? { url: marker.lake_url } : {}) };
      return { found, ...(whileOpen ? { used: await whileOpen(conn, found) } : {}) };
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}

/** How messages name the file: by the flag that gave it, or as the default. */
function labelOf(file: string, flag: string, given: boolean): string {
  return given ? `${flag} ${file}` : `the warehouse file ${file}`;
}

/** What else the user may do than replace the file at hand. */
function instead(flag: string, given: boolean): string {
  return `name another file${given ? '' : ` with ${flag} FILE`}${flag === '--warehouse' ? ', or skip it with --no-warehouse' : ''}`;
}

function refusal(file: string, flag: string, given: boolean, why: string): UsageError {
  return new UsageError(`${labelOf(file, flag, given)}: ${why}, so not a warehouse chainlake wrote; refusing to replace it (move it away, or ${instead(flag, given)})`);
}

/**
 * The other lake whose warehouse `found` is, which no longer holds a lake (moved or deleted), so
 * that its file may be replaced; undefined when the file is this lake's, or is not a warehouse.
 * Refuses (exit 2) a file of another lake that is still there: it would answer for this one. An
 * s3:// lake cannot be looked at from here without the network: it counts as there.
 */
function movedLake(found: Found, lake: string, url: string | undefined, file: string, flag: string, given: boolean): string | undefined {
  if (found.kind !== 'ours' || found.lake === resolve(lake) || (found.url !== undefined && found.url === url)) return undefined;
  const other = found.url ?? found.lake;
  if (found.url !== undefined || holdsLake(found.lake))
    throw new UsageError(
      `${labelOf(file, flag, given)}: is the warehouse file of another lake, ${other} (this one is ${url ?? resolve(lake)}); refusing to replace it (${instead(flag, given)}, or delete the file if ${other} no longer needs it)`,
    );
  return other;
}

/**
 * The file: `out` (checked: its folder exists, it is not in the lake), else `<lake>.warehouse.duckdb`
 * beside the lake. The default's folder is the lake's parent, which a run may be about to create.
 */
function targetOf(lake: string, out: string | undefined, flag: string): string {
  if (out !== undefined) return checkOutput(out, lake, true, flag);
  const file = defaultWarehousePath(lake);
  return existsSync(dirname(file)) ? checkOutput(file, lake, true, 'the warehouse file') : file;
}

/**
 * Checks, before a command that changes the lake starts, the file it will write the warehouse to,
 * so that a bad path or someone else's file there is a usage error before any work is done. `false`
 * (--no-warehouse): none. A file held open for writing is not refused here: it may be closed by
 * the time the command ends.
 */
export async function checkWarehouseTarget(lake: string, out: string | false | undefined, flag: string, url?: string): Promise<void> {
  if (out === false) return;
  const file = targetOf(lake, out, flag);
  const { found } = await inspect(file);
  if (found.kind === 'foreign') throw refusal(file, flag, out !== undefined, found.why);
  movedLake(found, lake, url, file, flag, out !== undefined);
}

export interface WarehouseResult {
  file: string;
  tables: number;
  queries: number;
  /** Bundled queries that cannot be views of this lake yet (e.g. runs_recent before any run). */
  skipped: Array<{ name: string; why: string }>;
  /** With rows: what the rewrite changed in them. */
  rows?: RowsSync;
  /** The file was left as it was: it already held what a rewrite would write. */
  unchanged?: true;
  /** The file was of this lake at its old place (which holds no lake now), and was replaced. */
  moved?: string;
  /** Its rows were brought up to date in the file itself (no program had it open), not in a copy. */
  inPlace?: true;
  /** Written from a copy of the old file: the lake's views made again (whose files now read otherwise), the others kept. */
  remade?: string[];
}

/** Temporary files of writers that are gone (killed mid-write): `.<name>.tmp-<pid>` and its WAL. */
function removeStale(file: string): void {
  const prefix = `.${basename(file)}.tmp-`;
  for (const f of readdirSync(dirname(file))) {
    if (!f.startsWith(prefix)) continue;
    const pid = Number(f.slice(prefix.length).replace(/\.wal$/, ''));
    if (!Number.isSafeInteger(pid) || pid === process.pid) continue;
    if (!alive(pid)) rmSync(join(dirname(file), f), { force: true });
  }
}

/** `COMMENT ON what IS 'text'`. */
function comment(what: string, text: string): string {
  return `COMMENT ON ${what} IS ${sqlString(text)}`;
}

/** The lake's own views (a table's, `_rejects`, `_runs`), in the order they are made. */
const LAKE_VIEWS: readonly string[] = [...LAKE_TABLES.map((d) => d.table), REJECTS, RUNS];
const DECLS = new Map<string, StreamDecl>(LAKE_TABLES.map((d) => [d.table, d]));

/** The comments of the lake's view `name`, on the columns it has (a table's files from before a column was declared lack it). */
function viewComments(name: string, columns: readonly string[]): string[] {
  if (name === REJECTS) return [comment(`VIEW ${REJECTS}`, 'rows that broke their schema, with the reason and the raw JSON')];
  if (name === RUNS) return [comment(`VIEW ${RUNS}`, 'run reports (_runs/*.json in the lake), one row per run')];
  const decl = DECLS.get(name)!;
  const out = [comment(`VIEW ${ident(decl.table)}`, decl.doc)];
  for (const c of columns) {
    const doc = columnDoc(decl, c);
    if (doc) out.push(comment(`COLUMN ${ident(decl.table)}.${ident(c)}`, doc));
  }
  return out;
}

/** The comments of the catalogue's tables, which writeCatalogue makes anew at each write. */
const catalogueComments = (): string[] => [
  comment(`TABLE ${CATALOGUE}`, "each data file's bounds of the columns queries filter on (block, time, token, address, hash), from the tables' Iceberg manifests: `chainlake query` and the library read only the files a query's filter can match"),
  comment(`TABLE ${BLOOMS}`, "a bloom filter of each data file's hashes (tx_hash, hash): `chainlake query` and the library read only the files that may hold a hash a query asks for"),
];

/** Each column of each table and view of the file, as `name type`, in order. */
async function columnsIn(conn: DuckDBConnection): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const r = await conn.runAndReadAll(`SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name, column_index`);
  for (const [table, name, type] of r.getRows()) {
    let columns = out.get(String(table));
    if (!columns) out.set(String(table), (columns = []));
    columns.push(`${String(name)} ${String(type)}`);
  }
  return out;
}

const namesOf = (columns: readonly string[] | undefined): string[] => (columns ?? []).map((c) => c.slice(0, c.indexOf(' ')));
const sameColumns = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);

/** A statement's digest, by which a rewrite knows a view would be made the same again. */
const digest = (sql: string): string => createHash('sha256').update(sql).digest('hex').slice(0, 16);

/**
 * The marker's `inputs`: for each of the lake's views, what it was made from (viewInputs) and the
 * digest of the statement that made it ('' in a file written before views of rows had theirs).
 */
type Inputs = Record<string, [string, string]>;

function inputsText(inputs: Record<string, string>, made: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(LAKE_VIEWS.map((v) => [v, [inputs[v], made[v] ?? '']])));
}

/** The marker's `inputs` of a file of this build, else undefined. */
function parseInputs(text: unknown): Inputs | undefined {
  try {
    const x = JSON.parse(String(text)) as Record<string, unknown>;
    return LAKE_VIEWS.every((v) => Array.isArray(x[v]) && x[v].length === 2 && x[v].every((s) => typeof s === 'string')) ? (x as Inputs) : undefined;
  } catch {
    return undefined;
  }
}

type Skipped = WarehouseResult['skipped'];

/** The marker's columns and their values, as SQL. */
function markerValues(lake: string, url: string | undefined, inputs: string, skipped: Skipped): Array<[string, string]> {
  return [
    ['lake', sqlString(resolve(lake))],
    ['lake_url', url === undefined ? 'NULL::VARCHAR' : sqlString(url)],
    ['written_at', 'now()'],
    ['chainlake_version', sqlString(VERSION)],
    ['build', sqlString(fingerprint())],
    ['inputs', sqlString(inputs)],
    ['skipped', sqlString(JSON.stringify(skipped))],
  ];
}

/**
 * Makes every bundled query a view, its comment into `comments`; gives those that cannot be views
 * of this lake yet. A view is bound when it is made: one reading columns of a view this lake has
 * no files for yet (`_runs` before the first run) cannot be made until it has.
 */
async function makeQueries(conn: DuckDBConnection, comments: string[]): Promise<Skipped> {
  const taken = new Set([...LAKE_VIEWS, MARKER]);
  const skipped: Skipped = [];
  for (const q of bundledQueries()) {
    if (taken.has(q.name)) throw new Error(`sql/${q.file}: its view would be named ${q.name}, which is a table of the warehouse; rename the file`);
    try {
      await conn.run(`CREATE VIEW ${ident(q.name)} AS ${q.sql}`);
    } catch (err) {
      const message = (err as Error).message.split('\n')[0]!;
      if (!message.startsWith('Binder Error')) throw new Error(`sql/${q.file}: ${message}`);
      skipped.push({ name: q.name, why: message });
      continue;
    }
    comments.push(comment(`VIEW ${ident(q.name)}`, `${q.comment} (sql/${q.file})`));
  }
  return skipped;
}

/** The lake's view `name` as the statement that makes it (viewSql). */
async function viewStatement(conn: DuckDBConnection, lake: string, name: string, oneSchema: Set<string>): Promise<string> {
  const [sql] = await viewSql(conn, lake, new Set([name]), oneSchema);
  return sql!;
}

async function build(conn: DuckDBConnection, lake: string, url: string | undefined, withRows: boolean, previous?: string): Promise<Omit<WarehouseResult, 'file'>> {
  // Read before the views are made: a commit meanwhile (by a command that holds the lake now)
  // then differs from the file's inputs, and the next rewrite is made, not skipped.
  const inputs = viewInputs(lake);
  let rows: RowsSync | undefined;
  let only: Set<string> | undefined;
  const made: Record<string, string> = {};
  if (withRows) {
    // The old file's views and marker go (the copy keeps its rows and ledger): made again below.
    const views = await conn.runAndReadAll(`SELECT view_name FROM duckdb_views() WHERE NOT internal AND database_name = current_database() AND schema_name = 'main'`);
    for (const [v] of views.getRows()) await conn.run(`DROP VIEW ${ident(String(v))}`);
    await conn.run(`DROP TABLE IF EXISTS ${MARKER}`);
    const { views: ofRows, ...changed } = await syncRows(conn, lake, LAKE_TABLES);
    rows = changed;
    for (const [name, sql] of ofRows) {
      await conn.run(sql);
      made[name] = digest(sql);
    }
    only = new Set(LAKE_VIEWS.filter((v) => !ofRows.has(v)));
  }
  // Every footer read once here, so that a tool's query reads them once, not twice (the file is
  // rewritten after each run, compaction and rebuild, which are what add files).
  // The views' amounts need each source's columns bound before its view is (amounts.ts): the
  // footers read for the first are kept for the second.
  await conn.run('SET GLOBAL parquet_metadata_cache = true');
  const oneSchema = await oneSchemaTables(conn, lake, only);
  for (const name of LAKE_VIEWS.filter((v) => !only || only.has(v))) {
    const sql = await viewStatement(conn, lake, name, oneSchema);
    await conn.run(sql);
    made[name] = digest(sql);
  }
  // The comments (a thousand and more, most of them columns') go to DuckDB as one batch of
  // statements at the end: one call each cost most of the file's build time.
  const columns = await columnsIn(conn);
  const comments = LAKE_VIEWS.flatMap((v) => viewComments(v, namesOf(columns.get(v))));
  const skipped = await makeQueries(conn, comments);
  // Each data file's bounds and blooms, so that a query binds only the files it can need
  // (warehouse/prune.ts) without reading the manifests; the blooms of files the old file knew are kept.
  await writeCatalogue(conn, lake, LAKE_TABLES.map((d) => d.table), previous);
  await conn.run(`CREATE TABLE ${MARKER} AS SELECT ${markerValues(lake, url, inputsText(inputs, made), skipped).map(([c, v]) => `${v} AS ${c}`).join(', ')}`);
  comments.push(comment(`TABLE ${MARKER}`, 'marks a warehouse file chainlake wrote: it replaces the whole file after each run, compact and rebuild that changed the lake, and `chainlake warehouse` rewrites it; inputs and skipped say what it was made from; lake (or lake_url, for an s3:// lake) is the lake it is of, and a file of another lake that still exists is never replaced'));
  comments.push(...catalogueComments());
  if (rows) comments.push(comment(`TABLE ${FILES}`, 'the lake files whose rows this file holds (each table T in _rows_T, read by the view T); `chainlake warehouse --no-rows` makes the file views only'));
  await conn.run(comments.join(';\n'));
  return { tables: LAKE_TABLES.length + 2, queries: bundledQueries().length - skipped.length, skipped, ...(rows ? { rows } : {}) };
}

/**
 * Brings a file of this build up to date (`old`: its marker's inputs and skipped queries), so that
 * it is the file a whole write (build) gives: a views-only file's copy, or a file with rows
 * (`withRows`: its rows first, syncRows), in place or in a copy. Of the lake's views whose inputs
 * changed, and of the views of rows, those whose statement or columns differ now are made again,
 * with their comments (the others would be made the same: a view over a folder reads its new files
 * as they come, a view of rows its new rows); the bundled queries' views too when one of those
 * views' columns changed (a view is bound to its sources' columns when it is made); the catalogue
 * and the marker. The views that stay bind no footer, and their comments, most of a whole write's
 * statements, are kept.
 */
async function update(conn: DuckDBConnection, lake: string, url: string | undefined, old: { inputs: Inputs; skipped: Skipped }, withRows = false): Promise<Omit<WarehouseResult, 'file'>> {
  const inputs = viewInputs(lake);
  const before = await columnsIn(conn);
  const made = Object.fromEntries(LAKE_VIEWS.map((v) => [v, old.inputs[v]![1]]));
  const remade: string[] = [];
  /** Makes the view `name` with `sql` again, unless the file's is made by it and binds the same columns. */
  const remake = async (name: string, sql: string) => {
    if (digest(sql) === made[name]) {
      const query = sql.replace(/^CREATE OR REPLACE VIEW ("[^"]*"|\w+) AS /, '');
      const now = (await conn.runAndReadAll(`DESCRIBE ${query}`)).getRows().map(([n, t]) => `${String(n)} ${String(t)}`);
      if (sameColumns(now, before.get(name))) return;
    }
    await conn.run(sql);
    made[name] = digest(sql);
    remade.push(name);
  };
  let rows: RowsSync | undefined;
  let ofRows = new Map<string, string>();
  if (withRows) {
    const { views, ...changed } = await syncRows(conn, lake, LAKE_TABLES);
    rows = changed;
    ofRows = views;
    for (const [name, sql] of views) await remake(name, sql);
  }
  // `_runs` is looked at each time: its columns are the reports' keys, which a new report may add
  // without changing its inputs (whether there are reports).
  const changed = LAKE_VIEWS.filter((v) => !ofRows.has(v) && (v === RUNS || old.inputs[v]![0] !== inputs[v]));
  await conn.run('SET GLOBAL parquet_metadata_cache = true');
  const oneSchema = await oneSchemaTables(conn, lake, new Set(changed));
  for (const name of changed) await remake(name, await viewStatement(conn, lake, name, oneSchema));
  const after = remade.length ? await columnsIn(conn) : before;
  const comments = remade.flatMap((v) => viewComments(v, namesOf(after.get(v))));
  let skipped = old.skipped;
  if (remade.some((v) => !sameColumns(after.get(v), before.get(v)))) {
    await conn.run(bundledQueries().map((q) => `DROP VIEW IF EXISTS ${ident(q.name)}`).join(';\n'));
    skipped = await makeQueries(conn, comments);
  }
  // The file's own blooms are kept (writeBlooms): only new files' are read.
  await writeCatalogue(conn, lake, LAKE_TABLES.map((d) => d.table));
  await conn.run(`UPDATE ${MARKER} SET ${markerValues(lake, url, inputsText(inputs, made), skipped).map(([c, v]) => `${c} = ${v}`).join(', ')}`);
  comments.push(...catalogueComments());
  await conn.run(comments.join(';\n'));
  return { tables: LAKE_TABLES.length + 2, queries: bundledQueries().length - skipped.length, skipped, remade, ...(rows ? { rows } : {}) };
}

/**
 * A file with rows (or its copy) brought up to date: from its own views where it is of this build
 * for this lake (update), else written anew around its rows (build; `previous`: whose blooms to keep).
 */
async function withRowsIn(conn: DuckDBConnection, lake: string, url: string | undefined, previous?: string): Promise<Omit<WarehouseResult, 'file'>> {
  const marker = await markerOf(conn, lake);
  const inputs = marker && parseInputs(marker.inputs);
  return marker && inputs ? update(conn, lake, url, { inputs, skipped: marker.skipped }, true) : build(conn, lake, url, true, previous);
}

/**
 * What this build of chainlake writes into every warehouse file besides the lake's own: the bundled
 * queries and the tables' declared columns and docs. A file written with another is rewritten.
 */
function fingerprint(): string {
  const tables = LAKE_TABLES.map((d) => [d.table, d.doc, viewColumns(d).map(([n, t]) => [n, t, columnDoc(d, n)])]);
  // `inputs-by-view`: the marker's inputs are a view's each (a file with one digest of all is written whole).
  return createHash('sha256').update(JSON.stringify([VERSION, bundledQueries(), tables, CATALOGUE, BLOOMS, 'inputs-by-view'])).digest('hex').slice(0, 16);
}

/** The marker of a file of this build for `lake`, as inspect reads it; undefined for another build's or lake's. */
interface Marker {
  inputs: unknown;
  skipped: Skipped;
}

async function markerOf(conn: DuckDBConnection, lake: string): Promise<Marker | undefined> {
  // A file from before the marker had its build, its inputs or its skipped queries: rewritten.
  const marker = (await conn.runAndReadAll(`SELECT lake, build, inputs, skipped FROM ${MARKER}`).catch(() => undefined))?.getRows()[0];
  if (!marker || marker[0] !== resolve(lake) || marker[1] !== fingerprint()) return undefined;
  return { inputs: marker[2], skipped: JSON.parse(String(marker[3])) as Skipped };
}

/**
 * What the file holds, when a rewrite would leave it as it is: it was written by this build for
 * this lake (`marker`), every bundled query is a view in it (but those that could not be then),
 * and the lake is as it was for it. With rows: they are those of the lake's committed files, and
 * `_runs` and `_rejects` read files where the lake has them. Views only: the lake's committed files
 * and sources are those it was written from (viewInputs). Copying a big file, or reading every
 * footer, for nothing at every run that finds nothing new is what this spares.
 */
async function unchanged(conn: DuckDBConnection, lake: string, withRows: boolean, marker: Marker): Promise<Omit<WarehouseResult, 'file'> | undefined> {
  const { skipped } = marker;
  const views = new Map((await conn.runAndReadAll(`SELECT view_name, sql FROM duckdb_views() WHERE NOT internal AND database_name = current_database() AND schema_name = 'main'`)).getRows().map(([v, sql]) => [String(v), String(sql)]));
  const queries = bundledQueries().filter((q) => !skipped.some((s) => s.name === q.name));
  if (!queries.every((q) => views.has(q.name))) return undefined;
  const same = { tables: LAKE_TABLES.length + 2, queries: queries.length, skipped, unchanged: true as const };
  if (!withRows) {
    const old = parseInputs(marker.inputs);
    const now = viewInputs(lake);
    return old && LAKE_VIEWS.every((v) => old[v]![0] === now[v]) ? same : undefined;
  }
  const has = sourcesOf(lake);
  if (has.runs !== (views.get(RUNS) ?? '').includes('read_json(') || has.rejects !== (views.get(REJECTS) ?? '').includes('read_parquet(')) return undefined;
  if (!(await rowsCurrent(conn, lake, LAKE_TABLES.map((d) => d.table)))) return undefined;
  const tables = Number((await conn.runAndReadAll(`SELECT count(DISTINCT table_name) FROM ${FILES}`)).getRows()[0]![0]);
  return { ...same, rows: { tables, added: 0, removed: 0, copied: 0, kept: 0 } };
}

/** What `make` builds in `db`, in one transaction, then checkpointed; `db` is closed after. */
async function buildIn<T>(db: DuckDBInstance, make: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  try {
    const conn = await db.connect();
    try {
      // One transaction: the many small catalog changes are written once, at the commit.
      await conn.run('BEGIN');
      const built = await make(conn);
      await conn.run('COMMIT');
      await conn.run('CHECKPOINT');
      return built;
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}

/**
 * `file` opened for writing, unless a program has it open (DuckDB locks a file for each process
 * that opens it, shared for reading): undefined then, and it is left to it.
 */
async function openUnlessHeld(file: string): Promise<DuckDBInstance | undefined> {
  try {
    return await DuckDBInstance.create(file, settings());
  } catch (err) {
    if (/Could not set lock|Conflicting lock/.test((err as Error).message)) return undefined;
    throw err;
  }
}

/**
 * Writes the warehouse of `lake` to `file`: into `.<name>.tmp-<pid>` in the same folder (for a
 * views-only file of this build, a copy of it brought up to date), then renamed over it; a file
 * with rows that no program has open, in the file itself. Refuses (exit 2) a path that is not a file chainlake wrote, and (exit 1) one a
 * program holds open for writing, whose writes would be lost with the old file. `out` is the file
 * named by `flag`, if one was. `rows`: whether the file holds the tables' rows (warehouse/rows.ts);
 * when not given, as the old file does, and with rows for a new one. A file that would not change is left as it is. `url`: the
 * s3:// lake whose read copy `lake` is. A file of another lake is refused (exit 2) unless that lake
 * is gone (moved): then it is replaced, its rows not reused.
 */
export async function writeWarehouse(lake: string, o: { out?: string; flag: string; rows?: boolean; url?: string }): Promise<WarehouseResult> {
  const file = targetOf(lake, o.out, o.flag);
  const given = o.out !== undefined;
  const label = labelOf(file, o.flag, given);
  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}`);
  const clean = () => {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
  };
  try {
    // The old file is left as it is when nothing would change. A views-only file of this build is
    // copied while it is open here (no writer can change it meanwhile), and the copy brought up to
    // date (update). Not a file beside which a writer left a WAL (its last changes are not in the
    // file alone), nor one of a lake that is gone: those are written anew.
    const { found, used } = await inspect(file, async (conn, ours) => {
      const withRows = o.rows ?? ours.rows;
      if (withRows !== ours.rows || existsSync(`${file}.wal`) || movedLake(ours, lake, o.url, file, o.flag, given) !== undefined) return undefined;
      const marker = await markerOf(conn, lake);
      if (!marker) return undefined;
      const same = await unchanged(conn, lake, withRows, marker);
      if (same) return { same };
      const inputs = withRows ? undefined : parseInputs(marker.inputs);
      if (!inputs) return undefined;
      removeStale(file);
      clean();
      copyFileSync(file, tmp, constants.COPYFILE_FICLONE);
      return { from: { inputs, skipped: marker.skipped } };
    });
    if (found.kind === 'foreign') throw refusal(file, o.flag, given, found.why);
    const moved = movedLake(found, lake, o.url, file, o.flag, given);
    if (found.kind === 'busy') throw new RunError(`${label}: is open for writing in another program (${found.why}); close it, or open it read-only (duckdb -readonly), and rerun`);
    if (used?.same) return { file, ...used.same };
    const from = used?.from;
    let built: Omit<WarehouseResult, 'file'>;
    if (from) built = await buildIn(await DuckDBInstance.create(tmp, settings()), (conn) => update(conn, lake, o.url, from));
    else {
      removeStale(file);
      clean();
      const hadRows = found.kind === 'ours' && found.rows;
      // A new file holds the rows (queries then run at DuckDB's own speed); a file keeps the mode
      // it has, which `--rows`/`--no-rows` change.
      const withRows = o.rows ?? (found.kind === 'ours' ? hadRows : true);
      // Rows are brought up to date in the file itself when no program has it open (one
      // transaction: a failure or a kill before its commit leaves the old state, and DuckDB's
      // checkpoint replaces the old blocks atomically), else in a copy of it renamed over it, so
      // that a reader keeps the file it opened. Unless a writer left a WAL beside it: then its
      // rows are copied whole.
      const whole = found.kind === 'ours' && !existsSync(`${file}.wal`) && moved === undefined;
      if (whole && withRows && hadRows) {
        const db = await openUnlessHeld(file);
        if (db) return { file, ...(await buildIn(db, (conn) => withRowsIn(conn, lake, o.url))), inPlace: true };
        copyFileSync(file, tmp, constants.COPYFILE_FICLONE);
        built = await buildIn(await DuckDBInstance.create(tmp, settings()), (conn) => withRowsIn(conn, lake, o.url, file));
      } else built = await buildIn(await DuckDBInstance.create(tmp, settings()), (conn) => build(conn, lake, o.url, withRows, whole ? file : undefined));
    }
    // A WAL left by a writer of the old file that crashed would be replayed into the new one.
    rmSync(`${file}.wal`, { force: true });
    renameSync(tmp, file);
    return { file, ...built, ...(moved === undefined ? {} : { moved }) };
  } catch (err) {
    clean();
    if (err instanceof UsageError || err instanceof RunError) throw err;
    throw new RunError(`${label}: not written: ${(err as Error).message.split('\n')[0]}`);
  }
}
