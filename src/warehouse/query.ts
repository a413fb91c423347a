// Runs SQL on the warehouse and formats the result as a text table, CSV, or JSON (big numbers as
// strings, so that no reader rounds them). The table is for a terminal: its cells are inert (a
// token name may carry escape sequences). CSV and JSON are data for programs and keep every cell as
// it is; a CSV for a spreadsheet is `chainlake export --format csv`, which quotes formulas.
import type { DuckDBConnection } from '@duckdb/node-api';
import { textTable } from '../pipeline/report.js';
import { inert } from '../text.js';

export type Format = 'table' | 'csv' | 'json';

/** Runs every statement; the result of the last one is returned. */
export async function query(conn: DuckDBConnection, sql: string): Promise<{ columns: string[]; rows: Array<Record<string, unknown>> }> {
  const reader = await conn.runAndReadAll(sql);
  return { columns: reader.columnNames(), rows: reader.getRowObjectsJson() as Array<Record<string, unknown>> };
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function csvCell(v: unknown): string {
  const s = cell(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function format(result: { columns: string[]; rows: Array<Record<string, unknown>> }, f: Format): string {
  if (f === 'json') return JSON.stringify(result.rows, null, 1);
  if (f === 'csv') return [result.columns.map(csvCell).join(','), ...result.rows.map((r) => result.columns.map((c) => csvCell(r[c])).join(','))].join('\n');
  if (result.columns.length === 0) return '(no result)';
  return textTable(result.columns.map((c) => inert(c)), result.rows.map((r) => result.columns.map((c) => inert(cell(r[c]))))) + `\n(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`;
}
