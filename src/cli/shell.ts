// `chainlake query` with no SQL in a terminal (or -i): a prompt over the lake, in the spirit of the
// DuckDB CLI. A statement may span lines and runs once it ends with `;`; each result prints as
// `query` prints it; an error is said and the prompt goes on. Dot commands list the tables and show
// a table's columns. History is kept in ~/.chainlake_history (CHAINLAKE_HISTORY to move it, empty
// to keep none), bounded.
import { appendFileSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { DuckDBConnection } from '../warehouse/duckdb.js';
import { writeEach } from '../warehouse/query.js';
import { inert } from '../text.js';
import { didYouMean } from '../closest.js';

const HISTORY_LINES = 1000;
const HELP = `.tables            the lake's tables with their rows, then those it holds none of (empty views)
.schema TABLE      a table's columns and types (.describe TABLE too)
.help              this
.quit              leave (or Ctrl-D)
SQL ends with ; and may span lines; Ctrl-C drops the statement being typed.`;

/** What a line of input does, given the statement typed so far: pure, so the prompt's rules are tested alone. */
export type Step = { run: string } | { command: string; arg: string } | { more: string } | { quit: true } | { nothing: true };

/** The next step after `line`, with `pending` the lines of a statement not ended yet. */
export function step(pending: string, line: string): Step {
  const text = pending ? `${pending}\n${line}` : line;
  const t = text.trim();
  if (!pending && t.startsWith('.')) {
    const [command, ...rest] = t.slice(1).split(/\s+/);
    if (command === 'quit' || command === 'exit') return { quit: true };
    return { command: command!, arg: rest.join(' ').replace(/;$/, '') };
  }
  if (!t) return { nothing: true };
  return /;\s*$/.test(t) ? { run: text } : { more: text };
}

function historyFile(): string | undefined {
  const env = process.env.CHAINLAKE_HISTORY;
  if (env !== undefined) return env || undefined;
  return join(homedir(), '.chainlake_history');
}

function loadHistory(file: string | undefined): string[] {
  if (!file) return [];
  try {
    // readline wants the newest first.
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(-HISTORY_LINES).reverse();
  } catch {
    return [];
  }
}

/** The shell's context: the lake, its views, the rows its partitions' states count of each table, and how an error is said. */
export interface ShellLake {
  lake: string;
  tables: readonly string[];
  rows: ReadonlyMap<string, number>;
  error: (message: string) => string;
}

/**
 * `.tables`: those the lake holds rows of, a line each with the rows its states count, then the
 * views it holds nothing of (every table chainlake knows is a view, empty until fetched) on one
 * line, so that an empty answer from one of them is not read as a fact of the chain.
 */
export function tablesText(tables: readonly string[], rows: ReadonlyMap<string, number>): string {
  const held = tables.filter((t) => (rows.get(t) ?? 0) > 0);
  const width = Math.max(0, ...held.map((t) => t.length));
  const empty = tables.filter((t) => !held.includes(t) && !t.startsWith('_'));
  const own = tables.filter((t) => t.startsWith('_'));
  return [
    ...held.map((t) => `${t.padEnd(width)}  ${rows.get(t)!.toLocaleString('en-US')} rows`),
    ...(own.length ? [`${own.join(', ')}: the lake's own (rejected rows, run reports)`] : []),
    ...(empty.length ? [`no rows in this lake (not fetched): ${empty.join(', ')}`] : []),
  ].join('\n');
}

export async function shell(conn: DuckDBConnection, o: ShellLake): Promise<void> {
  const out = async (text: string) => {
    if (text.length > 0 && !process.stdout.write(text)) await once(process.stdout, 'drain');
  };
  const file = historyFile();
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY === true, history: loadHistory(file), historySize: HISTORY_LINES });
  const remember = (entry: string) => {
    if (!file) return;
    try {
      appendFileSync(file, entry.replace(/\n/g, ' ') + '\n', { mode: 0o600 });
    } catch {
      // A history that cannot be written costs the next session its history, nothing else.
    }
  };
  await out(`chainlake query over ${inert(o.lake)}: .tables lists the tables, .help the commands, .quit leaves\n`);
  let pending = '';
  // Prompts for a person at a terminal; input piped in (-i) gets the results alone.
  const prompt = () => {
    if (!rl.terminal) return;
    rl.setPrompt(pending ? '     ...> ' : 'chainlake> ');
    rl.prompt();
  };
  rl.on('SIGINT', () => {
    pending = '';
    process.stdout.write('\n');
    prompt();
  });
  prompt();
  for await (const line of rl) {
    const s = step(pending, line);
    pending = '';
    if ('quit' in s) break;
    if ('more' in s) pending = s.more;
    else if ('command' in s) {
      remember(line.trim());
      await command(conn, s.command, s.arg, o, out);
    } else if ('run' in s) {
      remember(s.run.trim());
      try {
        await writeEach(conn, s.run, 'table', out);
      } catch (err) {
        await out(`Error: ${inert(o.error((err as Error).message))}\n`);
      }
    }
    prompt();
  }
  rl.close();
}

async function command(conn: DuckDBConnection, name: string, arg: string, o: ShellLake, out: (text: string) => Promise<void>): Promise<void> {
  if (name === 'tables') {
    await out(tablesText(o.tables, o.rows) + '\n');
    return;
  }
  if (name === 'schema' || name === 'describe') {
    if (!o.tables.includes(arg)) {
      await out(`${arg ? `no table ${inert(arg)}${didYouMean(arg, o.tables)}` : 'give a table'} (.tables lists them)\n`);
      return;
    }
    await writeEach(conn, `DESCRIBE "${arg}"`, 'table', out);
    return;
  }
  if (name !== 'help') await out(`no command .${inert(name)}\n`);
  await out(HELP + '\n');
}
