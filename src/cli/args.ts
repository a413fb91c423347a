// What every command module shares: the global --lake, the types of a command's flags, and checks
// of flags that several commands take.
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../errors.js';
import { existingLake, isObjectUrl, parseS3Url } from '../state/location.js';
import { redactUrl } from '../cluster/url.js';

export const DEFAULT_LAKE = 'data/lake';

/** The global `--lake` flag, as yargs declares it (main.ts) and as a command read without yargs reads it (plain.ts). */
export const LAKE_OPTION = {
  type: 'string',
  describe: `lake folder, or s3://bucket/prefix (docs/object-storage.md); default ${DEFAULT_LAKE}, or for run the pipeline's \`lake\``,
  global: true,
  requiresArg: true,
} as const;

/** What every command is given besides its own flags: `--lake`, a global flag (main.ts). */
export interface Globals {
  lake: string | undefined;
}

/** The flags a command's builder declares (a command module's second type). */
export type FlagsOf<B> = B extends (y: Argv<Globals>) => Argv<infer U> ? U : never;

/** The flags as the command's handler receives them: by the flag's name and camelCased. */
export type ArgsOf<B> = ArgumentsCamelCase<FlagsOf<B>>;

/** How a command's handler gives main its exit code. */
export type Exit = (code: number) => void;

/** A command: its flags (typed by `builder`) and what it does, ending with `run`'s exit code. */
export function commandOf<U>(command: string, describe: string, builder: (y: Argv<Globals>) => Argv<U>, run: (a: ArgumentsCamelCase<U>) => number | Promise<number>): (exit: Exit) => CommandModule<Globals, U> {
  return (exit) => ({ command, describe, builder, handler: async (a) => exit(await run(a)) });
}

/** The lake of a command: --lake, else the default. (A run's may come from its pipeline first: run.ts.) */
export function givenLake(a: Globals): string {
  return a.lake ?? DEFAULT_LAKE;
}

/** `--lake`: a folder (not a file), or `s3://bucket/prefix` (normalised). */
export function checkLake(lake: string): string {
  if (isObjectUrl(lake)) return parseS3Url(lake).url;
  if (existsSync(lake) && !statSync(lake).isDirectory()) throw new UsageError(`--lake ${lake}: is a file, not a folder`);
  // A lake not made yet: the first of its folders that exists must be one (run makes the rest).
  for (let up = dirname(resolve(lake)); up !== dirname(up); up = dirname(up)) {
    if (!existsSync(up)) continue;
    if (!statSync(up).isDirectory()) throw new UsageError(`--lake ${lake}: ${up} is a file, not a folder`);
    break;
  }
  return lake;
}

/**
 * The local folder a reader (query, status, check, report, warehouse, export) reads `lake` from:
 * the folder, or an s3:// lake's read copy brought up to date (`data: false`: its states and run
 * reports only). A folder that is missing or holds no lake, or a prefix with nothing under it, is
 * a typo, not an empty lake: exit 2, in one message each (existingLake, readableLake).
 */
export async function readLake(lake: string, o: { data?: boolean } = {}): Promise<string> {
  const given = checkLake(lake);
  // The object store's read copy loads only for an s3:// lake: a local one starts without it.
  if (!isObjectUrl(given)) return existingLake(given, '--lake');
  const { readableLake } = await import('../state/cache.js');
  return readableLake(given, { ...o, mustExist: true });
}

export function checkUrl(flag: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  try {
    const u = new URL(v);
    if (u.protocol === 'http:' || u.protocol === 'https:') return v.replace(/\/+$/, '');
  } catch {
    // reported below
  }
  throw new UsageError(`--${flag} ${JSON.stringify(v)}: not an http(s) URL`);
}

/** A PostgreSQL connection string (`--budget-db`); shown in a message without its password. */
export function checkPostgresUrl(flag: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  let ok = false;
  try {
    const u = new URL(v);
    ok = (u.protocol === 'postgres:' || u.protocol === 'postgresql:') && u.hostname !== '';
  } catch {
    // reported below
  }
  if (!ok) throw new UsageError(`--${flag} ${redactUrl(v)}: not a postgres://user:password@host:port/db connection string`);
  return v;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--flag 30m` (s, m, h, d; 0 alone is none) in ms; undefined when not given. */
export function durationMs(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^\s*(\d{1,9})\s*([smhd])?\s*$/.exec(v);
  if (!m || (!m[2] && m[1] !== '0')) throw new UsageError(`--${flag} ${JSON.stringify(v)}: must be a duration such as 30m, 6h or 7d (s, m, h, d), or 0`);
  return Number(m[1]) * (m[2] ? UNIT_MS[m[2]]! : 0);
}

/** A whole-number flag given as text (yargs would turn `abc` into NaN, and the message with it). */
export function wholeNumber(flag: string, v: string | undefined, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`--${flag} ${JSON.stringify(v)}: must be a whole number >= ${min}`);
  return n;
}

/** A simulator's seed: a whole number (0 or more), any other refused rather than read as another world. */
export function seedOf(v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isSafeInteger(v) || v < 0) throw new UsageError(`--seed ${v}: a whole number, 0 or more`);
  return v;
}
