// The stages every run loads (state, load, iceberg, pipeline) take DuckDB's package by require
// (load/parquet.ts) and import only its types: an ES import of that CommonJS package has Node scan
// each of its files for export names at every start, a cost each run and each CLI a test spawns paid.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const STAGES = ['state', 'load', 'iceberg', 'pipeline', 'warehouse', 'cli'];

/** Each `import ... from '@duckdb/node-api'` of a module's text that brings values, not types only. */
function valueImports(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/^import\s+(type\s+)?([^;]*?)\s+from\s+'@duckdb\/node-api(?:[/'][^']*)?';/gms)) {
    if (m[1]) continue;
    const names = /^\{([^}]*)\}$/.exec(m[2]!.trim())?.[1]?.split(',').map((n) => n.trim()).filter(Boolean);
    if (names && names.every((n) => n.startsWith('type '))) continue;
    found.push(m[0]);
  }
  return found;
}

describe("DuckDB's package on a run's path", () => {
  it('is imported for its types only by the stages a run loads', () => {
    // The check tells the two apart, in every form the sources use.
    const cases: Array<[string, number]> = [
      ["import type { DuckDBConnection } from '@duckdb/node-api';", 0],
      ["import { type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';", 0],
      ["import type * as DuckDB from '@duckdb/node-api';", 0],
      ["import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';", 1],
      ["import {\n  VARCHAR,\n  type DuckDBType,\n} from '@duckdb/node-api';", 1],
      ["import * as duckdb from '@duckdb/node-api';", 1],
    ];
    for (const [line, n] of cases) expect(valueImports(`${line}\nexport {};\n`).length, line).toBe(n);
    const offenders: string[] = [];
    for (const stage of STAGES)
      for (const f of readdirSync(join('src', stage), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')))
        for (const i of valueImports(readFileSync(join('src', stage, f), 'utf8'))) offenders.push(`src/${stage}/${f}: ${i}`);
    expect(offenders).toEqual([]);
  });
});
