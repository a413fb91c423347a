// Pruning before DuckDB plans (issue 38): a query that filters a table on a column with constants
// (`block_number BETWEEN a AND b`, `block_timestamp >= '...'`, `token_address = '0x...'`, a tx
// hash) reads a view over only the files whose bounds can match, so that DuckDB neither reads the
// other files' footers nor plans over them. The bounds are those the table's Iceberg manifests keep
// for each data file (iceberg/stats.ts, written with every commit), so nothing is read from the
// Parquet files to prune. A file is left out only where its bounds rule it out for every place the
// query reads the table: anything not understood (a join, an OR, a function of a column, a
// statement that is not a SELECT, a file the manifests do not describe) keeps every file. Reading
// more files than needed is slower, never wrong: the query's own filter still runs over them.
// A hash is random, so its bounds rule out nothing: for those columns the warehouse file keeps a
// bloom filter of each file's values (writeBlooms), by which an equality leaves out the files
// that cannot hold its value.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DuckDBConnection } from './duckdb.js';
import { sqlString } from '../load/paths.js';
import { remember } from './kept.js';
import { compareValues, decodeBound } from '../iceberg/bounds.js';
import { currentSchema, currentSnapshot, versionFile, type TableMetadata } from '../iceberg/metadata.js';

type Value = bigint | number | string | boolean;

/** Inclusive bounds of a column; a side left out is open. */
export interface Range {
  lo?: Value;
  hi?: Value;
}

/** What one place that reads a table needs of it: a range per column, each row outside one is filtered out by the query. */
export type Need = Map<string, Range>;

/** The columns pruned on and how a constant compared with each becomes a bound (DuckDB's conversion, so that it means what the query's comparison means). */
const PRUNABLE: Record<string, 'long' | 'timestamptz' | 'string'> = {
  block_number: 'long',
  block_timestamp: 'timestamptz',
  token_address: 'string',
  from_address: 'string',
  to_address: 'string',
  tx_hash: 'string',
  address: 'string',
  hash: 'string',
};

type Node = Record<string, unknown>;
const isNode = (x: unknown): x is Node => typeof x === 'object' && x !== null;

const INTEGERS = ['INTEGER', 'BIGINT', 'HUGEINT', 'SMALLINT', 'TINYINT', 'UBIGINT', 'UINTEGER'];

/** The types of constant a column's comparison is taken for a bound with: those DuckDB compares as the column's values (a number against text would compare as numbers). */
const TAKES: Record<'long' | 'timestamptz' | 'string', string[]> = {
  long: [...INTEGERS, 'VARCHAR'],
  timestamptz: ['VARCHAR', 'TIMESTAMP WITH TIME ZONE', 'TIMESTAMP', 'DATE'],
  string: ['VARCHAR'],
};

/** The clock's values a query may name (`current_date` and `current_timestamp` parse as column references). */
const CLOCK_FUNCTIONS = ['now', 'get_current_timestamp', 'current_timestamp', 'transaction_timestamp', 'today', 'current_date'];

/** Functions of constants an interval or a time is written with (`INTERVAL 7 DAY` parses as to_days(CAST(trunc(CAST(7 AS DOUBLE)) AS INTEGER))). */
const INTERVAL_FUNCTIONS = ['to_years', 'to_months', 'to_weeks', 'to_days', 'to_hours', 'to_minutes', 'to_seconds', 'trunc'];

const CASTS = ['TIMESTAMP WITH TIME ZONE', 'TIMESTAMP', 'DATE', 'BIGINT', 'INTEGER', 'VARCHAR', 'DOUBLE', 'INTERVAL'];

/**
 * A constant of the query as SQL DuckDB can evaluate (a literal, a cast of one, or an arithmetic
 * of times and intervals) and its type (undefined where only evaluating it tells), else undefined.
 * `varies`: it reads the clock (now() - INTERVAL 7 DAY, current_date - 7).
 */
