// The warehouse as a file (docs/warehouse.md): a DuckDB database that analysts open with
// their own tools (the DuckDB CLI, Python, DBeaver, dashboards). By default it holds views and one
// small marker table, never the lake's rows: a view per lake table over its Parquet files by
// absolute path (viewSql, as `chainlake query` builds them), `_runs`, `_rejects`, and every bundled
// query of sql/ as a view of its file's name. With rows (`chainlake warehouse --rows`, kept by
// later rewrites until `--no-rows`) each table's view reads a copy of its rows in the file instead
// (warehouse/rows.ts). It is built in a temporary file next to the target (a file with rows: a copy
// of the old one, brought up to date) and renamed over it: a reader sees the old file or the new
// one, and a connection open on the old file keeps reading it. A file with rows that no program has
// open is brought up to date in place instead, in one transaction: copying it cost more than the
// rows a run adds. Only a file that carries the marker
// is replaced, so a database of the user's that happens to sit at the path is never overwritten,
// and only one of this lake (the marker names it) or of a lake that is gone (moved): a file never
// silently starts answering for another lake than the one it was written for.
import { closeSync, constants, copyFileSync, existsSync, lstatSync, openSync, readdirSync, readSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
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
import { defaultWarehousePath, FILES, MARKER, rowsCurrent, syncRows, type RowsSync } from './rows.js';
import { engineOptions, querySettings } from '../load/limits.js';
import { BLOOMS, CATALOGUE, writeCatalogue } from './prune.js';

export { defaultWarehousePath, MARKER };


/** DuckDB's main header starts with an 8-byte checksum and then these bytes. */
const DUCKDB_MAGIC = Buffer.from('DUCK');

/**
 * `ours`: the lake its marker says it is of: the folder its views read (`lake`), and for an s3://
 * lake its URL (`url`: the read copy's folder differs from one cache to another).
 */
type Found = { kind: 'absent' } | { kind: 'ours'; rows: boolean; lake: string; url?: string } | { kind: 'foreign' | 'busy'; why: string };

function hasDuckdbMagic(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(12);
    return readSync(fd, head, 0, 12, 0) === 12 && head.subarray(8, 12).equals(DUCKDB_MAGIC);
  } finally {
    closeSync(fd);
  }
}

