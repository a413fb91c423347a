// `chainlake query`: SQL over the lake, printed as text, CSV or JSON, or written as an Arrow IPC stream.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Argv } from 'yargs';
import type { DuckDBConnection } from '../warehouse/duckdb.js';
import { UsageError } from '../errors.js';
import { isObjectUrl } from '../state/location.js';
import { writeEach } from '../warehouse/query.js';
import { queryError } from '../warehouse/names.js';
import { commandOf, checkLake, givenLake, LAKE_OPTION, readLake, type ArgsOf, type Globals } from './args.js';
import { plainArgs } from './plain.js';

/** Query's flags: yargs reads them (queryFlags), and so does plainQuery, without yargs. */
const QUERY_OPTIONS = {
  file: { type: 'string', requiresArg: true, describe: 'read the SQL from a file (e.g. sql/top_senders.sql)' },
  format: { type: 'string', choices: ['table', 'csv', 'json', 'arrow'], default: 'table', describe: 'output format (arrow: Arrow IPC stream, binary, for a file or a program)' },
  interactive: { type: 'boolean', alias: 'i', describe: 'a prompt over the lake (the default when no SQL is given in a terminal): statements end with `;`, .tables, .schema TABLE, .help, .quit' },
  warehouse: {
    type: 'string',
    requiresArg: true,
    describe: "warehouse file whose copies of the tables' rows (chainlake warehouse --rows) to read where they hold exactly the lake's committed files (default: <lake>.warehouse.duckdb beside a local lake; --no-warehouse: the Parquet files only)",
  },
} as const;

const queryFlags = (y: Argv<Globals>) => y.positional('sql', { type: 'string', describe: 'SQL to run' }).options(QUERY_OPTIONS);

/** The SQL of the command: the argument, the file, or standard input when it is not a terminal; undefined: none given. */
async function sqlOf(a: { sql?: string; file?: string }): Promise<string | undefined> {
  if (a.sql && a.file) throw new UsageError('query: give SQL or --file FILE, not both');
  if (a.file) {
    try {
      return readFileSync(a.file, 'utf8');
    } catch (err) {
      throw new UsageError(`--file ${a.file}: cannot read (${(err as NodeJS.ErrnoException).code})`);
    }
  }
  if (a.sql) return a.sql;
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}


async function cmdQuery(a: ArgsOf<typeof queryFlags>): Promise<number> {
  // SQL given after `--` (main.ts puts there one that opens with a comment).
  if (a.sql === undefined && a._.length > 1) a.sql = String(a._.at(-1));
  const sql = a.interactive ? undefined : await sqlOf(a);
  if (sql === undefined && !a.interactive && !process.stdin.isTTY) throw new UsageError('query: give SQL, --file FILE, or SQL on standard input');
  if (sql !== undefined && !sql.trim()) throw new UsageError(`query: the SQL${a.file ? ` of ${a.file}` : ''} is empty`);
  // Arrow and DuckDB load here, not at the top: start-up (main.ts).
  const arrow = a.format === 'arrow' ? await import('../warehouse/arrow.js') : undefined;
  arrow?.refuseTerminal(process.stdout.isTTY);
  if (arrow && sql === undefined) throw new UsageError('query: --format arrow takes SQL, not a prompt');
  const { VIEW_NAMES, viewsFor } = await import('../warehouse/names.js');
  const given = checkLake(givenLake(a));
  // A lake folder that is missing or holds no lake is exit 2: every count there would be 0.
  const lake = await readLake(given);
  // An s3:// lake's warehouse file is the one --warehouse names (as on run): none by default.
  const flag = a.warehouse as string | false | undefined;
  const tables = [...VIEW_NAMES];
  // Only the views the SQL names (each binds its table's files when it is made, only those the
  // SQL's filters can need: warehouse/prune.ts); a prompt, all. SQL that names none needs no view,
  // nor the tables' declarations (unless a warehouse file named must be checked first).
  const only = sql === undefined ? undefined : viewsFor(sql);
  let conn: DuckDBConnection;
  if (only?.size === 0 && typeof flag !== 'string') {
    const { soleConnection, queryDatabase } = await import('../warehouse/duckdb.js');
    conn = await soleConnection(await queryDatabase());
  } else {
    const [{ openWarehouse }, { rowsFileOf }] = await Promise.all([import('../warehouse/views.js'), import('../warehouse/rows.js')]);
    conn = await openWarehouse(lake, {}, only, { ...rowsFileOf(lake, flag ?? (isObjectUrl(given) ? false : undefined), '--warehouse'), ...(sql === undefined ? {} : { sql }) });
  }
  try {
    if (sql === undefined) {
      const { shell } = await import('./shell.js');
      await shell(conn, { lake: given, tables, rows: await heldRows(lake, tables), error: (m: string) => queryError(m, tables) });
      return 0;
    }
    // Chunk by chunk (batch by batch for Arrow) as DuckDB produces them, waiting for stdout to
    // drain: a result of any size goes out in bounded memory.
    if (arrow) await arrow.writeArrow(await arrow.arrowResult(conn, sql), 'stream', arrow.toStream(process.stdout));
    else if (a.format !== 'arrow') await writeEach(conn, sql, a.format, toStdout);
    await noteEmpty(conn, sql, only, lake);
  } catch (err) {
    throw new UsageError(`query${a.file ? ` ${a.file}` : ''}: ${queryError((err as Error).message, tables)}`);
  } finally {
    conn.closeSync();
  }
  return 0;
}

