// Runs SQL on the warehouse and formats the result as a text table, CSV, or JSON (big numbers as
// strings, so that no reader rounds them). The table is for a terminal: its cells are inert (a
// token name may carry escape sequences). CSV and JSON are data for programs and keep every cell as
// it is; a CSV for a spreadsheet is `chainlake export --format csv`, which quotes formulas.
// `chainlake query` writes a result as DuckDB streams it, a chunk (at most 2,048 rows) at a time,
// so that a result of any size goes out in bounded memory; each value is converted as the whole
// result's reader converts it (getRowObjectsJson: BIGINT, HUGEINT, DECIMAL and timestamps as text).
import { checkStreamEnd, type DuckDBConnection, type DuckDBResult } from './duckdb.js';
import { inert, tableLine, tableRule, tableWidths, textTable } from '../text.js';

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

/**
 * The rows a streamed table takes its column widths from. A result of up to this many rows is one
 * table with each column as wide as its widest cell; past them, rows are printed as they come with
 * those widths (a wider cell later pushes its line out, never cut), so that memory holds these
 * rows' text and no more. 10,000 rather than fewer: every result a person reads on a terminal is
 * laid out from all its rows, and the held text stays a few MB for the lake's rows.
 */
export const WIDTH_ROWS = 10_000;

/** Where the text goes, a piece at a time; a promise holds the next piece back (backpressure). */
export type Out = (text: string) => void | Promise<void>;

/**
 * Runs every statement and writes the result of the last one to `out` in format `f`, as DuckDB
 * streams it; the text is the same as that of the whole result formatted at once, and ends with a
 * newline. Returns the rows written.
 */
export async function writeQuery(conn: DuckDBConnection, sql: string, f: Format, out: Out): Promise<number> {
  const result = await streamLast(conn, sql);
  const end: End = (rows) => checkStreamEnd(conn, result, rows, sql);
  if (f === 'json') return writeJson(result, out, end);
  if (f === 'csv') return writeCsv(result, out, end);
  return writeTable(result, out, end);
}

/**
 * Called when a result's rows end, before the text that closes it (a table's row count, JSON's
 * bracket): throws when the query failed midway, which DuckDB's client ends as it ends a finished one.
 */
type End = (rows: number) => Promise<void>;

/**
 * Statements whose result is only whether they succeeded (SET, CREATE, DROP, ...: DuckDB's
 * StatementType numbers), printed as nothing among several, as the DuckDB CLI does.
 */
const SILENT = new Set([6, 7, 9, 10, 13, 14, 15, 18, 20, 21, 23, 25, 26]);

/**
 * Runs each statement in turn and writes each one's result to `out` (in format `f`), as the DuckDB
 * CLI does (JSON, one document, gives the last one's): a blank line between two results; statements that give none (SET, CREATE) print
 * nothing, unless the SQL is that one statement ("(no result)"). Returns the rows written.
 */
export async function writeEach(conn: DuckDBConnection, sql: string, f: Format, out: Out): Promise<number> {
  let statements: Awaited<ReturnType<DuckDBConnection['extractStatements']>>;
  try {
    statements = await conn.extractStatements(sql);
  } catch {
    return writeQuery(conn, sql, f, out);
  }
  // JSON is one document for a program to parse: the last statement's result, as before.
  if (statements.count <= 1 || f === 'json') return writeQuery(conn, sql, f, out);
  let n = 0;
  let written = 0;
  for (let i = 0; i < statements.count; i++) {
    const prepared = await statements.prepare(i);
    const result = await prepared.stream();
    // One statement of several: its text is not at hand to run again for the reason of a failure.
    const end: End = (rows) => checkStreamEnd(conn, result, rows);
    if (result.columnCount === 0 || SILENT.has(prepared.statementType)) {
      // A statement of no result read to its end: one that failed midway still fails.
      await result.fetchAllChunks();
      await end(0);
      continue;
    }
    if (written++ > 0) await out('\n');
    n += f === 'csv' ? await writeCsv(result, out, end) : await writeTable(result, out, end);
  }
  return n;
}

/** The result of the last statement, streamed, after running the others. */
async function streamLast(conn: DuckDBConnection, sql: string): Promise<DuckDBResult> {
  try {
    await conn.extractStatements(sql);
  } catch {
    // No statement (empty SQL, only comments: the binding then fails without saying why) or one
    // that does not parse; run whole, the SQL gives what it gave before: no columns and no rows,
    // or the parser's message. Nothing has run either way: the whole text is parsed first.
    return conn.run(sql);
  }
  return conn.stream(sql);
}

async function writeJson(result: DuckDBResult, out: Out, end: End): Promise<number> {
  let n = 0;
  // Row objects by the result's deduplicated names (`a`, `a:1`), as getRowObjectsJson makes them.
  for await (const rows of result.yieldRowObjectJson()) {
    let text = '';
    // A row at the array's depth: JSON.stringify(rows, null, 1) indents each row's lines by one.
    for (const r of rows) text += (n++ === 0 ? '[\n ' : ',\n ') + JSON.stringify(r, null, 1).replace(/\n/g, '\n ');
    await out(text);
  }
  await end(n);
  await out(n === 0 ? '[]\n' : '\n]\n');
  return n;
}

async function writeCsv(result: DuckDBResult, out: Out, end: End): Promise<number> {
  let n = 0;
  await out(result.columnNames().map(csvCell).join(','));
  for await (const rows of result.yieldRowsJson()) {
    let text = '';
    for (const r of rows) text += '\n' + r.map(csvCell).join(',');
    n += rows.length;
    await out(text);
  }
  await end(n);
  await out('\n');
  return n;
}

async function writeTable(result: DuckDBResult, out: Out, end: End): Promise<number> {
  const columns = result.columnNames();
  if (columns.length === 0) {
    await out('(no result)\n');
    return 0;
  }
  const header = columns.map((c) => inert(c));
  let held: string[][] = [];
  let widths: number[] | undefined;
  let n = 0;
  for await (const rows of result.yieldRowsJson()) {
    let text = '';
    for (const r of rows) {
      const cells = r.map((v) => inert(cell(v)));
      n++;
      if (widths) {
        text += '\n' + tableLine(cells, widths);
        continue;
      }
      held.push(cells);
      if (held.length === WIDTH_ROWS) {
        widths = tableWidths(columns.length, [header, ...held]);
        const w = widths;
        text = [tableLine(header, w), tableRule(w), ...held.map((h) => tableLine(h, w))].join('\n');
        held = [];
      }
    }
    if (text) await out(text);
  }
  await end(n);
  if (!widths) await out(textTable(header, held));
  await out(`\n(${n} row${n === 1 ? '' : 's'})\n`);
  return n;
}
