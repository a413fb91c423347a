// The `operations` table: one row per export operation chainlake started or polled, merged by
// operation id (the newest state wins), committed like every table (staged Parquet + state file,
// then renames), together with the file an operation exported, so a row that names a download
// and the file itself land in the same commit.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { duck, PARQUET } from '../load/parquet.js';
import { openWriter } from '../pipeline/session.js';
import { sqlString } from '../load/paths.js';
import { STAGING, StateStore, TABLE_PARTITION } from '../state/store.js';
import { nextStem } from '../state/names.js';
import { landedColumns } from '../transform/columns.js';
import { OPERATIONS } from '../decl/operations.js';

export interface OperationRow {
  operation_id: string;
  operation_type: string | null;
  operation_status: string;
  first_date: string | null;
  last_date: string | null;
  options: unknown;
  code: string | null;
  message: string | null;
  next_date: string | null;
  /** ISO 8601 */
  created_at: string | null;
  updated_at: string | null;
  continues_operation_id: string | null;
  download_path: string | null;
  download_bytes: number | null;
  download_sha256: string | null;
  recorded_at: string;
}

/** What chainlake knows of an operation that the service does not send back when polled. */
export type RequestFields = Pick<OperationRow, 'first_date' | 'last_date' | 'options' | 'continues_operation_id' | 'download_path' | 'download_bytes' | 'download_sha256'>;

const isTableFile = (f: string) => f.startsWith(`${OPERATIONS.table}/`);

/**
 * Merges `rows` into the table and moves `files` ([staged file, lake-relative target]) into the
 * lake in one commit. The state lists the exported files too, so a commit cut short by a kill is
 * rolled forward whole.
 */
export async function commitOperations(store: StateStore, rows: OperationRow[], files: Array<[string, string]> = []): Promise<void> {
  const state = store.load(OPERATIONS.table, TABLE_PARTITION);
  const dir = store.stagingDir(OPERATIONS.table, TABLE_PARTITION);
  mkdirSync(dir, { recursive: true });
  const lines = join(dir, 'rows.ndjson');
  const fresh = join(dir, 'rows.parquet');
  writeFileSync(lines, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const types = landedColumns(OPERATIONS).map(([n, t]) => `${n}: '${t}'`).join(', ');
  const spill = store.path(join(STAGING, 'duckdb'));
  const conn = await (await duck(spill)).connect();
  try {
    await conn.run(`COPY (SELECT * FROM read_json(${sqlString(lines)}, format = 'newline_delimited', columns = {${types}})) TO ${sqlString(fresh)} (${PARQUET})`);
  } finally {
    conn.closeSync();
  }
  const writer = await openWriter(store, spill);
  try {
    const old = state.files.filter(isTableFile);
    const [merged] = await writer.merge(OPERATIONS, [fresh], await store.local(old), dir, nextStem(TABLE_PARTITION, state.files));
    const moves: Array<[string, string]> = [[merged!.staged, `${OPERATIONS.table}/${merged!.rel}`], ...files];
    const targets = moves.map(([, t]) => t);
    const kept = state.files.filter((f) => !isTableFile(f) && !targets.includes(f));
    const at = new Date().toISOString();
    await store.commit({ ...state, files: [...kept, ...targets], rows: await writer.countRowsOf([merged!.staged]), cursor: { refreshedAt: at } }, moves, old);
  } finally {
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The committed row of an operation, or undefined when the lake has none. */
export async function loadOperation(store: StateStore, operationId: string): Promise<RequestFields | undefined> {
  const files = store.load(OPERATIONS.table, TABLE_PARTITION).files.filter(isTableFile);
  if (files.length === 0) return undefined;
  const conn = await (await duck()).connect();
  try {
    const r = await conn.runAndReadAll(
      `SELECT first_date, last_date, CAST(options AS VARCHAR) AS options, continues_operation_id, download_path, download_bytes::DOUBLE AS download_bytes, download_sha256
       FROM read_parquet([${(await store.local(files)).map(sqlString).join(', ')}]) WHERE operation_id = ${sqlString(operationId)}`,
    );
    const row = r.getRowObjects()[0];
    if (!row) return undefined;
    return {
      first_date: row.first_date as string | null,
      last_date: row.last_date as string | null,
      options: row.options === null ? null : JSON.parse(row.options as string),
      continues_operation_id: row.continues_operation_id as string | null,
      download_path: row.download_path as string | null,
      download_bytes: row.download_bytes as number | null,
      download_sha256: row.download_sha256 as string | null,
    };
  } finally {
    conn.closeSync();
  }
}
