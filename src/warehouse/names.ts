// The lake's table names, and which of them a query reads, without the tables' declarations
// (src/streams/): loading those is a fifth of `chainlake query`'s start-up, and SQL that names no
// table (`SELECT 1`) needs none of them.
import { LAKE_TABLE_NAMES } from '../tables.js';
import { didYouMean } from '../closest.js';

/** Every view of a lake: its tables' and the run reports' and rejects'. */
export const VIEW_NAMES: readonly string[] = [...LAKE_TABLE_NAMES, '_rejects', '_runs'];

/**
 * The lake's views that `sql` may read: each whose name appears in it as a word (none for SQL that
 * names none: `SELECT 1` starts as fast as DuckDB alone); all of them when it reads the catalog
 * (SHOW TABLES, information_schema, duckdb_views(), ...). A view binds its files when it is made
 * (every footer, by name), so a query of a few tables of a big lake need not pay for the others; a
 * name that is not a table read (in a comment, a string) only costs its view.
 */
export function viewsFor(sql: string): Set<string> | undefined {
  const words = new Set(sql.toLowerCase().match(/[a-z_][a-z0-9_]*/g) ?? []);
  if (['show', 'information_schema', 'pragma', 'summarize'].some((w) => words.has(w)) || [...words].some((w) => w.startsWith('duckdb_'))) return undefined;
  return new Set(VIEW_NAMES.filter((t) => words.has(t)));
}

/**
 * The tables a statement reads, from DuckDB's parse of it (`json_serialize_sql`): every base table
 * it names that is not one of its own CTEs. Unlike viewsFor's words, a column or an alias that
 * happens to be a table's name is not one.
 */
export function tablesRead(parsed: unknown): Set<string> {
  const tables = new Set<string>();
  const ctes = new Set<string>();
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(walk);
    if (x === null || typeof x !== 'object') return;
    const o = x as Record<string, unknown>;
    if (o.type === 'BASE_TABLE' && typeof o.table_name === 'string' && !o.schema_name) tables.add(o.table_name.toLowerCase());
    if (o.cte_map && typeof o.cte_map === 'object') for (const e of ((o.cte_map as { map?: Array<{ key?: unknown }> }).map ?? [])) if (typeof e.key === 'string') ctes.add(e.key.toLowerCase());
    for (const v of Object.values(o)) walk(v);
  };
  walk(parsed);
  for (const c of ctes) tables.delete(c);
  return tables;
}

/**
 * A query's error as the analyst should read it: a table the lake does not have is named with the
 * lake's closest tables (DuckDB suggests its own catalog's, such as pg_prepared_statements).
 */
export function queryError(message: string, tables: readonly string[]): string {
  const unknown = /Table with name ([^\s!]+) does not exist!/.exec(message);
  if (!unknown) return message;
  return `no table ${unknown[1]} in the lake${didYouMean(unknown[1]!, tables)} (\`chainlake tables\` lists every table; a table not fetched yet is empty)`;
}
