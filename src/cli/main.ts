// The command line (README "CLI"). Exit codes: errors.ts EXIT, said in --help (EXIT_CODES).
// Each command is declared, with its flags, in its module; this file puts them in order and turns
// what they throw into a message and an exit code.
// Start-up: a command module imports at its top only what declares the command; its handler loads
// the rest (DuckDB, Arrow, the AWS SDK, pg, pino, yaml) with `await import`. Loaded at the top,
// they cost every command, --version and --help too, about 0.8 s of CPU, and the tests spawn the
// CLI hundreds of times. yargs and the command modules load only when a command needs them: a
// query whose arguments are plainly valid is read without them (plain.ts), which was most of its
// start-up past DuckDB's own.
import type { Argv, CommandModule } from 'yargs';
import { EXIT, RunError, UsageError } from '../errors.js';
import { bounded, inert, LINE_CHARS } from '../text.js';
import { didYouMean } from '../closest.js';
import { LAKE_OPTION, type Exit, type Globals } from './args.js';
import { plainQuery } from './query.js';

/** Said at the end of --help, and in the README's "Exit codes". */
export const EXIT_CODES = [
  'Exit codes:',
  `  ${EXIT.ok}    done`,
  `  ${EXIT.failed}    a run failed (committed work is kept; a rerun resumes); a check failed`,
  `  ${EXIT.usage}    bad usage or configuration: nothing was written`,
  `  ${EXIT.lakeInUse}    the lake is in use by another writer: rerun later, or pass --wait`,
  `  ${EXIT.refused}    a service refused a request for good (400, 401, 403, 404): a rerun`,
  '       alone fails the same; correct what the error names',
  `  ${EXIT.SIGINT}  stopped by SIGINT (Ctrl-C), ${EXIT.SIGTERM} by SIGTERM: a rerun resumes`,
].join('\n');

/** What the system refused, for errors of a file system that will refuse the same again (a rerun cannot help). */
const REFUSALS: Record<string, string> = { EROFS: 'a read-only file system', EACCES: 'permission denied', EPERM: 'not permitted', ENOTDIR: 'a part of the path is a file, not a folder' };

/**
 * A file system's refusal as one line naming the path and why (exit 2), instead of a stack: a lake
 * on a read-only mount, or a folder this user may not write. Undefined for anything else.
 */
export function fileRefusal(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as NodeJS.ErrnoException;
  const why = e.code === 'ENOENT' && e.syscall === 'mkdir' ? 'it cannot be made there (a read-only file system, or a parent that is not a folder)' : e.code ? REFUSALS[e.code] : undefined;
  if (!why || !e.path) return undefined;
  return `cannot ${e.syscall ?? 'use'} ${e.path}: ${why}; give a folder this user can write (--lake)`;
}

/** An error nobody expected, with its stack: the message on one line, the stack's frames below it. */
function unexpected(err: unknown): string {
  if (!(err instanceof Error)) return inert(bounded(String(err), LINE_CHARS));
  const head = `${err.name}: ${err.message}`;
  const stack = err.stack ?? head;
  return stack.startsWith(head)
    ? inert(`${err.name}: ${bounded(err.message, LINE_CHARS)}`) + inert(stack.slice(head.length), { lines: true })
    : inert(bounded(stack, LINE_CHARS), { lines: true });
}

/**
 * SQL that opens with a comment (`-- top senders...`) would read as a flag: an argument of dashes
 * then a space is no flag, so it goes after `--`, where it is a positional as it was meant.
 */
export function sqlAfterDashes(argv: string[]): string[] {
  const i = argv.findIndex((x) => /^-+\s/.test(x));
  return i < 0 || !argv.includes('query') || argv.includes('--') ? argv : [...argv.slice(0, i), ...argv.slice(i + 1), '--', argv[i]!];
}

/**
 * The options that take several values (a repeated comma list adds to it: export-op's); any
 * other given twice is a mistake, not "the last one". `_`, `$0` and `--` are yargs' own.
 */
const LISTS = new Set(['_', '$0', '--', 'full-refresh', 'tables', 'partition', 'addresses', 'include-chains', 'c-chain-evm-addresses']);