function constantSql(e: unknown): { sql: string; type?: string; varies?: boolean } | undefined {
  if (!isNode(e)) return undefined;
  if (e.type === 'VALUE_CONSTANT') {
    const v = e.value as { is_null: boolean; value: unknown; type: { id: string } };
    if (v.is_null) return undefined;
    if (v.type.id === 'VARCHAR') return { sql: sqlString(String(v.value)), type: 'VARCHAR' };
    if (INTEGERS.includes(v.type.id)) return { sql: String(v.value), type: v.type.id };
    return undefined;
  }
  if (e.type === 'OPERATOR_CAST' && !e.try_cast) {
    const inner = constantSql(e.child);
    const to = (e.cast_type as { id: string; type_info: unknown }).id;
    if (inner === undefined || !CASTS.includes(to)) return undefined;
    return { sql: `CAST(${inner.sql} AS ${to})`, type: to, ...(inner.varies ? { varies: true } : {}) };
  }
  if (e.type === 'COLUMN_REF') {
    const parts = e.column_names as string[];
    const name = parts.length === 1 ? parts[0]!.toLowerCase() : '';
    return ['current_date', 'current_timestamp'].includes(name) ? { sql: name, varies: true } : undefined;
  }
  if (e.type === 'FUNCTION' && !e.schema && !e.catalog && !e.distinct && !e.filter && !(e.order_bys as { orders?: unknown[] } | undefined)?.orders?.length) {
    const name = String(e.function_name).toLowerCase();
    const args = (e.children as unknown[]).map(constantSql);
    if (args.some((a) => a === undefined)) return undefined;
    const varies = CLOCK_FUNCTIONS.includes(name) || args.some((a) => a!.varies);
    const sqls = args.map((a) => a!.sql);
    // What reads the clock grows with it (the bound taken from it must: see boundsOf), so it is
    // never subtracted nor the argument of a function.
    if (e.is_operator && ['+', '-'].includes(name) && sqls.length === 2 && !(name === '-' && args[1]!.varies)) return { sql: `(${sqls[0]} ${name} ${sqls[1]})`, ...(varies ? { varies } : {}) };
    if (!e.is_operator && (CLOCK_FUNCTIONS.includes(name) ? !sqls.length : INTERVAL_FUNCTIONS.includes(name) && !varies)) return { sql: `${name}(${sqls.join(', ')})`, ...(varies ? { varies } : {}) };
  }
  return undefined;
}

interface Bound {
  column: string;
  side: 'lo' | 'hi' | 'eq' | 'in';
  /** The constant's SQL (a value of an IN list each). */
  sql: string[];
  /** Its type, where only evaluating it tells. */
  typed?: boolean;
  /** It reads the clock. */
  varies?: boolean;
}

/** The bounds one conjunct of a WHERE puts on the table's columns (`names`: how a column may be qualified). */
function boundsOf(e: Node, names: Set<string>): Bound[] {
  const column = (x: unknown): string | undefined => {
    if (!isNode(x) || x.type !== 'COLUMN_REF') return undefined;
    const parts = (x.column_names as string[]).map((p) => p.toLowerCase());
    const name = parts.length === 1 ? parts[0] : parts.length === 2 && names.has(parts[0]!) ? parts[1] : undefined;
    return name !== undefined && name in PRUNABLE ? name : undefined;
  };
  // A constant of a type known is taken where DuckDB compares it as the column's values; one
  // whose type only its evaluation tells (an arithmetic of times) is checked then (needsOf).
  const fits = (c: string, k: { type?: string } | undefined): k is { sql: string; type?: string; varies?: boolean } => k !== undefined && (k.type === undefined ? PRUNABLE[c] === 'timestamptz' : TAKES[PRUNABLE[c]!].includes(k.type));
  // The pruning evaluates the clock before the query does, so its now() is the earlier: a lower
  // bound from it is lower than the query's (keeps more), an upper bound or an equality would be
  // lower too and could leave out rows the query keeps.
  const bound = (c: string, side: Bound['side'], k: { sql: string; type?: string; varies?: boolean }): Bound[] => (k.varies && side !== 'lo' ? [] : [{ column: c, side, sql: [k.sql], ...(k.type === undefined ? { typed: true } : {}), ...(k.varies ? { varies: true } : {}) }]);
  if (e.type === 'COMPARE_BETWEEN') {
    const c = column(e.input);
    const lo = constantSql(e.lower);
    const hi = constantSql(e.upper);
    return c && fits(c, lo) && fits(c, hi) ? [...bound(c, 'lo', lo), ...bound(c, 'hi', hi)] : [];
  }
  if (e.type === 'COMPARE_IN') {
    const [first, ...rest] = e.children as unknown[];
    const c = column(first);
    const ks = rest.map(constantSql);
    // Values of one known type alone: DuckDB compares a list of several types as their common type.
    if (!c || !ks.length || !ks.every((k) => fits(c, k) && k.type !== undefined && !k.varies && k.type === ks[0]!.type)) return [];
    return [{ column: c, side: 'in', sql: ks.map((k) => k!.sql) }];
  }
  const flip = { COMPARE_EQUAL: 'COMPARE_EQUAL', COMPARE_GREATERTHAN: 'COMPARE_LESSTHAN', COMPARE_GREATERTHANOREQUALTO: 'COMPARE_LESSTHANOREQUALTO', COMPARE_LESSTHAN: 'COMPARE_GREATERTHAN', COMPARE_LESSTHANOREQUALTO: 'COMPARE_GREATERTHANOREQUALTO' } as Record<string, string>;
  if (!(String(e.type) in flip)) return [];
  let c = column(e.left);
  let k = constantSql(e.right);
  let type = String(e.type);
  if (!c) {
    c = column(e.right);
    k = constantSql(e.left);
    type = flip[type]!;
  }
  if (!c || !fits(c, k)) return [];
  // A strict comparison is taken as inclusive: a bound a little wide keeps a file, never drops one.
  return bound(c, type === 'COMPARE_EQUAL' ? 'eq' : type.startsWith('COMPARE_GREATERTHAN') ? 'lo' : 'hi', k);
}

