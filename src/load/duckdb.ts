// DuckDB's package, loaded once by require for every stage that uses its values. It is CommonJS:
// an ES import of it makes Node scan each of its files for export names (cjs-module-lexer) before
// the first line runs, at every start of a run or a query; require() loads the same files without
// the scan. It is the same module either way (an ES import of CommonJS goes through require's
// cache), so values from here and types from '@duckdb/node-api' mix. test/load/require.test.ts
// keeps the other modules to type imports.
//
// The bundles (scripts/bundle.mjs) carry the package as one file of their own beside them, named
// by DUCKDB_API at bundling: resolving and compiling its 180 files one by one was a fifth of
// `chainlake query`'s start-up CPU. Its native part (@duckdb/node-bindings) stays the package's.
import { createRequire } from 'node:module';
import type * as DuckDB from '@duckdb/node-api';

/** Replaced by the bundler with the file's path (relative to the bundle); undefined in tsc's output and the tests. */
declare const DUCKDB_API: string | undefined;

export const duckdb = createRequire(import.meta.url)(typeof DUCKDB_API === 'string' ? DUCKDB_API : '@duckdb/node-api') as typeof DuckDB;