/**
 * Says on stderr which tables the SQL read that the lake holds no rows of (no run fetched them):
 * their views answer as empty tables, and a count of 0 from one is not a fact of the chain. The
 * tables read are DuckDB's parse of the SQL, asked only when a word of it names such a table.
 */
async function noteEmpty(conn: DuckDBConnection, sql: string, named: Set<string> | undefined, lake: string): Promise<void> {
  if (named?.size === 0) return;
  const held = await heldRows(lake, named ?? []);
  const empty = [...(named ?? [])].filter((t) => !held.has(t));
  if (!empty.length) return;
  const { tablesRead } = await import('../warehouse/names.js');
  let read: Set<string>;
  try {
    const parsed = (await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql])).getRows()[0]![0];
    read = tablesRead(JSON.parse(String(parsed)));
  } catch {
    return; // not a statement DuckDB serialises (a PRAGMA, a COPY): nothing said rather than a guess
  }
  const said = empty.filter((t) => read.has(t));
  if (said.length) process.stderr.write(`chainlake: ${said.join(', ')}: no rows in this lake (no run has fetched ${said.length === 1 ? 'it' : 'them'}), so the answer reads ${said.length === 1 ? 'it' : 'them'} as empty\n`);
}

/**
 * The rows the lake holds of each of `tables` (not its own `_` views), as its partitions' states
 * count them: those states that hold the table's data files (a table merged across its partitions
 * keeps its rows in one state, the partitions' counting what each fetched). A table it holds no
 * data file of is absent.
 */
async function heldRows(lake: string, tables: Iterable<string>): Promise<Map<string, number>> {
  const [{ StateStore }, { isTableData }] = await Promise.all([import('../state/store.js'), import('../state/names.js')]);
  const store = new StateStore(lake);
  const rows = new Map<string, number>();
  for (const t of tables) {
    if (t.startsWith('_')) continue;
    for (const s of store.statesOf(t)) if (s.files.some((f) => isTableData(t, f))) rows.set(t, (rows.get(t) ?? 0) + s.rows);
  }
  return rows;
}

async function toStdout(text: string): Promise<void> {
  if (text.length > 0 && !process.stdout.write(text)) await once(process.stdout, 'drain');
}

/**
 * `chainlake query` run without yargs when its arguments are plainly valid (plain.ts): its exit
 * code; undefined when they are not, for yargs to read them.
 */
export function plainQuery(argv: readonly string[]): Promise<number> | undefined {
  const a = plainQueryArgs(argv);
  return a && cmdQuery(a);
}

/** Query's arguments as yargs would hand them to its handler, when they are plainly valid (plain.ts). */
export function plainQueryArgs(argv: readonly string[]): ArgsOf<typeof queryFlags> | undefined {
  return plainArgs(argv, 'query', 'sql', { ...QUERY_OPTIONS, lake: LAKE_OPTION }) as ArgsOf<typeof queryFlags> | undefined;
}

export const queryCommand = commandOf('query [sql]', 'run SQL over the lake (every table is a view of its name)', queryFlags, cmdQuery);