/** The conjuncts of a WHERE (its ANDs flattened). */
function conjuncts(e: unknown): Node[] {
  if (!isNode(e)) return [];
  if (e.type === 'CONJUNCTION_AND') return (e.children as unknown[]).flatMap(conjuncts);
  return [e];
}

/**
 * For each table of `tables` that `sql` reads, what each place reading it needs as bounds (SQL of
 * constants, not yet evaluated), or undefined when some place needs every row or the SQL cannot be
 * read so (not only SELECTs, or the table named some other way than as a table of a FROM).
 */
async function placesOf(conn: DuckDBConnection, sql: string, tables: readonly string[]): Promise<Map<string, Bound[][] | undefined>> {
  const key = JSON.stringify([sql, tables]);
  const known = parsedPlaces.get(key);
  if (known) return known;
  return remember(parsedPlaces, key, await parsePlaces(conn, sql, tables), PARSED_KEPT);
}

/**
 * What placesOf read of the SQL last asked, by its text and tables: reading it is a pure function
 * of them, and a process that runs the same query again (the library behind a dashboard) would
 * otherwise parse it again, a statement to DuckDB each time. Evaluating the constants (needsOf)
 * is kept apart: what reads the clock moves.
 */
const parsedPlaces = new Map<string, Map<string, Bound[][] | undefined>>();
const PARSED_KEPT = 64;

async function parsePlaces(conn: DuckDBConnection, sql: string, tables: readonly string[]): Promise<Map<string, Bound[][] | undefined>> {
  const out = new Map<string, Bound[][] | undefined>(tables.map((t) => [t, undefined]));
  let parsed: { error: boolean; statements?: unknown[] };
  try {
    parsed = JSON.parse(String((await conn.runAndReadAll(`SELECT json_serialize_sql(${sqlString(sql)})`)).getRows()[0]![0]));
  } catch {
    return out;
  }
  if (parsed.error || !parsed.statements) return out;
  const places = new Map<string, Bound[][]>(tables.map((t) => [t, []]));
  const everything = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(visit);
    if (!isNode(x)) return;
    if (x.type === 'SELECT_NODE' && isNode(x.from_table) && x.from_table.type === 'BASE_TABLE') {
      const from = x.from_table;
      const table = String(from.table_name).toLowerCase();
      if (places.has(table) && !from.catalog_name && (!from.schema_name || String(from.schema_name).toLowerCase() === 'main')) {
        const names = new Set([table, String(from.alias ?? '').toLowerCase()].filter(Boolean));
        places.get(table)!.push(conjuncts(x.where_clause).flatMap((c) => boundsOf(c, names)));
        seen.add(from);
      }
    }
    if (x.type === 'BASE_TABLE' && !seen.has(x)) {
      const table = String(x.table_name).toLowerCase();
      if (places.has(table)) everything.add(table);
    }
    for (const v of Object.values(x)) visit(v);
  };
  visit(parsed.statements);
  // Each mention of a table's name must be one of the places found: a name in a string
  // (query_table('t'), query('...')) reads the view unseen. A qualified column (t.x) is no place.
  const lower = sql.toLowerCase();
  for (const [t, found] of places) {
    const mentions = lower.match(new RegExp(`(?<![a-z0-9_$])${t}(?![a-z0-9_$]|"?\\s*\\.)`, 'g'))?.length ?? 0;
    if (everything.has(t) || found.length === 0 || mentions !== found.length || found.some((b) => b.length === 0)) continue;
    out.set(t, found);
  }
  return out;
}

