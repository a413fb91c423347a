// The warehouse's rows (docs/warehouse.md, "Rows in the file"): with `chainlake warehouse --rows`
// the warehouse file holds a copy of every table's committed rows in DuckDB's own storage, where a
// query runs at DuckDB's own speed (Parquet read back costs about twice as much, and a fresh
// process pays for every footer). The lake stays the truth: the copy is kept by file, and a file
// ledger says which committed files it holds. Readers (`chainlake query`, the library) use a
// table's copy only when the ledger names exactly the files the table's states commit now; any
// other table is read from its Parquet files, so a stale copy is slower, never wrong.
//
// Layout inside the file, for a table T with committed files:
//   _rows_T            its rows, each with `_file` (the lake-relative file it came from), each
//                      amount as its exact BIGNUM (cast once, from its digits, as the rows come in)
//   T                  the view users query: _rows_T without `_file` (amounts.ts; a copy written
//                      before amounts were held as BIGNUM is cast by the view, until a rewrite copies it anew)
//   _chainlake_files   (table_name, file, rows): the files the copy holds
// A rewrite deletes the rows of files no longer committed and inserts the rows of new ones, in one
// transaction: in the file itself when no program has it open, else in a copy renamed over it
// (warehouse/file.ts). A run that added a few files costs their rows, not the table's.
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { DuckDBConnection } from './duckdb.js';
import type { StreamDecl } from '../decl/stream.js';
import { UsageError } from '../errors.js';
import { listParquet, MERGED_FROM, mergedFrom, sqlString, type MergedPart } from '../load/paths.js';
import { committedBefore, STATE, StateStore } from '../state/store.js';
import { lakeFile } from '../state/cache.js';
import { castAmounts, EXACT_TYPE, exactReplace, exactSelect } from './amounts.js';

/** The ledger of the files whose rows the warehouse file holds. */
export const FILES = '_chainlake_files';
/** The column of a rows table naming the file each row came from. */
export const FILE_COLUMN = '_file';
/** The name a reader attaches the warehouse file under. */
export const ROWS_DB = 'chainlake_rows';
/** The table that marks a file as a warehouse chainlake wrote (and may replace). */
export const MARKER = '_chainlake';

/** The table holding `table`'s rows. */
export const rowsTable = (table: string): string => `_rows_${table}`;

const quoted = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** The warehouse file of a lake when none is named: `<lake>.warehouse.duckdb`, beside the lake folder. */
export function defaultWarehousePath(lake: string): string {
  return lakeFile(lake, 'warehouse.duckdb');
}

/**
 * The warehouse file a reader of `lake` takes rows from (lakeDatabase's options): the one `given`
 * names, which must then be a warehouse (`label` says how it was named, for the message), none
 * for false, else the default one (`<lake>.warehouse.duckdb`).
 */
export function rowsFileOf(lake: string, given: string | false | undefined, label: string): { rowsFrom?: string; rowsNamed?: string } {
  if (given === false) return {};
  return given === undefined ? { rowsFrom: defaultWarehousePath(lake) } : { rowsFrom: given, rowsNamed: label };
}

/**
 * Each table's committed data files, lake-relative, in the order its states list them (a
 * partition's files in block order): the files its view reads. A table with files on disk and no
 * states (a lake from before states listed every file) has its folder's files.
 */
export function committedFiles(lake: string, tables: readonly string[]): Map<string, string[]> {
  const root = resolve(lake);
  const store = existsSync(join(root, STATE)) ? new StateStore(root) : undefined;
  const out = new Map<string, string[]>();
  for (const table of tables) {
    const states = store?.statesOf(table) ?? [];
    const dir = join(root, table);
    out.set(table, states.length ? states.flatMap(committedBefore) : existsSync(dir) ? listParquet(dir).map((f) => relative(root, f)) : []);
  }
  return out;
}

/** The view of a table's copy, in database `db` (the file's own when not given), its amounts exact as over the files. */
export async function rowsView(conn: DuckDBConnection, decl: StreamDecl, db?: string): Promise<string> {
  const from = db ? `${db}.main.${quoted(rowsTable(decl.table))}` : quoted(rowsTable(decl.table));
  return `CREATE OR REPLACE VIEW ${quoted(decl.table)} AS ${await exactSelect(conn, decl, from, FILE_COLUMN)}`;
}

export interface RowsSync {
  /** Tables whose rows the file holds. */
  tables: number;
  /** Files whose rows were inserted, and deleted, by this rewrite. */
  added: number;
  removed: number;
  /** Tables copied whole (new, or most of their rows replaced, or a column's type changed). */
  copied: number;
  /** Files a compaction made of files the copy held: their rows kept, under the new file's name. */
  kept: number;
}

type Ledger = Map<string, Map<string, bigint>>;

