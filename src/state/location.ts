// Where a lake is, read without the modules that read or write one: a folder or an s3:// URL, and
// whether a folder holds a lake. `chainlake query` and openLake check their lake with these alone
// at start-up (cli/query.ts); the object store's SDK, crypto and the state files load only where
// they are used.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';

/** A lake given as a URL rather than a folder (`s3://bucket/prefix`). */
export function isObjectUrl(lake: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(lake);
}

export interface S3Location {
  bucket: string;
  /** Key prefix of the lake, without slashes at either end ('' for the bucket's root). */
  prefix: string;
  /** `s3://bucket/prefix`, normalised. */
  url: string;
}

/** Checks and splits `s3://bucket/prefix`; `flag` names where it was given, for the message. */
export function parseS3Url(url: string, flag = '--lake'): S3Location {
  const m = /^s3:\/\/([^/?#]*)\/?([^?#]*)$/.exec(url);
  if (!m) {
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1];
    throw new UsageError(`${flag} ${url}: ${scheme && scheme.toLowerCase() !== 's3' ? `${scheme}:// is not a lake location; give a folder or s3://bucket/prefix (S3 and S3-compatible stores)` : 'not of the form s3://bucket/prefix'}`);
  }
  const bucket = m[1]!;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{1,61}[A-Za-z0-9]$/.test(bucket)) throw new UsageError(`${flag} ${url}: ${JSON.stringify(bucket)} is not a bucket name (3 to 63 letters, digits, dots and dashes)`);
  const prefix = m[2]!.replace(/\/+$/, '');
  const parts = prefix === '' ? [] : prefix.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) throw new UsageError(`${flag} ${url}: the prefix ${JSON.stringify(prefix)} has an empty, . or .. part`);
  return { bucket, prefix, url: `s3://${bucket}${prefix ? `/${prefix}` : ''}` };
}

/** A lake that must already be there (commands and the library that only read one). */
export function existingFolder(lake: string, label: string): string {
  if (!existsSync(lake) || !statSync(lake).isDirectory()) throw new UsageError(`${label} ${lake}: no such folder`);
  return lake;
}

/** Whether a local folder holds a lake: a partition state or a run report, as an s3:// lake must (syncOnce). */
export function holdsLake(dir: string): boolean {
  return existsSync(join(dir, '_state')) || existsSync(join(dir, '_runs'));
}

/**
 * A local lake that a reader reads: a folder that is missing, or holds no lake (a mistyped --lake,
 * such as the lake's parent), is a usage error, not an empty lake whose every count is 0.
 */
export function existingLake(lake: string, label: string): string {
  existingFolder(lake, label);
  if (!holdsLake(lake)) throw new UsageError(`${label} ${lake}: no lake there (no partition state and no run report in this folder)`);
  return lake;
}
