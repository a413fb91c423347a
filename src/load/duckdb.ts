// DuckDB's package, loaded once by require for every stage that uses its values. It is CommonJS:
// an ES import of it makes Node scan each of its files for export names (cjs-module-lexer) before
// the first line runs, at every start of a run or a query; require() loads the same files without
// the scan. It is the same module either way (an ES import of CommonJS goes through require's
// cache), so values from here and types from '@duckdb/node-api' mix. test/load/require.test.ts
// keeps the other modules to type imports.
import { createRequire } from 'node:module';
import type * as DuckDB from '@duckdb/node-api';

export const duckdb = createRequire(import.meta.url)('@duckdb/node-api') as typeof DuckDB;
