// DuckDB for the modules `chainlake query` loads. The package is CommonJS: an ES import of it makes
// Node scan every one of its ~90 files for export names (cjs-module-lexer) before the first line
// runs, 0.2-0.3 s of CPU at each start; require() loads the same files without the scan. It is the
// same module either way (an ES import of CommonJS goes through require's cache), so values and
// types from here and from '@duckdb/node-api' mix. Modules off the query path import the package.
import { createRequire } from 'node:module';
import type * as DuckDB from '@duckdb/node-api';

const duckdb = createRequire(import.meta.url)('@duckdb/node-api') as typeof DuckDB;

export const DuckDBInstance = duckdb.DuckDBInstance;
export type DuckDBInstance = DuckDB.DuckDBInstance;
export const DuckDBTypeId = duckdb.DuckDBTypeId;
export type DuckDBTypeId = DuckDB.DuckDBTypeId;
export type { DuckDBConnection, DuckDBResult } from '@duckdb/node-api';
