// Checks of flags that several commands take.
import { existsSync, statSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { isObjectUrl, parseS3Url } from '../state/s3.js';
import { redactUrl } from '../cluster/url.js';

/** `--lake`: a folder (not a file), or `s3://bucket/prefix` (normalised). */
export function checkLake(lake: string): string {
  if (isObjectUrl(lake)) return parseS3Url(lake).url;
  if (existsSync(lake) && !statSync(lake).isDirectory()) throw new UsageError(`--lake ${lake}: is a file, not a folder`);
  return lake;
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

/** A whole-number flag given as text (yargs would turn `abc` into NaN, and the message with it). */
export function wholeNumber(flag: string, v: string | undefined, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`--${flag} ${JSON.stringify(v)}: must be a whole number >= ${min}`);
  return n;
}
