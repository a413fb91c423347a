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
 * The key of a compacted file's Parquet metadata naming the lake files whose rows it holds as they
 * were, in their order (a JSON list of [lake-relative name, rows]): a warehouse file holding the
 * rows of some of them keeps those, under the new file's name, instead of deleting and copying
 * them again (warehouse/rows.ts).
 */
export const MERGED_FROM = 'chainlake.merged_from';

/** One file a compacted file holds the rows of, and how many. */
export interface MergedPart {
  file: string;
  rows: number;
}

export function mergedFromValue(parts: readonly MergedPart[]): string {
  return JSON.stringify(parts.map((p) => [p.file, p.rows]));
}

/** The parts a MERGED_FROM value names; undefined for a value that is not a list of them. */
export function mergedFrom(value: string): MergedPart[] | undefined {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  const part = (x: unknown) => Array.isArray(x) && x.length === 2 && typeof x[0] === 'string' && x[0] !== '' && Number.isSafeInteger(x[1]) && (x[1] as number) >= 0;
  return Array.isArray(v) && v.length > 0 && v.every(part) ? (v as Array<[string, number]>).map(([file, rows]) => ({ file, rows })) : undefined;
}
