// Every command, in the order --help lists them. Loaded with yargs (main.ts) only when a command's
// arguments need it: a command module's top loads what declares it, which for all of them together
// is most of a short command's start-up.
import type { CommandModule } from 'yargs';
import type { Exit, Globals } from './args.js';
import { initCommand } from './init.js';
import { exportCommand } from './export.js';
import { checkCommand, compactCommand, rebuildCommand, reportCommand, statusCommand, warehouseCommand } from './lake.js';
import { aggregateSignaturesCommand, exportOpCommand } from './operations.js';
import { queryCommand } from './query.js';
import { resetCommand } from './reset.js';
import { runCommand, workerCommand } from './run.js';
import { simCommand } from './sim.js';
import { tablesCommand } from './tables.js';

export function commandsOf(exit: Exit): ReadonlyArray<CommandModule<Globals, any>> {
  return [
    initCommand(exit),
    runCommand(exit),
    workerCommand(exit),
    queryCommand(exit),
    rebuildCommand(exit),
    compactCommand(exit),
    resetCommand(exit),
    statusCommand(exit),
    tablesCommand(exit),
    checkCommand(exit),
    reportCommand(exit),
    warehouseCommand(exit),
    exportCommand(exit),
    simCommand(exit),
    exportOpCommand(exit),
    aggregateSignaturesCommand(exit),
  ] as ReadonlyArray<CommandModule<Globals, any>>;
}