/** Alternatives of a place's IN lists past which their values are taken as one range (lowest to highest). */
const MAX_ALTERNATIVES = 4096;

/**
 * The bounds as values of each column's type, each constant evaluated by DuckDB (in the connection's
 * time zone, as the query's own comparison): for each place, the ranges a row it keeps is in, one
 * set of ranges for each value of its IN lists (a row is kept where it is in one of them).
 */
async function needsOf(conn: DuckDBConnection, places: Bound[][]): Promise<Need[]> {
  // Constants that do not read the clock evaluate to the same values every time (in UTC, the zone
  // evaluate sets): those evaluated last are kept, statements to DuckDB saved a query.
  const key = places.some((p) => p.some((b) => b.varies)) ? undefined : JSON.stringify(places);
  const known = key === undefined ? undefined : evaluated.get(key);
  if (known) return known;
  const out = await evaluate(conn, places);
  return key === undefined ? out : remember(evaluated, key, out, PARSED_KEPT);
}

/** The needs of places whose constants do not read the clock, by the places (needsOf). */
const evaluated = new Map<string, Need[]>();

async function evaluate(conn: DuckDBConnection, places: Bound[][]): Promise<Need[]> {
  // Constants are read in the zone every query runs in (connectWarehouse).
  await conn.run("SET TimeZone = 'UTC'");
  const typedOf = (b: Bound) => (b.typed ? b.sql.map((sql) => `typeof(${sql})`) : []);
  const valueOf = (b: Bound, sql: string) => (PRUNABLE[b.column] === 'long' ? `CAST(${sql} AS BIGINT)::VARCHAR` : PRUNABLE[b.column] === 'timestamptz' ? `epoch_us(CAST(${sql} AS TIMESTAMPTZ))::VARCHAR` : `CAST(${sql} AS VARCHAR)`);
  const exprs = places.flat().flatMap((b) => [...typedOf(b), ...b.sql.map((sql) => valueOf(b, sql))]);
  const row = (await conn.runAndReadAll(`SELECT ${exprs.join(', ')}`)).getRows()[0]!;
  let i = 0;
  const narrowed = (need: Need, column: string, lo: Value | undefined, hi: Value | undefined): Need => {
    const r = { ...(need.get(column) ?? {}) };
    if (lo !== undefined && (r.lo === undefined || compareValues(lo, r.lo) > 0)) r.lo = lo;
    if (hi !== undefined && (r.hi === undefined || compareValues(hi, r.hi) < 0)) r.hi = hi;
    return new Map(need).set(column, r);
  };
  return places.flatMap((bounds) => {
    let alternatives: Need[] = [new Map()];
    for (const b of bounds) {
      for (const t of typedOf(b).map(() => String(row[i++]))) if (!TAKES[PRUNABLE[b.column]!].includes(t)) throw new Error(`${b.column} compared with a ${t}`);
      const values = b.sql.map(() => String(row[i++])).map((text): Value => (PRUNABLE[b.column] === 'string' ? text : BigInt(text)));
      if (b.side !== 'in') {
        alternatives = alternatives.map((n) => narrowed(n, b.column, b.side === 'hi' ? undefined : values[0], b.side === 'lo' ? undefined : values[0]));
      } else if (alternatives.length * values.length <= MAX_ALTERNATIVES) {
        alternatives = alternatives.flatMap((n) => values.map((v) => narrowed(n, b.column, v, v)));
      } else {
        const sorted = [...values].sort(compareValues);
        alternatives = alternatives.map((n) => narrowed(n, b.column, sorted[0], sorted[sorted.length - 1]));
      }
    }
    return alternatives;
  });
}