/** Refuses a flag given with its negation (`--rows --no-rows`), where yargs keeps the last. */
export function contradictions(argv: readonly string[]): string[] {
  const end = argv.indexOf('--');
  const names = new Set((end < 0 ? argv : argv.slice(0, end)).flatMap((x) => /^--([a-z][a-z0-9-]*)(?:=|$)/.exec(x)?.[1] ?? []));
  return [...names].filter((n) => n.startsWith('no-') && names.has(n.slice(3))).map((n) => `--${n.slice(3)} and --${n}: give one of them`);
}

/** Refuses every option given more than once (yargs would pass on an array where one value goes). */
function onceEach(argv: Record<string, unknown>): void {
  // yargs keeps a camelCase copy of each dashed name: the dashed one is reported. Not the values:
  // one may hold a secret (--budget-db's password).
  const twice = Object.entries(argv).filter(([name, value]) => Array.isArray(value) && !LISTS.has(name) && !/[A-Z]/.test(name));
  if (twice.length) throw new UsageError(twice.map(([name, value]) => `--${name}: given ${(value as unknown[]).length} times; give it once`).join('\n'));
}

/**
 * Refuses a number option given text that is not a number: yargs passes it on as NaN, and a
 * check after it would say "NaN" where the user wrote "abc". The text is read back from `args`.
 */
function numbersGiven(args: readonly string[]): (argv: Record<string, unknown>) => void {
  const textOf = (name: string): string => {
    for (let i = 0; i < args.length; i++) {
      if (args[i] === `--${name}`) return args[i + 1] ?? '';
      if (args[i]!.startsWith(`--${name}=`)) return args[i]!.slice(name.length + 3);
    }
    return '';
  };
  return (argv) => {
    const bad = Object.entries(argv).filter(([name, value]) => typeof value === 'number' && Number.isNaN(value) && !/[A-Z]/.test(name) && name.length > 1);
    if (bad.length) throw new UsageError(bad.map(([name]) => `--${name} ${JSON.stringify(textOf(name))}: not a number`).join('\n'));
  };
}

/** A command's name and the flags it takes (its own, the global --lake, --help and --version). */
export interface CommandFlags {
  name: string;
  flags: string[];
}

/** Each command's name and flags, read from its builder (only on a mistake: it costs a yargs instance each). */
function commandFlags(yargs: (argv: string[]) => Argv, commands: ReadonlyArray<CommandModule<Globals, any>>): CommandFlags[] {
  return commands.map((c) => {
    const [name, ...positionals] = String(c.command).split(' ');
    const built = (c.builder as (y: Argv<Globals>) => Argv<unknown>)(yargs([]).option('lake', { type: 'string' }));
    const keys = Object.keys((built as unknown as { getOptions(): { key: Record<string, unknown> } }).getOptions().key);
    const taken = new Set(positionals.map((p) => p.replace(/[[\]<>.]/g, '')));
    return { name: name!, flags: keys.filter((k) => !taken.has(k)) };
  });
}

/** yargs' "Invalid values" (a value not among an option's choices) as one line a flag, with the closest choice. */
export function invalidChoices(msg: string): string | undefined {
  if (!/^Invalid values?:/.test(msg)) return undefined;
  const lines = [...msg.matchAll(/Argument: ([^,]+), Given: (.*), Choices: (.*)$/gm)].map(([, flag, given, choices]) => {
    const names = [...choices!.matchAll(/"([^"]*)"/g)].map((c) => c[1]!);
    const text = /^"(.*)"$/.exec(given!)?.[1] ?? given!;
    return `--${flag} ${JSON.stringify(text)}: not one of ${names.join(', ')}${didYouMean(text, names)}`;
  });
  return lines.length ? lines.join('\n') : undefined;
}

/**
 * yargs' `Unknown argument: rn` said with the fix: for a word where a command goes, the command
 * closest to it; for a flag, the closest flag of the command given; and where the whole list is
 * (--help) rather than the list. Undefined for a message of another kind.
 */
