// Amounts as chainlake's SQL gives them (the views of `query`, the library and the warehouse file,
// over Parquet files or over the file's copy of the rows): an amount lands in Parquet as `<name>`
// DECIMAL(38,0), NULL over 38 digits (uint256 has up to 78), and `<name>_raw`, its digits as
// received; a view gives `<name>` as the BIGNUM of those digits, so that the sum, max and order an
// analyst writes over it are exact, and keeps `<name>_raw` as text. The Parquet files stay as they
// are: other engines read them, and Iceberg types them.
import type { DuckDBConnection } from './duckdb.js';
import type { StreamDecl } from '../decl/stream.js';
import { landedColumns, unitsOf, UNITS_SUFFIX } from '../transform/columns.js';

/** The DuckDB type of an amount in the views. */
export const EXACT_TYPE = 'BIGNUM';

const quoted = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** The amount columns of a table, by their declared names. */
export function amountsOf(decl: StreamDecl): string[] {
  return decl.columns.filter((c) => c.type === 'amount').map((c) => c.name);
}

/**
 * An amount as the views give it: from its digits, not its DECIMAL, which DuckDB cannot cast to
 * BIGNUM (and the text cast is cheaper than the one through HUGEINT: docs/benchmarks.md).
 */
function exactAmount(name: string): string {
  return `CAST(${quoted(`${name}_raw`)} AS ${EXACT_TYPE}) AS ${quoted(name)}`;
}

/**
 * An amount in whole units as the views give it: its digits as a DOUBLE over 10^decimals (NULL
 * where the decimals are unknown; an integer column's NULL does that). For reading and charts; a
 * total is exact from the amount itself.
 */
function unitsAmount(name: string, decimals: number | string, has: Set<string>): string {
  const d = typeof decimals === 'number' ? String(decimals) : has.has(decimals) ? quoted(decimals) : 'NULL';
  return `CAST(${quoted(`${name}_raw`)} AS DOUBLE) / power(10, ${d}) AS ${quoted(name + UNITS_SUFFIX)}`;
}

/** A table's columns in chainlake's SQL: its landed ones, an amount as BIGNUM, then its amounts in whole units. */
export function viewColumns(decl: StreamDecl): Array<[string, string]> {
  const amounts = new Set(amountsOf(decl));
  return [...landedColumns(decl).map(([n, t]): [string, string] => [n, amounts.has(n) ? EXACT_TYPE : t]), ...unitsOf(decl).map((u): [string, string] => [u.name + UNITS_SUFFIX, 'DOUBLE'])];
}

/** The columns of `from` (a table, a view or a table function's call) and their types, as bound now. */
async function columnTypes(conn: DuckDBConnection, from: string): Promise<Map<string, string>> {
  const r = await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${from}`);
  return new Map(r.getRows().map(([name, type]) => [String(name), String(type)]));
}

/**
 * The amounts of `decl` that a select over columns `columns` (with their types) casts from their
 * digits to BIGNUM: not one already BIGNUM (a warehouse file's copy of the rows holds it so:
 * warehouse/rows.ts), nor one whose two columns are not both there (files from before it was declared).
 */
export function castAmounts(decl: StreamDecl, columns: ReadonlyMap<string, string>): string[] {
  return amountsOf(decl).filter((a) => columns.has(`${a}_raw`) && columns.has(a) && columns.get(a) !== EXACT_TYPE);
}

/** ` REPLACE (...)` of a `SELECT *` with each amount of `cast` (castAmounts) as its exact BIGNUM; '' for none. */
export function exactReplace(cast: readonly string[]): string {
  return cast.length ? ` REPLACE (${cast.map(exactAmount).join(', ')})` : '';
}

/**
 * `SELECT * [EXCLUDE (exclude)] FROM from` with each amount of `decl` that `from` has as its exact
 * BIGNUM, and after them each amount in whole units (`<name>_units`). The columns are read first: files from before an amount was declared lack it, and
 * DuckDB refuses to replace a column that is not there.
 */
export async function exactSelect(conn: DuckDBConnection, decl: StreamDecl, from: string, exclude?: string): Promise<string> {
  const columns = amountsOf(decl).length ? await columnTypes(conn, from) : new Map<string, string>();
  const has = new Set(columns.keys());
  const units = unitsOf(decl).filter((u) => has.has(`${u.name}_raw`)).map((u) => `, ${unitsAmount(u.name, u.decimals, has)}`);
  return `SELECT *${exclude ? ` EXCLUDE (${quoted(exclude)})` : ''}${exactReplace(castAmounts(decl, columns))}${units.join('')} FROM ${from}`;
}

/**
 * An amount column of a view (BIGNUM) as the files hold it, DECIMAL(38,0) with NULL over 38
 * digits: for a Parquet export, which keeps the lake's types. BIGNUM's digits are without leading
 * zeros, so at most 38 of them fit; DuckDB has no BIGNUM to DECIMAL cast.
 */
export function landedAmount(column: string): string {
  const digits = `CAST(${quoted(column)} AS VARCHAR)`;
  return `CAST(CASE WHEN length(${digits}) <= 38 THEN CAST(${digits} AS HUGEINT) END AS DECIMAL(38,0))`;
}
