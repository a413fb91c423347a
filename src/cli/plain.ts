// A command's arguments read without yargs, when they are plainly valid: loading yargs and the
// other commands' modules and letting it parse cost a short command (`chainlake query "SELECT 1"`)
// more than DuckDB's own start-up. Anything this does not read as yargs would (a flag given twice,
// --help, an unknown or misspelt flag, a value out of its choices, a dash where a value goes) is
// left to yargs, which parses it and says what is wrong: this reads no argument differently.

/** An option as its command declares it to yargs (the part of yargs' Options this reads). */
export interface PlainOption {
  type: 'string' | 'boolean';
  alias?: string;
  choices?: readonly string[];
  default?: unknown;
}

const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * The arguments of `argv` (`command` then its own) as yargs hands them to the command's handler
 * (each flag by its name and camelCased, defaults filled, `_` the command and the words after
 * `--`), when every one is plainly one of `options` or the one `positional`; undefined otherwise.
 */
export function plainArgs(argv: readonly string[], command: string, positional: string, options: Readonly<Record<string, PlainOption>>): Record<string, unknown> | undefined {
  if (argv[0] !== command) return undefined;
  const byFlag = new Map<string, string>();
  for (const [name, o] of Object.entries(options)) {
    byFlag.set(`--${name}`, name);
    if (o.alias) byFlag.set(o.alias.length === 1 ? `-${o.alias}` : `--${o.alias}`, name);
  }
  const out: Record<string, unknown> = { _: [command], $0: 'chainlake' };
  const given = new Set<string>();
  const set = (name: string, value: unknown): boolean => {
    if (given.has(name)) return false;
    given.add(name);
    for (const key of [name, camel(name), options[name]?.alias]) if (key !== undefined) out[key] = value;
    return true;
  };
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      // One word after `--` (SQL that opens with a comment: main.ts), where the positional is not given.
      if (argv.length !== i + 2 || given.has(positional)) return undefined;
      (out._ as string[]).push(argv[i + 1]!);
      break;
    }
    if (!arg.startsWith('-')) {
      if (!set(positional, arg)) return undefined;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    const negated = flag.startsWith('--no-') && !byFlag.has(flag) ? byFlag.get(`--${flag.slice(5)}`) : undefined;
    if (negated !== undefined) {
      if (eq >= 0 || !set(negated, false)) return undefined;
      continue;
    }
    const name = byFlag.get(flag);
    const o = name === undefined ? undefined : options[name]!;
    if (name === undefined || o === undefined) return undefined;
    if (o.type === 'boolean') {
      if (eq >= 0 || !set(name, true)) return undefined;
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '' || (eq < 0 && value.startsWith('-'))) return undefined;
    if (o.choices && !o.choices.includes(value)) return undefined;
    if (!set(name, value)) return undefined;
  }
  for (const [name, o] of Object.entries(options)) if (!given.has(name) && o.default !== undefined) set(name, o.default);
  return out;
}