/** A data file's bounds by column, as its table's manifests keep them. */
export type FileBounds = Map<string, Range>;

/** A data file as its table's manifests describe it: its bounds, and which columns it has (their ids). */
export interface Described {
  bounds: FileBounds;
  columns: string;
}

/**
 * The manifests read last, by metadata file: decoding them costs far more than a selective query
 * (a long-lived process, the library, reads them once per version of the table).
 */
const read = new Map<string, Map<string, Described>>();
const READ_KEPT = 16;

/**
 * Each data file (lake-relative) of the table's current Iceberg snapshot with its columns' bounds;
 * undefined where the table has no metadata or it cannot be read (then nothing is pruned).
 */
export async function snapshotBounds(lake: string, table: string): Promise<Map<string, Described> | undefined> {
  const root = resolve(lake);
  const dir = join(root, table, 'metadata');
  try {
    const hint = join(dir, 'version-hint.text');
    if (!existsSync(hint)) return undefined;
    let n = Number(readFileSync(hint, 'utf8').trim());
    // A writer makes its version before it moves the hint on.
    while (existsSync(join(dir, versionFile(n + 1)))) n++;
    // A version file is written once (a new number for every change).
    const at = join(dir, versionFile(n));
    const known = read.get(at);
    if (known) return known;
    // Loaded here, not at the top: Avro's decoder costs a query that reads the catalogue instead.
    const { readManifest, readManifestList } = await import('../iceberg/avro.js');
    const metadata = JSON.parse(readFileSync(at, 'utf8')) as TableMetadata;
    const snap = currentSnapshot(metadata);
    const schema = currentSchema(metadata);
    if (!snap || !schema) return undefined;
    // Files are named by URIs under the metadata's own location (the lake where it was written).
    const base = metadata.location.slice(0, metadata.location.lastIndexOf('/') + 1);
    const key = (uri: string) => {
      if (!uri.startsWith(base)) throw new Error(`${uri} is outside ${base}`);
      return decodeURI(uri.slice(base.length));
    };
    const fields = schema.fields.filter((f) => f.name in PRUNABLE && f.type === PRUNABLE[f.name]);
    const out = new Map<string, Described>();
    for (const mf of readManifestList(readFileSync(join(root, key(snap['manifest-list']))))) {
      for (const e of readManifest(readFileSync(join(root, key(mf.path)))).entries) {
        if (e.status === 2) continue;
        const bounds: FileBounds = new Map();
        for (const f of fields) {
          const lo = e.file.lowerBounds?.get(f.id);
          const hi = e.file.upperBounds?.get(f.id);
          const t = f.type as 'long' | 'timestamptz' | 'string';
          bounds.set(f.name, { ...(lo ? { lo: decodeBound(t, lo) } : {}), ...(hi ? { hi: decodeBound(t, hi) } : {}) });
        }
        out.set(key(e.file.path), { bounds, columns: [...(e.file.valueCounts?.keys() ?? [])].sort((a, b) => a - b).join(',') });
      }
    }
    return remember(read, at, out, READ_KEPT);
  } catch {
    return undefined;
  }
}

/** Whether a file with `bounds` may hold a row that `need` keeps (a column without a bound may hold anything). */
export function mayMatch(bounds: FileBounds | undefined, need: Need): boolean {
  if (!bounds) return true;
  for (const [column, want] of need) {
    const has = bounds.get(column);
    if (!has) continue;
    if (want.lo !== undefined && want.hi !== undefined && compareValues(want.lo, want.hi) > 0) return false;
    if (want.lo !== undefined && has.hi !== undefined && compareValues(has.hi, want.lo) < 0) return false;
    if (want.hi !== undefined && has.lo !== undefined && compareValues(has.lo, want.hi) > 0) return false;
  }
  return true;
}

/** Where a table's files are described: the warehouse file's catalogue, else its manifests. */
export type DescribedOf = (table: string) => Promise<Map<string, Described> | undefined>;

