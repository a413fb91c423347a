// The commands on a lake as it stands: rebuild, compact, status, check, report and warehouse.
// Each handler imports what it runs (DuckDB, pino) when it runs: start-up (main.ts).
import type { Argv } from 'yargs';
import { inertJson } from '../text.js';
import { StateStore } from '../state/store.js';
import { lakeFile } from '../state/cache.js';
import { existingFolder, isObjectUrl } from '../state/location.js';
import { commandOf, checkLake, givenLake, readLake, wholeNumber, durationMs, type ArgsOf, type Globals } from './args.js';
import { stoppable } from './stoppable.js';
import { statusJson, statusTable } from './status.js';
import { checkWarehouse, refreshWarehouse, urlOf, warehouseOption, wroteWarehouse } from './warehouse.js';

/**
 * `--format` of status and check (run --dry-run takes the same two): text for people, JSON for
 * scripts. Both may quote services' text: the text inert, the JSON with inertJson's escapes (the
 * same value).
 */
const FORMAT_OPTION = { type: 'string', choices: ['table', 'json'], default: 'table', describe: 'a text table, or one JSON document (every field whole) for scripts' } as const;

const rebuildFlags = (y: Argv<Globals>) => y.positional('table', { type: 'string', demandOption: true, describe: 'table to rebuild' }).option('warehouse', warehouseOption);

async function cmdRebuild(a: ArgsOf<typeof rebuildFlags>): Promise<number> {
  const { rebuildTable } = await import('../pipeline/rebuild.js');
  const { makeLogger } = await import('./log.js');
  const logger = makeLogger({});
  const lake = checkLake(givenLake(a));
  await checkWarehouse(lake, a.warehouse);
  const r = await stoppable(logger, 'the table is as it was, a rerun rebuilds it', (signal) => rebuildTable(lake, a.table, { logger, signal }));
  process.stdout.write(
    `rebuilt ${r.table} from ${r.rawFiles} raw files (${r.pages} pages) of ${r.partitions} partitions: ${r.rows} rows (${r.replayed} replayed, ${r.skipped} skipped as refetched${r.outside ? `, ${r.outside} outside what the runs committed, left out as they were` : ''}), ${r.rejects} rejects, in ${r.seconds.toFixed(1)} s (${Math.round(r.replayed / r.seconds)} rows/s)\n`,
  );
  await refreshWarehouse('rebuild', lake, a.warehouse);
  return 0;
}

export const rebuildCommand = commandOf('rebuild <table>', 're-derive a table from its raw pages (kept under _raw/) without refetching', rebuildFlags, cmdRebuild);

const compactFlags = (y: Argv<Globals>) =>
  y
    .positional('tables', { type: 'string', array: true, describe: 'tables to compact (all when none is given)' })
    .option('target-rows', { type: 'string', requiresArg: true, describe: 'rows per file to aim for (default 1000000); files of half as many or more are left alone' })
    .option('wait', { type: 'boolean', describe: 'wait for a run holding the lake instead of exiting 1' })
    .option('retention', {
      type: 'string',
      requiresArg: true,
      describe: "how long an Iceberg snapshot stays readable after a later commit replaced its files (30m, 6h, 7d; 0: not at all), kept as each table's retention for later runs; the replaced files stay on disk as long",
    })
    .option('warehouse', warehouseOption);

async function cmdCompact(a: ArgsOf<typeof compactFlags>): Promise<number> {
  const { compactLake } = await import('../pipeline/compact.js');
  const { makeLogger } = await import('./log.js');
  const given = givenLake(a);
  const targetRows = wholeNumber('target-rows', a.targetRows, 2);
  const retainMs = durationMs('retention', a.retention);
  await checkWarehouse(checkLake(given), a.warehouse);
  const logger = makeLogger({});
  const reports = await stoppable(logger, 'the groups merged so far stay, a rerun merges the rest', (signal) =>
    compactLake(isObjectUrl(given) ? checkLake(given) : existingFolder(checkLake(given), '--lake'), a.tables ?? [], { logger, targetRows, wait: a.wait, signal, ...(retainMs === undefined ? {} : { retainMs }) }),
  );
  const done = reports.filter((r) => r.rowsRewritten > 0);
  for (const r of done)
    process.stdout.write(`compacted ${r.table}: ${r.filesBefore} data files -> ${r.filesAfter} (${r.rowsRewritten} rows rewritten in ${r.partitions} partitions), in ${r.seconds.toFixed(1)} s\n`);
  for (const r of reports.filter((x) => x.filesExpired > 0)) process.stdout.write(`${r.table}: deleted ${r.filesExpired} files no snapshot kept names any more\n`);
  if (retainMs !== undefined) process.stdout.write(`retention of ${reports.length} table${reports.length === 1 ? '' : 's'}: ${a.retention!.trim()}\n`);
  const rest = reports.length - done.length;
  if (rest) process.stdout.write(`${done.length ? 'the other ' : ''}${rest} table${rest === 1 ? '' : 's'}: no small files to merge\n`);
  await refreshWarehouse('compact', given, a.warehouse);
  return 0;
}

