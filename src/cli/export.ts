// `chainlake export`: a table, or part of it, to one file.
import type { Argv } from 'yargs';
import { commandOf, givenLake, readLake, type ArgsOf, type Globals } from './args.js';

const exportFlags = (y: Argv<Globals>) =>
  y
    .positional('table', { type: 'string', demandOption: true, describe: 'table to export, e.g. erc_transfers' })
    .option('to', { type: 'string', demandOption: true, requiresArg: true, describe: 'file to write (outside the lake)' })
    .option('format', { type: 'string', choices: ['parquet', 'csv', 'ndjson', 'arrow'], describe: 'file format (default: from the file name)' } as const)
    .option('where', { type: 'string', requiresArg: true, describe: 'SQL filter on the table\'s columns, e.g. "block_number >= 1000"' })
    .option('columns', { type: 'string', requiresArg: true, describe: 'comma list of columns (default: all)' })
    .option('force', { type: 'boolean', describe: 'replace the file if it exists' })
    .option('csv-formulas', {
      type: 'boolean',
      describe: "CSV: write text cells that begin with =, +, -, @, tab or CR as they are; by default they get a leading ' so that a spreadsheet shows them as text instead of running them (OWASP CSV injection)",
    });

async function cmdExport(a: ArgsOf<typeof exportFlags>): Promise<number> {
  const { exportTable, parseColumns } = await import('../warehouse/export.js');
  const r = await exportTable({ lake: await readLake(givenLake(a)), table: a.table, to: a.to, format: a.format, where: a.where, columns: parseColumns(a.columns), force: a.force, csvFormulas: a.csvFormulas });
  process.stdout.write(`exported ${r.rows} rows (${r.columns.length} columns) of ${a.table} to ${r.file} as ${r.format}\n`);
  return 0;
}

export const exportCommand = commandOf('export <table>', 'write a table (or part of it) to one Parquet, CSV, NDJSON or Arrow IPC file', exportFlags, cmdExport);
