// What a reader of the lake's Parquet needs without DuckDB's writer: the files of a folder, and a
// path as an SQL string literal. Apart from parquet.ts so that `query` (views.ts) does not load the
// writer, which imports DuckDB the slow way at start-up (src/warehouse/duckdb.ts).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

export function listParquet(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.parquet')) out.push(join(d, e.name));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * The key of a compacted file's Parquet metadata naming the lake files it holds row for row (a
 * JSON list of lake-relative names): a warehouse file holding their rows keeps them, under the new
 * file's name, instead of deleting and copying them again (warehouse/rows.ts).
 */
export const MERGED_FROM = 'chainlake.merged_from';

/** The lake files a MERGED_FROM value names; undefined for a value that is not a list of names. */
export function mergedFrom(value: string): string[] | undefined {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  return Array.isArray(v) && v.length > 0 && v.every((f) => typeof f === 'string' && f !== '') ? (v as string[]) : undefined;
}