export function unknownArguments(msg: string, argv: readonly string[], commands: readonly CommandFlags[]): string | undefined {
  const m = /^Unknown arguments?: (.*)$/.exec(msg);
  if (!m) return undefined;
  const end = argv.indexOf('--');
  const given = end < 0 ? argv : argv.slice(0, end);
  const command = commands.find((c) => given.includes(c.name));
  const names = m[1]!.split(', ');
  // yargs names a dashed flag twice, as written and camelCased (dry-rn, dryRn): the first is said.
  const said = names.filter((n) => !/[A-Z]/.test(n) || !names.includes(n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)));
  const asFlag = (n: string) => given.some((x) => x === `--${n}` || x.startsWith(`--${n}=`) || x === `-${n}` || x.startsWith(`-${n}=`));
  // Without a command, the words after the first are its arguments: the first is the mistake.
  const word = said.find((n) => !asFlag(n));
  return said
    .filter((n) => command || asFlag(n) || n === word)
    .map((n) => {
      if (asFlag(n)) {
        const of = command ? `${command.name}` : 'chainlake';
        const flags = command?.flags ?? ['lake', 'help', 'version'];
        return `--${n}: not an option of ${of}${didYouMean(n, flags, (f) => `--${f}`)} (chainlake ${command ? `${command.name} ` : ''}--help lists them)`;
      }
      if (command) return `${n}: ${command.name} takes no such argument (chainlake ${command.name} --help)`;
      return `${n}: not a command${didYouMean(n, commands.map((c) => c.name))} (chainlake --help lists them)`;
    })
    .join('\n');
}

/** Runs the command `argv` names and returns its exit code (also set as process.exitCode, which the binary exits with). */
export async function main(argv: string[]): Promise<number> {
  // `chainlake query ... | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
  let code = 0;
  const exit = (c: number) => {
    code = c;
  };
  try {
    const args = sqlAfterDashes(argv);
    const both = contradictions(args);
    if (both.length) throw new UsageError(both.join('\n'));
    const plain = plainQuery(args);
    if (plain) exit(await plain);
    else await parse(args, exit);
  } catch (err) {
    // A usage error may list several problems, a line each; a run error is one line, and may
    // quote a service's answer. Each line is bounded: what it quotes may be megabytes.
    const refusal = fileRefusal(err);
    if (err instanceof UsageError) {
      process.stderr.write(`chainlake: ${inert(err.message.split('\n').map((l) => bounded(l, LINE_CHARS)).join('\n'), { lines: true })}\n`);
      code = EXIT.usage;
    } else if (refusal) {
      process.stderr.write(`chainlake: ${inert(bounded(refusal, LINE_CHARS))}\n`);
      code = EXIT.usage;
    } else if (err instanceof RunError) {
      process.stderr.write(`chainlake: ${inert(bounded(err.message, LINE_CHARS))}\n`);
      code = err.exitCode;
    } else {
      process.stderr.write(`chainlake: ${unexpected(err)}\n`);
      code = EXIT.failed;
    }
  }
  process.exitCode = code;
  return code;
}

/** Parses `args` with yargs and runs the command they name. */
async function parse(args: string[], exit: Exit): Promise<void> {
  const [{ default: yargs }, { commandsOf }, { VERSION }] = await Promise.all([import('yargs'), import('./commands.js'), import('../version.js')]);
  const commands = commandsOf(exit);
  await yargs(args)
    .scriptName('chainlake')
    .usage('$0 <command> [options]\n\nBatch ETL from the chain data service, the metrics service and a node (JSON-RPC) into a Parquet lake queried with DuckDB.')
    // A run's lake may come from its pipeline; every other command reads the default (givenLake).
    .option('lake', LAKE_OPTION)
    .command(commands as unknown as CommandModule[])
    .middleware(onceEach, true)
    .middleware(numbersGiven(args), true)
    .epilog(EXIT_CODES)
    .demandCommand(1, 'give a command: init, run, query, status, tables, check, report, warehouse, export, rebuild, compact, reset, sim, export-op or aggregate-signatures')
    .strict()
    .help()
    .version(VERSION)
    .exitProcess(false)
    .fail((msg, err) => {
      // yargs reports its own validation failures as YError: those are usage errors too.
      if (err && err.name !== 'YError') throw err;
      throw new UsageError((msg && (invalidChoices(msg) ?? unknownArguments(msg, args, commandFlags(yargs, commands)))) ?? msg ?? err?.message ?? 'bad usage');
    })
    .parseAsync();
}