/** Whether a copy that holds `held` holds exactly `files`. */
function holdsExactly(held: ReadonlyMap<string, bigint> | undefined, files: readonly string[]): boolean {
  return (held?.size ?? 0) === files.length && files.every((f) => held!.has(f));
}

/**
 * Whether the rows of the warehouse file `conn` writes hold exactly the lake's committed files,
 * table by table, and no table besides `tables`: a rewrite would change no row.
 */
export async function rowsCurrent(conn: DuckDBConnection, lake: string, tables: readonly string[]): Promise<boolean> {
  const ledger = await ledgerOf(conn);
  if (!ledger) return false;
  const now = committedFiles(lake, tables);
  return [...ledger.keys()].every((t) => now.has(t)) && tables.every((t) => holdsExactly(ledger.get(t), now.get(t) ?? []));
}

async function ledgerOf(conn: DuckDBConnection, db?: string): Promise<Ledger | undefined> {
  const at = db ? `${db}.main.${FILES}` : FILES;
  let rows;
  try {
    rows = (await conn.runAndReadAll(`SELECT table_name, file, rows FROM ${at}`)).getRows();
  } catch {
    return undefined;
  }
  const out: Ledger = new Map();
  for (const [t, f, n] of rows) {
    let files = out.get(String(t));
    if (!files) out.set(String(t), (files = new Map()));
    files.set(String(f), BigInt(n as bigint));
  }
  return out;
}

const list = (root: string, files: readonly string[]) => `[${files.map((f) => sqlString(join(root, f))).join(', ')}]`;

/**
 * The rows of `files` (lake-relative) with the file each came from, columns lined up by name;
 * with `ranges`, only the rows at those places of the files ([from, to) of file_row_number).
 */
function rowsOf(root: string, files: readonly string[], ranges?: ReadonlyArray<[number, number]>): string {
  // The root's length as DuckDB counts characters (a JavaScript length counts UTF-16 units).
  const file = `substr(${FILE_COLUMN}, length(${sqlString(root)}) + 2) AS ${FILE_COLUMN}`;
  const read = `read_parquet(${list(root, files)}, union_by_name = true, hive_partitioning = false, filename = '${FILE_COLUMN}'${ranges ? ', file_row_number = true' : ''})`;
  if (!ranges) return `SELECT * EXCLUDE (${FILE_COLUMN}), ${file} FROM ${read}`;
  const where = ranges.map(([a, b]) => `(file_row_number >= ${a} AND file_row_number < ${b})`).join(' OR ');
  return `SELECT * EXCLUDE (${FILE_COLUMN}, file_row_number), ${file} FROM ${read} WHERE ${where}`;
}

/** Each file's row count, from its footer. */
async function rowCounts(conn: DuckDBConnection, root: string, files: readonly string[]): Promise<Map<string, bigint>> {
  const r = await conn.runAndReadAll(`SELECT file_name, num_rows FROM parquet_file_metadata(${list(root, files)})`);
  return new Map(r.getRows().map(([f, n]) => [relative(root, String(f)), BigInt(n as bigint)]));
}

/** A compacted file whose rows are those of files it names, in their order (MERGED_FROM). */
interface Merge {
  /** Its parts the copy holds: their rows stay, under the new file's name. */
  held: string[];
  /** Where in it the rows of the other parts are ([from, to) of its row numbers): copied from it. */
  ranges: Array<[number, number]>;
}

/**
 * Among `fresh` files, those a compaction made of files the copy holds some of (their footers say
 * which and how many rows each: MERGED_FROM), as Merges. Trusted only where every file named is
 * no longer committed and claimed by no other, each held one holds the rows said, and the rows add
 * up to the new file's; any other is copied as a new file.
 */
async function mergesOf(conn: DuckDBConnection, root: string, fresh: readonly string[], held: ReadonlyMap<string, bigint>, committed: ReadonlySet<string>, counts: ReadonlyMap<string, bigint>): Promise<Map<string, Merge>> {
  const r = await conn.runAndReadAll(`SELECT file_name, decode(value) FROM parquet_kv_metadata(${list(root, fresh)}) WHERE decode(key) = ${sqlString(MERGED_FROM)}`);
  const out = new Map<string, Merge>();
  const claimed = new Set<string>();
  for (const [name, value] of r.getRows()) {
    const file = relative(root, String(name));
    const parts: MergedPart[] | undefined = mergedFrom(String(value));
    if (!parts || out.has(file)) continue;
    const names = new Set(parts.map((p) => p.file));
    if (names.size !== parts.length || parts.some((p) => committed.has(p.file) || claimed.has(p.file))) continue;
    if (parts.some((p) => held.has(p.file) && held.get(p.file) !== BigInt(p.rows))) continue;
    if (BigInt(parts.reduce((n, p) => n + p.rows, 0)) !== counts.get(file) || !parts.some((p) => held.has(p.file))) continue;
    const merge: Merge = { held: [], ranges: [] };
    let at = 0;
    for (const p of parts) {
      if (held.has(p.file)) merge.held.push(p.file);
      else if (p.rows > 0) merge.ranges.push([at, at + p.rows]);
      at += p.rows;
    }
    for (const p of parts) claimed.add(p.file);
    out.set(file, merge);
  }
  return out;
}

