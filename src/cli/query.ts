// `chainlake query`: SQL over the lake, printed as text, CSV or JSON, or written as an Arrow IPC stream.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { isObjectUrl } from '../state/s3.js';
import { writeQuery } from '../warehouse/query.js';
import { commandOf, checkLake, givenLake, readLake, type ArgsOf, type Globals } from './args.js';

const queryFlags = (y: Argv<Globals>) =>
  y
    .positional('sql', { type: 'string', describe: 'SQL to run' })
    .option('file', { type: 'string', requiresArg: true, describe: 'read the SQL from a file (e.g. sql/top_senders.sql)' })
    .option('format', { type: 'string', choices: ['table', 'csv', 'json', 'arrow'], default: 'table', describe: 'output format (arrow: Arrow IPC stream, binary, for a file or a program)' } as const)
    .option('warehouse', {
      type: 'string',
      requiresArg: true,
      describe: "warehouse file whose copies of the tables' rows (chainlake warehouse --rows) to read where they hold exactly the lake's committed files (default: <lake>.warehouse.duckdb beside a local lake; --no-warehouse: the Parquet files only)",
    });

async function cmdQuery(a: ArgsOf<typeof queryFlags>): Promise<number> {
  // SQL given after `--` (main.ts puts there one that opens with a comment).
  if (a.sql === undefined && a._.length > 1) a.sql = String(a._.at(-1));
  if (!a.sql && !a.file) throw new UsageError('query: give SQL or --file FILE');
  if (a.sql && a.file) throw new UsageError('query: give SQL or --file FILE, not both');
  let sql = a.sql ?? '';
  if (a.file) {
    try {
      sql = readFileSync(a.file, 'utf8');
    } catch (err) {
      throw new UsageError(`--file ${a.file}: cannot read (${(err as NodeJS.ErrnoException).code})`);
    }
  }
  // Arrow and DuckDB load here, not at the top: start-up (main.ts).
  const arrow = a.format === 'arrow' ? await import('../warehouse/arrow.js') : undefined;
  arrow?.refuseTerminal(process.stdout.isTTY);
  const { openWarehouse, viewsFor } = await import('../warehouse/views.js');
  const { rowsFileOf } = await import('../warehouse/rows.js');
  const given = checkLake(givenLake(a));
  // A lake folder that is missing or holds no lake is exit 2: every count there would be 0.
  const lake = await readLake(given);
  // An s3:// lake's warehouse file is the one --warehouse names (as on run): none by default.
  const flag = a.warehouse as string | false | undefined;
  // Only the views the SQL names: each binds its table's files when it is made.
  const conn = await openWarehouse(lake, {}, viewsFor(sql), rowsFileOf(lake, flag ?? (isObjectUrl(given) ? false : undefined), '--warehouse'));
  try {
    // Chunk by chunk (batch by batch for Arrow) as DuckDB produces them, waiting for stdout to
    // drain: a result of any size goes out in bounded memory.
    if (arrow) await arrow.writeArrow(await arrow.arrowResult(conn, sql), 'stream', arrow.toStream(process.stdout));
    else if (a.format !== 'arrow') await writeQuery(conn, sql, a.format, toStdout);
  } catch (err) {
    throw new UsageError(`query${a.file ? ` ${a.file}` : ''}: ${(err as Error).message}`);
  }
  return 0;
}

async function toStdout(text: string): Promise<void> {
  if (text.length > 0 && !process.stdout.write(text)) await once(process.stdout, 'drain');
}

export const queryCommand = commandOf('query [sql]', 'run SQL over the lake (every table is a view of its name)', queryFlags, cmdQuery);