export const compactCommand = commandOf('compact [tables..]', "merge each partition's small data files (a file per commit) into files of up to --target-rows rows; the rows do not change", compactFlags, cmdCompact);

const statusFlags = (y: Argv<Globals>) => y.option('format', FORMAT_OPTION);

async function cmdStatus(a: ArgsOf<typeof statusFlags>): Promise<number> {
  const given = checkLake(givenLake(a));
  const store = new StateStore(await readLake(given, { data: false }));
  const states = store.all();
  const where = isObjectUrl(given) ? given : store.lake;
  if (a.format === 'json') {
    process.stdout.write(inertJson(JSON.stringify(statusJson(where, states), null, 1)) + '\n');
    return 0;
  }
  if (!states.length) {
    process.stdout.write(`no partitions in ${where} yet\n`);
    return 0;
  }
  // Off a terminal (a pipe, a log file) the table is made for 100 columns.
  const width = process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 100;
  process.stdout.write(statusTable(states, width) + '\n');
  return 0;
}

export const statusCommand = commandOf('status', 'per stream partition: cursor / high-water mark, rows, last run', statusFlags, cmdStatus);

const checkFlags = (y: Argv<Globals>) =>
  y.option('format', FORMAT_OPTION).option('all', { type: 'boolean', describe: 'list every check, passed and skipped too (by default: the failures and the counts; --format json has them all)' });

async function cmdCheck(a: ArgsOf<typeof checkFlags>): Promise<number> {
  const { checksJson, formatChecks, runChecks } = await import('../warehouse/check.js');
  const { openWarehouse } = await import('../warehouse/views.js');
  const given = givenLake(a);
  // Every check would pass on a folder that holds no lake (a mistyped --lake): readLake refuses it.
  const lake = await readLake(given);
  // On object storage the tables' metadata is read where engines read it: in the store.
  const store = isObjectUrl(given) ? await (await import('../state/s3.js')).S3Objects.open(given) : undefined;
  const results = await runChecks(await openWarehouse(lake), lake, undefined, store ? { objects: store, uri: store.where } : {});
  process.stdout.write((a.format === 'json' ? inertJson(JSON.stringify(checksJson(isObjectUrl(given) ? checkLake(given) : lake, results), null, 1)) : formatChecks(results, { all: a.all })) + '\n');
  return results.some((r) => r.status === 'fail') ? 1 : 0;
}

export const checkCommand = commandOf('check', 'data checks over the lake (keys, amounts, block cursors, metric series); exit 1 when one fails', checkFlags, cmdCheck);

const reportFlags = (y: Argv<Globals>) => y.option('out', { type: 'string', requiresArg: true, describe: 'HTML file to write (default: <lake>.report.html beside the lake folder; for an s3:// lake, in the current folder)' });

async function cmdReport(a: ArgsOf<typeof reportFlags>): Promise<number> {
  const { writeReport } = await import('../warehouse/report.js');
  const given = givenLake(a);
  // An s3:// lake has no folder to write beside: its report goes to the current folder (lakeFile).
  const r = await writeReport(await readLake(given), a.out ?? (isObjectUrl(given) ? lakeFile(checkLake(given), 'report.html') : undefined));
  process.stdout.write(`wrote ${r.file} (${r.charts} charts, ${r.tables} tables)\n`);
  return 0;
}

export const reportCommand = commandOf('report', 'write one self-contained HTML report with charts of the lake', reportFlags, cmdReport);

const warehouseFlags = (y: Argv<Globals>) =>
  y.option('out', { type: 'string', requiresArg: true, describe: "DuckDB file to write (default: <lake>.warehouse.duckdb beside the lake folder); one another lake's warehouse file is never replaced" }).option('rows', {
    type: 'boolean',
    describe: "hold a copy of every table's rows in the file, where queries run at DuckDB's own speed; later runs, compact and rebuild keep it up to date (--no-rows: views over the Parquet files only; default: as the file is, and with rows for a new file)",
  });

async function cmdWarehouse(a: ArgsOf<typeof warehouseFlags>): Promise<number> {
  const { writeWarehouse } = await import('../warehouse/file.js');
  const given = givenLake(a);
  process.stdout.write(wroteWarehouse(await writeWarehouse(await readLake(given), { out: a.out, flag: '--out', url: urlOf(given), ...(a.rows === undefined ? {} : { rows: a.rows }) })) + '\n');
  return 0;
}

export const warehouseCommand = commandOf('warehouse', 'write a DuckDB database file of the lake (tables, _runs, _rejects, the bundled queries as views) for other tools to open, holding a copy of the rows (--no-rows: views over the Parquet files only)', warehouseFlags, cmdWarehouse);
