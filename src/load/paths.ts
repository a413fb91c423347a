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