async function columnsOf(conn: DuckDBConnection, sql: string): Promise<Map<string, string>> {
  const r = await conn.runAndReadAll(`DESCRIBE ${sql}`);
  return new Map(r.getRows().map(([name, type]) => [String(name), String(type)]));
}

/**
 * The rows of `files` as the copy holds them, and its columns: each amount as its exact BIGNUM
 * (amounts.ts), cast once here rather than by the view at every query, where it cost the copy a
 * query over amounts a third to twice the native table's time (docs/benchmarks.md).
 */
async function copyOf(conn: DuckDBConnection, decl: StreamDecl, root: string, files: readonly string[], ranges?: ReadonlyArray<[number, number]>): Promise<{ sql: string; columns: Map<string, string> }> {
  const raw = rowsOf(root, files, ranges);
  const columns = await columnsOf(conn, raw);
  const cast = castAmounts(decl, columns);
  if (!cast.length) return { sql: raw, columns };
  for (const a of cast) columns.set(a, EXACT_TYPE);
  return { sql: `SELECT *${exactReplace(cast)} FROM (${raw})`, columns };
}

/**
 * Brings the rows of the file `conn` writes (inside the caller's transaction) to the lake's
 * committed files: deletes those of files no longer committed, inserts those of new ones. Returns
 * what changed, and for each table with rows the statement of its view over them (`views`), which
 * the caller makes where the file's differs (an empty view for a table without files is the caller's).
 */
export async function syncRows(conn: DuckDBConnection, lake: string, tables: readonly StreamDecl[]): Promise<RowsSync & { views: Map<string, string> }> {
  const root = resolve(lake);
  const want = committedFiles(root, tables.map((d) => d.table));
  const ledger = (await ledgerOf(conn)) ?? new Map<string, Map<string, bigint>>();
  await conn.run(`CREATE TABLE IF NOT EXISTS ${FILES} (table_name VARCHAR NOT NULL, file VARCHAR NOT NULL, rows BIGINT NOT NULL)`);
  const out = { tables: 0, added: 0, removed: 0, copied: 0, kept: 0, views: new Map<string, string>() };
  /** A table's copy and its files in the ledger, gone. */
  const forget = async (t: string) => {
    await conn.run(`DROP TABLE IF EXISTS ${quoted(rowsTable(t))}`);
    await conn.run(`DELETE FROM ${FILES} WHERE table_name = ${sqlString(t)}`);
  };
  // A table this version does not declare (renamed or gone) is forgotten with the rest.
  const declared = new Set(tables.map((d) => d.table));
  for (const [t, held] of ledger) {
    if (declared.has(t)) continue;
    out.removed += held.size;
    await forget(t);
  }
  for (const decl of tables) {
    const t = decl.table;
    const files = want.get(t) ?? [];
    const held = ledger.get(t) ?? new Map<string, bigint>();
    const rows = quoted(rowsTable(t));
    if (!files.length) {
      out.removed += held.size;
      // Tables without files are most of a lake's: only one the ledger holds files of has a copy.
      if (held.size) await forget(t);
      continue;
    }
    const keep = new Set(files);
    const fresh = files.filter((f) => !held.has(f));
    // Row counts: the ledger's for the files it holds, the footers' for new ones.
    const counts = new Map([...held, ...(fresh.length ? await rowCounts(conn, root, fresh) : [])]);
    // A compaction's files keep the rows of the files they replace, renamed: a delete and an
    // insert would rewrite them and leave holes that DuckDB's checkpoint then vacuums.
    const merges = held.size && fresh.length ? await mergesOf(conn, root, fresh, held, keep, counts) : new Map<string, Merge>();
    const merged = new Set([...merges.values()].flatMap((m) => m.held));
    const gone = [...held.keys()].filter((f) => !keep.has(f) && !merged.has(f));
    const inserted = fresh.filter((f) => !merges.has(f));
    const record = (names: string[]) => conn.run(`INSERT INTO ${FILES} SELECT * FROM (VALUES ${names.map((f) => `(${sqlString(t)}, ${sqlString(f)}, ${counts.get(f) ?? 0n})`).join(', ')})`);
    let total = 0n;
    let dropped = 0n;
    for (const [f, n] of held) keep.has(f) || merged.has(f) ? (total += n) : (dropped += n);
    // Copied whole when new, when most of its rows go (deleting them would leave the storage full
    // of holes, and inserting is the work either way), or when a column changes type.
    let whole = held.size === 0 || dropped > total;
    // The rows to insert: new files', and those of a merged file's parts the copy did not hold.
    const inserts: Array<{ sql: string; columns: Map<string, string> }> = [];
    if (!whole) {
      if (inserted.length) inserts.push(await copyOf(conn, decl, root, inserted));
      for (const [file, m] of merges) if (m.ranges.length) inserts.push(await copyOf(conn, decl, root, [file], m.ranges));
    }
    if (inserts.length) {
      const have = await columnsOf(conn, `SELECT * FROM ${rows}`);
      for (const [name, type] of inserts.flatMap((i) => [...i.columns])) {
        const was = have.get(name);
        if (was === undefined) {
          await conn.run(`ALTER TABLE ${rows} ADD COLUMN ${quoted(name)} ${type}`);
          have.set(name, type);
        } else if (was !== type) whole = true;
      }
    }
    if (whole) {
      await forget(t);
      await conn.run(`CREATE TABLE ${rows} AS ${(await copyOf(conn, decl, root, files)).sql}`);
      await record(files);
      out.copied++;
      out.added += files.length;
      out.removed += held.size;
    } else {
      const names = (files: string[]) => files.map(sqlString).join(', ');
      for (const [file, m] of merges) await conn.run(`UPDATE ${rows} SET ${FILE_COLUMN} = ${sqlString(file)} WHERE ${FILE_COLUMN} IN (${names(m.held)})`);
      if (gone.length) await conn.run(`DELETE FROM ${rows} WHERE ${FILE_COLUMN} IN (${names(gone)})`);
      // The ledger: the files renamed or gone out, the merged and new ones in.
      const left = [...gone, ...merged];
      if (left.length) await conn.run(`DELETE FROM ${FILES} WHERE table_name = ${sqlString(t)} AND file IN (${names(left)})`);
      for (const i of inserts) await conn.run(`INSERT INTO ${rows} BY NAME ${i.sql}`);
      const entered = [...merges.keys(), ...inserted];
      if (entered.length) await record(entered);
      out.added += inserted.length;
      out.removed += gone.length;
      out.kept += merges.size;
    }
    out.views.set(t, await rowsView(conn, decl));
    out.tables++;
  }
  return out;
}