/** The catalogue of file bounds a warehouse file keeps (writeCatalogue), so that a query reads one small table, not the manifests. */
export const CATALOGUE = '_chainlake_bounds';

/**
 * Writes into the database `conn` writes the catalogue of every data file of `tables` that their
 * manifests describe (those with columns pruned on), and their blooms (writeBlooms: those of
 * `previous` kept). Read back by catalogueIn and bloomProbe.
 */
export async function writeCatalogue(conn: DuckDBConnection, lake: string, tables: readonly string[], previous?: string): Promise<void> {
  await conn.run(`CREATE OR REPLACE TABLE ${CATALOGUE} (table_name VARCHAR NOT NULL, file VARCHAR NOT NULL, columns VARCHAR NOT NULL, bounds VARCHAR NOT NULL)`);
  const rows: string[] = [];
  const described = new Map<string, Map<string, Described>>();
  for (const t of tables) {
    const files = await snapshotBounds(lake, t);
    if (files) described.set(t, files);
    for (const [file, d] of files ?? []) {
      const bounds = Object.fromEntries([...d.bounds].map(([c, r]) => [c, [r.lo === undefined ? null : String(r.lo), r.hi === undefined ? null : String(r.hi)]]));
      rows.push(`(${sqlString(t)}, ${sqlString(file)}, ${sqlString(d.columns)}, ${sqlString(JSON.stringify(bounds))})`);
    }
  }
  for (let i = 0; i < rows.length; i += 1000) await conn.run(`INSERT INTO ${CATALOGUE} VALUES ${rows.slice(i, i + 1000).join(', ')}`);
  await writeBlooms(conn, lake, described, previous);
}

/** The catalogue of `tables` in database `db` attached to `conn`; none where it has none. */
export async function catalogueIn(conn: DuckDBConnection, db: string, tables: readonly string[]): Promise<Map<string, Map<string, Described>>> {
  const out = new Map<string, Map<string, Described>>();
  if (!tables.length) return out;
  let rows;
  try {
    rows = (await conn.runAndReadAll(`SELECT table_name, file, columns, bounds FROM ${db}.main.${CATALOGUE} WHERE table_name IN (${tables.map(sqlString).join(', ')})`)).getRows();
  } catch {
    return out;
  }
  for (const [t, file, columns, json] of rows) {
    let files = out.get(String(t));
    if (!files) out.set(String(t), (files = new Map()));
    const bounds: FileBounds = new Map();
    for (const [c, [lo, hi]] of Object.entries(JSON.parse(String(json)) as Record<string, [string | null, string | null]>)) {
      const of = (v: string | null) => (v === null ? undefined : PRUNABLE[c] === 'string' ? v : BigInt(v));
      const r: Range = {};
      if (lo !== null) r.lo = of(lo)!;
      if (hi !== null) r.hi = of(hi)!;
      bounds.set(c, r);
    }
    files.set(String(file), { bounds, columns: String(columns) });
  }
  return out;
}

/** Columns of random values (hashes), whose bounds rule out nothing: each file gets a bloom filter of them. */
const INDEXED = ['tx_hash', 'hash'];

/** The bloom filters of the files' INDEXED columns a warehouse file keeps (writeBlooms), read by bloomProbe. */
export const BLOOMS = '_chainlake_blooms';

/** Bits a value and bit positions a value (a false positive about 1% of the time; the index about 1.5 bytes a row). */
const BLOOM_BITS = 12;
const BLOOM_HASHES = 3;

/**
 * The number a value's bits are taken from: 60 bits of its hex digits, which are random in a hash,
 * so no hash function is needed (and none whose results a DuckDB release could change); NULL where
 * they are not hex (a file with such a value gets no bloom).
 */
const bloomKey = (x: string) => `TRY_CAST('0x' || substr(${x}, 3, 15) AS UBIGINT)`;

/** The bit positions of key `k` in `m` bits: two numbers from the key, combined (double hashing). */
const bloomBits = (k: string, m: string) => Array.from({ length: BLOOM_HASHES }, (_, i) => `((${k} % ${m}) + ${i} * ((${k} // ${m}) % ${m})) % ${m}`);

