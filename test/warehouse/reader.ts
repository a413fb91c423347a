// A reader of a warehouse file as an analyst's tool is one: a separate Node process that imports
// only @duckdb/node-api (warehouse.test.ts reads in a time zone other than UTC; rows.test.ts holds
// the file open for writing, as DBeaver's default does).
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

export type Row = Record<string, unknown>;
export type Answer = { rows: Row[] } | { error: string };

/** Not UTC, and five hours off it: a day boundary in UTC is the evening before here. */
export const ZONE = 'America/New_York';

// The reader: nothing of chainlake, only the DuckDB client an analyst's script would use. It
// answers each line of stdin (SQL, or `reopen` for a new instance on the same path) with a line of
// JSON, so one test can hold a connection open while the file is rewritten.
const READER = `
import { DuckDBInstance } from '@duckdb/node-api';
import { createInterface } from 'node:readline';
const { file, zone, mode } = JSON.parse(process.argv[1]);
let db, conn;
async function open() {
  conn?.closeSync();
  db?.closeSync();
  db = await DuckDBInstance.create(file, { access_mode: mode });
  conn = await db.connect();
  await conn.run("SET TimeZone = '" + zone + "'");
}
const answer = async (sql) => {
  try {
    if (sql === 'reopen') { await open(); return { rows: [] }; }
    return { rows: (await conn.runAndReadAll(sql)).getRowObjectsJson() };
  } catch (e) {
    return { error: e.message };
  }
};
try { await open(); } catch (e) { process.stdout.write(JSON.stringify({ error: e.message }) + '\\n'); process.exit(3); }
process.stdout.write(JSON.stringify({ ready: true }) + '\\n');
for await (const line of createInterface({ input: process.stdin })) process.stdout.write(JSON.stringify(await answer(JSON.parse(line))) + '\\n');
`;

/** Runs `sqls` on `file` in a new process, read-only, in ZONE. */
export function read(file: string, sqls: string[]): Answer[] {
  // Room for the answers of many statements at once (spawnSync keeps a megabyte by default, and cuts the rest).
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', READER, JSON.stringify({ file, zone: ZONE, mode: 'READ_ONLY' })], { input: sqls.map((s) => JSON.stringify(s)).join('\n') + '\n', encoding: 'utf8', timeout: 60_000, maxBuffer: 1 << 28 });
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Answer & { ready?: boolean });
  if (!lines[0]?.ready) throw new Error(`the reader did not open ${file}: ${r.stdout}${r.stderr}`);
  if (lines.length !== sqls.length + 1) throw new Error(`the reader answered ${lines.length - 1} of ${sqls.length} statements on ${file}: ${r.error?.message ?? r.stderr}`);
  return lines.slice(1);
}

export function rowsOf(a: Answer | undefined): Row[] {
  if (!a || 'error' in a) throw new Error(`the reader failed: ${a ? a.error : 'no answer'}`);
  return a.rows;
}

/** A reader that stays open: `ask` sends one SQL line (or `reopen`) and waits for its answer. */
export async function openReader(file: string, mode: 'READ_ONLY' | 'READ_WRITE'): Promise<{ ask(sql: string): Promise<Answer>; close(): Promise<void> }> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--input-type=module', '-e', READER, JSON.stringify({ file, zone: ZONE, mode })]);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => JSON.parse(((await lines.next()).value as string | undefined) ?? 'null') as (Answer & { ready?: boolean }) | null;
  const first = await next();
  if (!first?.ready) throw new Error(`the reader did not open ${file}: ${JSON.stringify(first)}`);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    async ask(sql) {
      child.stdin.write(JSON.stringify(sql) + '\n');
      return (await next())!;
    },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}