/**
 * The tables of `tables` whose rows the warehouse `file` holds for exactly the files the lake
 * commits now, with the file attached (read-only, as ROWS_DB) to `conn` when there is one; none
 * (and nothing attached) when the file is absent, is not a warehouse with rows, or cannot be
 * opened (a program holding it open for writing). A file the user named (`named`: how, for the
 * message) that is absent, is not a DuckDB database or is not a warehouse chainlake wrote is an
 * error: the default file may be any of these, a file asked for by name is a mistake.
 */
export async function currentRows(conn: DuckDBConnection, lake: string, file: string, tables: readonly string[], named?: string): Promise<Set<string>> {
  const served = new Set<string>();
  const wrong = (why: string) => new UsageError(`${named} ${file}: ${why}; name a file \`chainlake warehouse\` wrote`);
  if (!existsSync(file)) {
    if (named) throw wrong('no such file');
    return served;
  }
  if (!tables.length && !named) return served;
  // Attached by an earlier call on this database (the library binds its views as queries name
  // them): it stays, with the views that read it.
  const had = Number((await conn.runAndReadAll(`SELECT count(*) FROM duckdb_databases() WHERE database_name = ${sqlString(ROWS_DB)}`)).getRows()[0]![0]) > 0;
  try {
    if (!had) await conn.run(`ATTACH ${sqlString(file)} AS ${ROWS_DB} (READ_ONLY)`);
  } catch (err) {
    const message = (err as Error).message.split('\n')[0]!;
    // Held open for writing elsewhere: its rows may be changing, so the Parquet files are read.
    if (named && !/lock/i.test(message)) throw wrong(`cannot be read as a DuckDB database (${message})`);
    return served;
  }
  if (named) {
    const marked = (await conn.runAndReadAll(`SELECT count(*) FROM duckdb_tables() WHERE database_name = ${sqlString(ROWS_DB)} AND schema_name = 'main' AND table_name = ${sqlString(MARKER)}`)).getRows()[0]![0];
    if (Number(marked) === 0) {
      if (!had) await conn.run(`DETACH ${ROWS_DB}`);
      throw wrong(`is a DuckDB database without chainlake's ${MARKER} table`);
    }
  }
  const ledger = await ledgerOf(conn, ROWS_DB);
  if (ledger) {
    const now = committedFiles(lake, tables);
    for (const t of tables) {
      const files = now.get(t) ?? [];
      if (files.length && holdsExactly(ledger.get(t), files)) served.add(t);
    }
  }
  if (!served.size && !had) await conn.run(`DETACH ${ROWS_DB}`);
  return served;
}