/** What is at `file`: nothing, a warehouse chainlake wrote, someone else's file, or one a program holds open for writing. */
async function inspect(file: string): Promise<Found> {
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return { kind: 'absent' };
  }
  if (st.isDirectory()) return { kind: 'foreign', why: 'is a folder' };
  if (!st.isFile()) return { kind: 'foreign', why: 'is not a regular file' };
  if (!hasDuckdbMagic(file)) return { kind: 'foreign', why: 'is not a DuckDB database' };
  let db: DuckDBInstance;
  try {
    db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY', ...querySettings(engineOptions()) });
  } catch (err) {
    const message = (err as Error).message.split('\n')[0]!;
    // DuckDB locks a file it has open for writing: its owner may be writing to it right now.
    if (/Could not set lock|Conflicting lock/.test(message)) return { kind: 'busy', why: message };
    return { kind: 'foreign', why: `cannot be opened by this DuckDB (${message})` };
  }
  try {
    const conn = await db.connect();
    try {
      const r = await conn.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' AND table_name IN (${sqlString(MARKER)}, ${sqlString(FILES)})`);
      const names = new Set(r.getRows().map(([t]) => String(t)));
      if (!names.has(MARKER)) return { kind: 'foreign', why: `is a DuckDB database without chainlake's ${MARKER} table` };
      // A file from before the marker had lake_url has none.
      const marker = (await conn.runAndReadAll(`SELECT * FROM ${MARKER}`)).getRowObjects()[0] ?? {};
      return { kind: 'ours', rows: names.has(FILES), lake: String(marker.lake), ...(typeof marker.lake_url === 'string' ? { url: marker.lake_url } : {}) };
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
  const found = await inspect(file);
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

async function build(conn: DuckDBConnection, lake: string, url: string | undefined, withRows: boolean, previous?: string): Promise<Omit<WarehouseResult, 'file'>> {
  // Read before the views are made: a commit meanwhile (by a command that holds the lake now)
  // then differs from the file's inputs, and the next rewrite is made, not skipped.
  const inputs = viewInputs(lake);
  let rows: RowsSync | undefined;
  let only: Set<string> | undefined;
  if (withRows) {
    // The old file's views and marker go (the copy keeps its rows and ledger): made again below.
    const views = await conn.runAndReadAll(`SELECT view_name FROM duckdb_views() WHERE NOT internal AND database_name = current_database() AND schema_name = 'main'`);
    for (const [v] of views.getRows()) await conn.run(`DROP VIEW ${ident(String(v))}`);
    await conn.run(`DROP TABLE IF EXISTS ${MARKER}`);
    const { holding, ...changed } = await syncRows(conn, lake, LAKE_TABLES);
    rows = changed;
    only = new Set([...LAKE_TABLES.map((d) => d.table).filter((t) => !holding.has(t)), REJECTS, RUNS]);
  }
  // Every footer read once here, so that a tool's query reads them once, not twice (the file is
  // rewritten after each run, compaction and rebuild, which are what add files).
  // The views' amounts need each source's columns bound before its view is (amounts.ts): the
  // footers read for the first are kept for the second.
  await conn.run('SET GLOBAL parquet_metadata_cache = true');
  for (const sql of await viewSql(conn, lake, only, await oneSchemaTables(conn, lake, only))) await conn.run(sql);
  // The comments (a thousand and more, most of them columns') go to DuckDB as one batch of
  // statements at the end: one call each cost most of the file's build time.
  const comments: string[] = [];
  // Only columns the files have: a table's files from before a column was declared lack it.
  const have = new Map<string, string[]>();
  const columns = await conn.runAndReadAll(`SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main'`);
  for (const r of columns.getRowObjects()) {
    const table = String(r.table_name);
    let names = have.get(table);
    if (!names) have.set(table, (names = []));
    names.push(String(r.column_name));
  }
  for (const decl of LAKE_TABLES) {
    comments.push(comment(`VIEW ${ident(decl.table)}`, decl.doc));
    for (const name of have.get(decl.table) ?? []) {
      const doc = columnDoc(decl, name);
      if (doc) comments.push(comment(`COLUMN ${ident(decl.table)}.${ident(name)}`, doc));
    }
  }
  comments.push(comment(`VIEW ${REJECTS}`, 'rows that broke their schema, with the reason and the raw JSON'));
  comments.push(comment(`VIEW ${RUNS}`, 'run reports (_runs/*.json in the lake), one row per run'));
  const taken = new Set([...LAKE_TABLES.map((d) => d.table), REJECTS, RUNS, MARKER]);
  const skipped: WarehouseResult['skipped'] = [];
  let queries = 0;
  for (const q of bundledQueries()) {
    if (taken.has(q.name)) throw new Error(`sql/${q.file}: its view would be named ${q.name}, which is a table of the warehouse; rename the file`);
    try {
      await conn.run(`CREATE VIEW ${ident(q.name)} AS ${q.sql}`);
    } catch (err) {
      // A view is bound when it is made: one reading columns of a view this lake has no files for
      // yet (`_runs` before the first run) cannot be made until it has.
      const message = (err as Error).message.split('\n')[0]!;
      if (!message.startsWith('Binder Error')) throw new Error(`sql/${q.file}: ${message}`);
      skipped.push({ name: q.name, why: message });
      continue;
    }
    comments.push(comment(`VIEW ${ident(q.name)}`, `${q.comment} (sql/${q.file})`));
    queries++;
  }
  // Each data file's bounds and blooms, so that a query binds only the files it can need
  // (warehouse/prune.ts) without reading the manifests; the blooms of files the old file knew are kept.
  await writeCatalogue(conn, lake, LAKE_TABLES.map((d) => d.table), previous);
  await conn.run(`CREATE TABLE ${MARKER} AS SELECT ${sqlString(resolve(lake))} AS lake, ${url === undefined ? 'NULL::VARCHAR' : sqlString(url)} AS lake_url, now() AS written_at, ${sqlString(VERSION)} AS chainlake_version, ${sqlString(fingerprint())} AS build, ${sqlString(inputs)} AS inputs, ${sqlString(JSON.stringify(skipped))} AS skipped`);
  comments.push(comment(`TABLE ${MARKER}`, 'marks a warehouse file chainlake wrote: it replaces the whole file after each run, compact and rebuild that changed the lake, and `chainlake warehouse` rewrites it; inputs and skipped say what it was made from; lake (or lake_url, for an s3:// lake) is the lake it is of, and a file of another lake that still exists is never replaced'));
  comments.push(comment(`TABLE ${CATALOGUE}`, "each data file's bounds of the columns queries filter on (block, time, token, address, hash), from the tables' Iceberg manifests: `chainlake query` and the library read only the files a query's filter can match"));
  comments.push(comment(`TABLE ${BLOOMS}`, "a bloom filter of each data file's hashes (tx_hash, hash): `chainlake query` and the library read only the files that may hold a hash a query asks for"));
  if (rows) comments.push(comment(`TABLE ${FILES}`, 'the lake files whose rows this file holds (each table T in _rows_T, read by the view T); `chainlake warehouse --no-rows` makes the file views only'));
  await conn.run(comments.join(';\n'));
  return { tables: LAKE_TABLES.length + 2, queries, skipped, ...(rows ? { rows } : {}) };
}

/**
 * What this build of chainlake writes into every warehouse file besides the lake's own: the bundled
 * queries and the tables' declared columns and docs. A file written with another is rewritten.
 */
function fingerprint(): string {
  const tables = LAKE_TABLES.map((d) => [d.table, d.doc, viewColumns(d).map(([n, t]) => [n, t, columnDoc(d, n)])]);
  return createHash('sha256').update(JSON.stringify([VERSION, bundledQueries(), tables, CATALOGUE, BLOOMS])).digest('hex').slice(0, 16);
}

/**
 * What the file holds, when a rewrite would leave it as it is: it was written by this build for
 * this lake, every bundled query is a view in it (but those that could not be then), and the lake
 * is as it was for it. With rows: they are those of the lake's committed files, and `_runs` and
 * `_rejects` read files where the lake has them. Views only: the lake's committed files and
 * sources are those it was written from (viewInputs). Copying a big file, or reading every footer,
 * for nothing at every run that finds nothing new is what this spares.
 */
async function unchanged(file: string, lake: string, withRows: boolean): Promise<Omit<WarehouseResult, 'file'> | undefined> {
  const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY', ...querySettings(engineOptions()) });
  try {
    const conn = await db.connect();
    try {
      // A file from before the marker had its build, its inputs or its skipped queries: rewritten.
      const marker = (await conn.runAndReadAll(`SELECT lake, build, inputs, skipped FROM ${MARKER}`).catch(() => undefined))?.getRows()[0];
      if (!marker || marker[0] !== resolve(lake) || marker[1] !== fingerprint()) return undefined;
      const skipped = JSON.parse(String(marker[3])) as WarehouseResult['skipped'];
      const views = new Map((await conn.runAndReadAll(`SELECT view_name, sql FROM duckdb_views() WHERE NOT internal AND database_name = current_database() AND schema_name = 'main'`)).getRows().map(([v, sql]) => [String(v), String(sql)]));
      const queries = bundledQueries().filter((q) => !skipped.some((s) => s.name === q.name));
      if (!queries.every((q) => views.has(q.name))) return undefined;
      const same = { tables: LAKE_TABLES.length + 2, queries: queries.length, skipped, unchanged: true as const };
      if (!withRows) return marker[2] === viewInputs(lake) ? same : undefined;
      const has = sourcesOf(lake);
      if (has.runs !== (views.get(RUNS) ?? '').includes('read_json(') || has.rejects !== (views.get(REJECTS) ?? '').includes('read_parquet(')) return undefined;
      if (!(await rowsCurrent(conn, lake, LAKE_TABLES.map((d) => d.table)))) return undefined;
      const tables = Number((await conn.runAndReadAll(`SELECT count(DISTINCT table_name) FROM ${FILES}`)).getRows()[0]![0]);
      return { ...same, rows: { tables, added: 0, removed: 0, copied: 0 } };
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}

/** The warehouse built in `db` in one transaction, then checkpointed; `db` is closed after. */
async function buildIn(db: DuckDBInstance, lake: string, url: string | undefined, withRows: boolean, previous?: string): Promise<Omit<WarehouseResult, 'file'>> {
  try {
    const conn = await db.connect();
    try {
      // One transaction: the many small catalog changes are written once, at the commit.
      await conn.run('BEGIN');
      const built = await build(conn, lake, url, withRows, previous);
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
    return await DuckDBInstance.create(file, querySettings(engineOptions()));
  } catch (err) {
    if (/Could not set lock|Conflicting lock/.test((err as Error).message)) return undefined;
    throw err;
  }
}

/**
 * Writes the warehouse of `lake` to `file`: into `.<name>.tmp-<pid>` in the same folder, then
 * renamed over it; a file with rows that no program has open, in the file itself. Refuses (exit 2) a path that is not a file chainlake wrote, and (exit 1) one a
 * program holds open for writing, whose writes would be lost with the old file. `out` is the file
 * named by `flag`, if one was. `rows`: whether the file holds the tables' rows (warehouse/rows.ts);
 * when not given, as the old file does. A file that would not change is left as it is. `url`: the
 * s3:// lake whose read copy `lake` is. A file of another lake is refused (exit 2) unless that lake
 * is gone (moved): then it is replaced, its rows not reused.
 */
export async function writeWarehouse(lake: string, o: { out?: string; flag: string; rows?: boolean; url?: string }): Promise<WarehouseResult> {
  const file = targetOf(lake, o.out, o.flag);
  const label = labelOf(file, o.flag, o.out !== undefined);
  const found = await inspect(file);
  if (found.kind === 'foreign') throw refusal(file, o.flag, o.out !== undefined, found.why);
  const moved = movedLake(found, lake, o.url, file, o.flag, o.out !== undefined);
  if (found.kind === 'busy') throw new RunError(`${label}: is open for writing in another program (${found.why}); close it, or open it read-only (duckdb -readonly), and rerun`);
  removeStale(file);
  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}`);
  const clean = () => {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
  };
  clean();
  const hadRows = found.kind === 'ours' && found.rows;
  const withRows = o.rows ?? hadRows;
  // The old file is left as it is when nothing would change. Its rows are brought up to date in
  // the file itself when no program has it open (one transaction: a failure or a kill before its
  // commit leaves the old state, and DuckDB's checkpoint replaces the old blocks atomically), else
  // in a copy of it renamed over it, so that a reader keeps the file it opened. Unless a writer
  // left a WAL beside it (its last changes are not in the file alone): then it is written anew,
  // its rows copied whole.
  const whole = found.kind === 'ours' && !existsSync(`${file}.wal`) && moved === undefined;
  const fromOld = whole && withRows && hadRows;
  try {
    if (whole && withRows === hadRows) {
      const same = await unchanged(file, lake, withRows);
      if (same) return { file, ...same };
    }
    if (fromOld) {
      const db = await openUnlessHeld(file);
      if (db) return { file, ...(await buildIn(db, lake, o.url, withRows)), inPlace: true };
      copyFileSync(file, tmp, constants.COPYFILE_FICLONE);
    }
    const built = await buildIn(await DuckDBInstance.create(tmp, querySettings(engineOptions())), lake, o.url, withRows, whole ? file : undefined);
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