/**
 * Writes into the database `conn` writes a bloom filter of each INDEXED column of every data file
 * its catalogue describes (`files`: table -> lake-relative files with the columns they have). A
 * file's bloom is made once in its life (a file's name is never reused for other rows): those the
 * database already holds or `previous` (the warehouse file this one replaces) holds are kept, the
 * others read from the file's column.
 */
export async function writeBlooms(conn: DuckDBConnection, lake: string, files: ReadonlyMap<string, ReadonlyMap<string, Described>>, previous?: string): Promise<void> {
  const root = resolve(lake);
  await conn.run(`CREATE OR REPLACE TEMP TABLE chainlake_kept_blooms (table_name VARCHAR, file VARCHAR, column_name VARCHAR, bits BIT)`);
  // Looked up, not tried: an error inside the caller's transaction would end it.
  const keep = async (db: string) => {
    const has = await conn.runAndReadAll(`SELECT count(*) FROM duckdb_tables() WHERE database_name = ${db === 'main' ? 'current_database()' : sqlString(db)} AND schema_name = 'main' AND table_name = ${sqlString(BLOOMS)}`);
    if (Number(has.getRows()[0]![0]) > 0) await conn.run(`INSERT INTO temp.chainlake_kept_blooms SELECT table_name, file, column_name, bits FROM ${db === 'main' ? '' : `${db}.`}main.${BLOOMS}`);
  };
  // The file being rewritten in place (or a copy of it) holds its own blooms; else the file it
  // replaces, attached until the database is closed (a transaction that read it cannot detach it).
  await keep('main');
  if (previous !== undefined && existsSync(previous)) {
    let attached = true;
    try {
      await conn.run(`ATTACH IF NOT EXISTS ${sqlString(previous)} AS chainlake_previous (READ_ONLY)`);
    } catch {
      // Held open for writing elsewhere, or not a database: the blooms are made.
      attached = false;
    }
    if (attached) await keep('chainlake_previous');
  }
  await conn.run(`CREATE OR REPLACE TABLE ${BLOOMS} (table_name VARCHAR NOT NULL, file VARCHAR NOT NULL, column_name VARCHAR NOT NULL, bits BIT NOT NULL)`);
  const wanted = [...files].flatMap(([table, described]) => [...described].flatMap(([file, d]) => INDEXED.filter((c) => d.bounds.has(c)).map((column) => [table, file, column] as const)));
  const key = (t: string, f: string, c: string) => JSON.stringify([t, f, c]);
  const done = new Set<string>();
  for (let i = 0; i < wanted.length; i += 1000) {
    const list = wanted.slice(i, i + 1000).map((w) => `(${w.map(sqlString).join(', ')})`).join(', ');
    const kept = await conn.runAndReadAll(`INSERT INTO ${BLOOMS} SELECT DISTINCT ON (k.table_name, k.file, k.column_name) k.* FROM temp.chainlake_kept_blooms k JOIN (VALUES ${list}) w(t, f, c) ON k.table_name = w.t AND k.file = w.f AND k.column_name = w.c RETURNING table_name, file, column_name`);
    for (const [t, f, c] of kept.getRows()) done.add(key(String(t), String(f), String(c)));
  }
  for (const [table, file, column] of wanted) {
    if (done.has(key(table, file, column))) continue;
    const path = sqlString(join(root, file));
    const rows = Number((await conn.runAndReadAll(`SELECT count(*) FROM read_parquet(${path})`)).getRows()[0]![0]);
    if (!rows) continue;
    const m = String(Math.max(64, rows * BLOOM_BITS));
    const c = `"${column}"`;
    // A value whose key is not hex would be missed by its file's bloom: such a file gets none.
    await conn.run(
      `INSERT INTO ${BLOOMS} SELECT ${sqlString(table)}, ${sqlString(file)}, ${sqlString(column)}, bits FROM (SELECT ${bloomBits('k', m).map((p) => `bitstring_agg(${p}, 0, ${m} - 1)`).join(' | ')} AS bits, count(*) FILTER (k IS NULL) AS unkeyed FROM (SELECT ${bloomKey(c)} AS k FROM read_parquet(${path}) WHERE ${c} IS NOT NULL)) WHERE unkeyed = 0 AND bits IS NOT NULL`,
    );
  }
  await conn.run('DROP TABLE temp.chainlake_kept_blooms');
}

