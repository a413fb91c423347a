// `chainlake reset <table>`: moves partitions' cursors back (--to-block, --to-time) or drops them
// (--drop), deleting the rows taken back in the same commit (src/pipeline/reset.ts). What it does
// is printed per partition; the next run fetches again from there.
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { inert } from '../text.js';
import { checkLake, commandOf, givenLake, wholeNumber, type ArgsOf, type Globals } from './args.js';
import { existingLake, isObjectUrl } from '../state/location.js';
import { checkWarehouse, refreshWarehouse, warehouseOption } from './warehouse.js';

const resetFlags = (y: Argv<Globals>) =>
  y
    .positional('table', { type: 'string', demandOption: true, describe: 'table whose partitions to reset' })
    .option('partition', { type: 'string', array: true, requiresArg: true, describe: 'a partition as `chainlake status` names it (repeat for several; default: every partition of the table)' })
    .option('to-block', { type: 'string', requiresArg: true, describe: 'tables appended by block: the block the next run starts at; committed rows of it and above are deleted' })
    .option('to-time', { type: 'string', requiresArg: true, describe: 'series and listings by time: the time the next run starts at (a date, a UTC date-time or Unix seconds, as in a pipeline); committed rows at or after it are deleted' })
    .option('drop', { type: 'boolean', describe: "drop the partitions: their files and state go, and the next run fetches them from the pipeline's start" })
    .option('wait', { type: 'boolean', describe: 'wait for a run holding the lake instead of exiting 1' })
    .option('warehouse', warehouseOption);

/** `--to-time`: a time as a pipeline's are read (a date, a UTC date-time or Unix seconds; config/pipeline.ts says what a wrong one probably meant). */
async function toTime(v: string | undefined): Promise<number | undefined> {
  if (v === undefined) return undefined;
  const { unixSeconds } = await import('../config/pipeline.js');
  const t = unixSeconds(/^\s*\d+\s*$/.test(v) ? Number(v) : v);
  if ('problem' in t) throw new UsageError(`--to-time ${JSON.stringify(v)}: ${t.problem}`);
  return t.seconds;
}

async function cmdReset(a: ArgsOf<typeof resetFlags>): Promise<number> {
  const given = [a.toBlock !== undefined && '--to-block', a.toTime !== undefined && '--to-time', a.drop && '--drop'].filter((x): x is string => typeof x === 'string');
  if (given.length !== 1) throw new UsageError(`reset: give one of --to-block, --to-time or --drop${given.length ? ` (given: ${given.join(', ')})` : ''}`);
  const block = wholeNumber('to-block', a.toBlock, 0);
  const time = await toTime(a.toTime);
  const lake = isObjectUrl(givenLake(a)) ? checkLake(givenLake(a)) : existingLake(checkLake(givenLake(a)), '--lake');
  await checkWarehouse(lake, a.warehouse);
  const { resetTable } = await import('../pipeline/reset.js');
  const { makeLogger } = await import('./log.js');
  const target = block !== undefined ? { block } : time !== undefined ? { time } : { drop: true as const };
  const r = await resetTable(lake, a.table, target, { logger: makeLogger({}), partitions: a.partition, wait: a.wait });
  for (const p of r.partitions) process.stdout.write(inert(`reset ${r.table} ${p.partition}: ${p.from} -> ${p.to} (${p.rowsBefore} rows -> ${p.rowsAfter})`) + '\n');
  await refreshWarehouse('reset', lake, a.warehouse);
  return 0;
}

export const resetCommand = commandOf('reset <table>', "move partitions' cursors back (deleting the rows taken back) or drop them; the next run fetches from there", resetFlags, cmdReset);
