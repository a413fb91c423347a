// A reader of a warehouse file as an analyst's tool is one: a separate Node process that imports
// only @duckdb/node-api (warehouse.test.ts reads in a time zone other than UTC; rows.test.ts holds
// the file open for writing, as DBeaver's default does).
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

export type Row = Record<string, unknown>;
export type Answer = { rows: Row[] } | { error: string };

/** Not UTC, and five hours off it: a day boundary in UTC is the evening before here. */
export const ZONE = 'America/New_York';

// The reader: nothing of chainlake, only the DuckDB client an analyst's script would use. Given a
// file, it opens it and answers each line of stdin (SQL, or `reopen` for a new instance on the same
// path) with a line of JSON, so one test can hold a connection open while the file is rewritten.
// Given none, each line names a file and its statements: the file is opened (a new instance, as a
// new reader's), asked them and closed, so that one process reads file after file.
const READER = `
import { DuckDBInstance } from '@duckdb/node-api';
import { createInterface } from 'node:readline';
const { file, zone, mode } = JSON.parse(process.argv[1]);
const say = (x) => process.stdout.write(JSON.stringify(x) + '\\n');
async function open(path) {
  const db = await DuckDBInstance.create(path, { access_mode: mode });
  const conn = await db.connect();
  await conn.run("SET TimeZone = '" + zone + "'");
  return { db, conn, close() { conn.closeSync(); db.closeSync(); } };
}
const answer = async (at, sql) => {
  try {
    return { rows: (await at.conn.runAndReadAll(sql)).getRowObjectsJson() };
  } catch (e) {
    return { error: e.message };
  }
};
const lines = createInterface({ input: process.stdin });
if (file === undefined) {
  say({ ready: true });
  for await (const line of lines) {
    const { file, sqls } = JSON.parse(line);
    let at;
    try { at = await open(file); } catch (e) { say({ error: e.message }); continue; }
    const answers = [];
    for (const sql of sqls) answers.push(await answer(at, sql));
    at.close();
    say({ answers });
  }
} else {
  let at;
  try { at = await open(file); } catch (e) { say({ error: e.message }); process.exit(3); }
  say({ ready: true });
  for await (const line of lines) {
    const sql = JSON.parse(line);
    if (sql === 'reopen') { at.close(); at = await open(file); say({ rows: [] }); }
    else say(await answer(at, sql));
  }
}
`;

const spawnArgs = (o: { file?: string; mode: 'READ_ONLY' | 'READ_WRITE' }) => ['--input-type=module', '-e', READER, JSON.stringify({ ...o, zone: ZONE })];

/** The answers to a request of the reader of many files, or why `file` did not open. */
function answersOf(file: string, sqls: string[], line: string | undefined): Answer[] {
  const r = JSON.parse(line ?? 'null') as { answers: Answer[] } | { error: string } | null;
  if (!r || 'error' in r) throw new Error(`the reader did not open ${file}: ${r ? r.error : 'no answer'}`);
  if (r.answers.length !== sqls.length) throw new Error(`the reader answered ${r.answers.length} of ${sqls.length} statements on ${file}`);
  return r.answers;
}

/** Runs `sqls` on `file` in a new process, read-only, in ZONE. */
export function read(file: string, sqls: string[]): Answer[] {
  // Room for the answers of many statements at once (spawnSync keeps a megabyte by default, and cuts the rest).
  const r = spawnSync(process.execPath, spawnArgs({ mode: 'READ_ONLY' }), { input: `${JSON.stringify({ file, sqls })}\n`, encoding: 'utf8', timeout: 60_000, maxBuffer: 1 << 28 });
  const lines = r.stdout.trim().split('\n');
  if (JSON.parse(lines[0] || 'null')?.ready !== true) throw new Error(`the reader did not start: ${r.stdout}${r.stderr}`);
  if (lines.length < 2) throw new Error(`the reader did not answer on ${file}: ${r.error?.message ?? r.stderr}`);
  return answersOf(file, sqls, lines[1]);
}

/**
 * One reader process for the reads of many files, one after another: `read` is the function above
 * (each file opened anew, read-only, in ZONE, and closed after, so that it holds no lock between
 * reads) without a process's start-up, most of a read's CPU, each time.
 */
export async function openReaders(): Promise<{ read(file: string, sqls: string[]): Promise<Answer[]>; close(): Promise<void> }> {
  const child = spawn(process.execPath, spawnArgs({ mode: 'READ_ONLY' }));
  const { next, exited } = await started(child, 'the reader of many files');
  let turn: Promise<unknown> = Promise.resolve();
  return {
    read(file, sqls) {
      // One request at a time: the answers come back in order, one line each.
      const answer = turn.then(async () => {
        child.stdin.write(`${JSON.stringify({ file, sqls })}\n`);
        return answersOf(file, sqls, await next());
      });
      turn = answer.catch(() => undefined);
      return answer;
    },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}

/** The lines `child` writes, once it has said it is ready, and its exit. */
async function started(child: ChildProcessWithoutNullStreams, what: string): Promise<{ next(): Promise<string | undefined>; exited: Promise<void> }> {
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => (await lines.next()).value as string | undefined;
  const first = await next();
  if (JSON.parse(first ?? 'null')?.ready !== true) throw new Error(`${what} did not open: ${first}`);
  return { next, exited };
}

export function rowsOf(a: Answer | undefined): Row[] {
  if (!a || 'error' in a) throw new Error(`the reader failed: ${a ? a.error : 'no answer'}`);
  return a.rows;
}

/** A reader that stays open: `ask` sends one SQL line (or `reopen`) and waits for its answer. */
export async function openReader(file: string, mode: 'READ_ONLY' | 'READ_WRITE'): Promise<{ ask(sql: string): Promise<Answer>; close(): Promise<void> }> {
  const child = spawn(process.execPath, spawnArgs({ file, mode }));
  const { next, exited } = await started(child, `the reader of ${file}`);
  return {
    async ask(sql) {
      child.stdin.write(JSON.stringify(sql) + '\n');
      return JSON.parse((await next()) ?? 'null') as Answer;
    },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}