/** For a table's INDEXED column and the values an equality names, the files that cannot hold each value. */
export type BloomProbe = (table: string, column: string, values: readonly string[]) => Promise<Map<string, Set<string>>>;

/** A BloomProbe over the blooms of the database `db` attached to `conn`; none where it has none. */
export function bloomProbe(conn: DuckDBConnection, db: string): BloomProbe {
  return async (table, column, values) => {
    const out = new Map<string, Set<string>>();
    if (!values.length) return out;
    const m = 'bit_length(b.bits)';
    const k = bloomKey('v.x');
    let rows;
    try {
      rows = (await conn.runAndReadAll(
        `SELECT v.x, b.file FROM ${db}.main.${BLOOMS} b, (VALUES ${values.map((x) => `(${sqlString(x)})`).join(', ')}) v(x) WHERE b.table_name = ${sqlString(table)} AND b.column_name = ${sqlString(column)} AND ${k} IS NOT NULL AND NOT (${bloomBits(k, m).map((p) => `get_bit(b.bits, CAST(${p} AS INTEGER)) = 1`).join(' AND ')})`,
      )).getRows();
    } catch {
      return out;
    }
    for (const [x, file] of rows) {
      let files = out.get(String(x));
      if (!files) out.set(String(x), (files = new Set()));
      files.add(String(file));
    }
    return out;
  };
}

/**
 * The files each table of `tables` needs read for `sql`, where fewer than all of `committed`
 * (lake-relative, per table): the tables left out read every file. A file not described (committed
 * after the catalogue was written) is read. At least one described file is kept, so that the view
 * has the table's columns. `probe`: the files' blooms, which leave out a file for an equality on a
 * hash its bloom says it cannot hold.
 */
export async function prunedFiles(conn: DuckDBConnection, lake: string, sql: string, committed: ReadonlyMap<string, readonly string[]>, describedOf: DescribedOf = (t) => snapshotBounds(lake, t), probe?: BloomProbe): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const tables = [...committed.keys()].filter((t) => (committed.get(t)?.length ?? 0) > 1);
  if (!tables.length) return out;
  for (const [table, places] of await placesOf(conn, sql, tables)) {
    if (!places) continue;
    const all = committed.get(table)!;
    const described = await describedOf(table);
    const known = all.filter((f) => described?.has(f));
    // The described files all with the same columns: a view over some of them (and every file not
    // described) has the columns of the view over all.
    if (!described || !known.length || new Set(known.map((f) => described.get(f)!.columns)).size !== 1) continue;
    let needs: Need[];
    try {
      needs = await needsOf(conn, places);
    } catch {
      // A constant DuckDB cannot convert (out of range, not a time): the query says so itself.
      continue;
    }
    const absent = await absentFrom(table, needs, probe);
    const keep = all.filter((f) => !described.has(f) || needs.some((n) => mayMatch(described.get(f)!.bounds, n) && !absent(f, n)));
    if (!keep.some((f) => described.has(f))) keep.unshift(known[0]!);
    if (keep.length < all.length) out.set(table, keep);
  }
  return out;
}

/**
 * Whether a need's equality on an INDEXED column names a value the file's bloom says it cannot hold
 * (the query's filter would drop every row the file has); false for a file or a value unknown to
 * the blooms.
 */
async function absentFrom(table: string, needs: Need[], probe: BloomProbe | undefined): Promise<(file: string, need: Need) => boolean> {
  const equal = (n: Need, column: string): string | undefined => {
    const r = n.get(column);
    return r && typeof r.lo === 'string' && r.lo === r.hi ? r.lo : undefined;
  };
  const ruledOut = new Map<string, Map<string, Set<string>>>();
  for (const column of probe ? INDEXED : []) {
    const values = [...new Set(needs.map((n) => equal(n, column)).filter((v) => v !== undefined))];
    if (values.length) ruledOut.set(column, await probe!(table, column, values));
  }
  return (file, need) => [...ruledOut].some(([column, out]) => {
    const v = equal(need, column);
    return v !== undefined && (out.get(v)?.has(file) ?? false);
  });
}
