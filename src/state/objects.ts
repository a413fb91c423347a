// Where a lake's files live, as objects under keys (lake-relative paths with `/`): a folder on this
// machine (DiskObjects) or a bucket prefix of an S3-compatible store (s3.ts). The commit protocol
// (store.ts) is written once against this; the disk moves a file by renaming it, a store without
// rename by a server-side copy and a delete.
import { closeSync, copyFileSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { RunError } from '../errors.js';
import { createHash } from 'node:crypto';
import { alive, thisProcess } from './process.js';

export interface ObjectInfo {
  key: string;
  size: number;
  /** Changes whenever the content does (the store's ETag; on disk, size and modification time). */
  etag: string;
}

export interface ObjectStore {
  /** Where the objects are, for messages: a folder or `s3://bucket/prefix`; never a secret. */
  readonly where: string;
  /** Writes a whole object; a reader sees the old or the new content, never a part. Returns its etag. */
  put(key: string, body: string | Buffer): Promise<string>;
  /**
   * Writes a whole object only if there is none at `key`: true when this call made it, false when
   * one was there. Of several writers creating one key at once, one gets true (on disk always; on
   * a store that ignores conditions, a read then a write: see S3Objects).
   */
  create(key: string, body: string | Buffer, o?: { durable?: string[] }): Promise<boolean>;
  /**
   * Writes an object that no reader finds before a later `create` names it (a manifest before its
   * table's metadata), or one a reader may find stale (a version hint): on disk without a sync of
   * its own; `create(..., { durable })` makes such files durable before the object that names them.
   */
  write(key: string, body: string | Buffer): Promise<void>;
  /** `put` of a local file's content (without holding a large file in memory). */
  upload(key: string, file: string): Promise<string>;
  get(key: string): Promise<{ body: Buffer; etag: string } | undefined>;
  /** Writes the object to `file` (complete or not at all); undefined when there is no such object. */
  download(key: string, file: string): Promise<string | undefined>;
  /** Every object whose key starts with `prefix`, in key order. */
  list(prefix: string): Promise<ObjectInfo[]>;
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Copies `from` to `to` and removes `from`; the new object's etag, undefined when `from` is gone (moved already). */
  move(from: string, to: string): Promise<string | undefined>;
  /** Removes an object; removing one that is not there is no error. */
  delete(key: string): Promise<void>;
  /**
   * Removes what writers of this host killed mid-write left under `prefix` (their temporary
   * files), sparing those of writers still running and of other hosts; how many went. A store
   * whose writes leave nothing has none.
   */
  clearDeadTemps?(prefix: string): Promise<number>;
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * This host's mark in temporary names: of its name and its boot and pid namespace (a container
 * numbers its pids apart), so that a folder shared by several machines (NFS) tells whose pid a
 * temporary file names.
 */
export function hostTag(): string {
  const me = thisProcess();
  return (tag ??= createHash('sha256').update(`${me.host}\n${me.space ?? ''}`).digest('hex').slice(0, 8));
}
let tag: string | undefined;

/**
 * The temporary file a writer of this process makes beside `path` before renaming or linking it
 * into place: `<path>.tmp-<pid>-<host tag>`, with a random tail where the process may make several
 * at once.
 */
export function tempOf(path: string, several = false): string {
  return `${path}.tmp-${process.pid}-${hostTag()}${several ? `-${Math.random().toString(36).slice(2, 8)}` : ''}`;
}

/**
 * Who made a temporary file named by tempOf: its pid and host tag (none in names from before the
 * tag, whose pids were this host's); undefined for any other name.
 */
export function tempWriter(name: string): { pid: number; host?: string } | undefined {
  const m = /\.tmp-(\d{1,10})(?:-([0-9a-f]{8}))?(?:-[0-9a-z]{1,6})?$/.exec(name);
  if (!m) return undefined;
  return { pid: Number(m[1]), ...(m[2] ? { host: m[2] } : {}) };
}

/** Writes a file so that a reader sees the old or the new content, never a part; `sync: false` leaves it to the system when it reaches the disk. */
export function writeAtomic(path: string, content: string | Buffer, o: { sync?: boolean } = {}): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tempOf(path);
  const fd = openSync(tmp, 'w');
  try {
    writeFileSync(fd, content);
    if (o.sync !== false) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  if (o.sync !== false) fsyncPath(dirname(path));
}

/**
 * Creates `target` with `body` only where no file has that name, whole or not at all: written and
 * synced under `temp` (made here, removed after), then hard-linked, as a link fails on a name that
 * exists. True when this call made it. `what` names what needs it, for a file system without links.
 */
export function createByLink(target: string, temp: string, body: string | Buffer, what: string): boolean {
  const fd = openSync(temp, 'wx');
  try {
    writeFileSync(fd, body);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, target);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(code)) throw new RunError(`${what} needs hard links, which this file system refuses (${code}); put the lake on a local disk or a file system that has them`);
    throw err;
  } finally {
    unlinkSync(temp);
  }
}

/** Files under `dir`, as paths relative to `root` with `/`, sorted. */
export function walkFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out.push(relative(root, join(d, e.name)).split(sep).join('/'));
    }
  };
  if (existsSync(dir) && statSync(dir).isDirectory()) walk(dir);
  return out.sort();
}

/**
 * A lake folder on this machine. Its methods do their work synchronously (they only wrap it in a
 * promise), so a commit on disk runs start to end without yielding to other work, as it always has.
 */
export class DiskObjects implements ObjectStore {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  get where(): string {
    return this.root;
  }

  /** The absolute path of a key; anything that would land outside the folder is refused. */
  path(key: string): string {
    const abs = resolve(this.root, key);
    if (abs !== this.root && !abs.startsWith(this.root + sep)) throw new Error(`refusing a path outside the lake: ${key}`);
    return abs;
  }

  async put(key: string, body: string | Buffer): Promise<string> {
    writeAtomic(this.path(key), body);
    return this.etagOf(this.path(key));
  }

  async write(key: string, body: string | Buffer): Promise<void> {
    writeAtomic(this.path(key), body, { sync: false });
  }

  async create(key: string, body: string | Buffer, o: { durable?: string[] } = {}): Promise<boolean> {
    for (const k of o.durable ?? []) fsyncPath(this.path(k));
    const target = this.path(key);
    mkdirSync(dirname(target), { recursive: true });
    const made = createByLink(target, tempOf(target, true), body, `${key} in ${this.root}`);
    if (made) fsyncPath(dirname(target));
    return made;
  }

  async upload(key: string, file: string): Promise<string> {
    const target = this.path(key);
    // A file staged inside the lake is already where it will be read from: it only needs to be on disk.
    if (resolve(file) === target) fsyncPath(target);
    else {
      mkdirSync(dirname(target), { recursive: true });
      const tmp = tempOf(target);
      copyFileSync(file, tmp);
      fsyncPath(tmp);
      renameSync(tmp, target);
    }
    return this.etagOf(target);
  }

  async get(key: string): Promise<{ body: Buffer; etag: string } | undefined> {
    const p = this.path(key);
    if (!existsSync(p)) return undefined;
    return { body: readFileSync(p), etag: this.etagOf(p) };
  }

  async download(key: string, file: string): Promise<string | undefined> {
    const p = this.path(key);
    if (!existsSync(p)) return undefined;
    if (resolve(file) !== p) {
      mkdirSync(dirname(file), { recursive: true });
      copyFileSync(p, tempOf(file));
      renameSync(tempOf(file), file);
    }
    return this.etagOf(p);
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    return this.keys(prefix).map((key) => ({ key, ...this.info(this.path(key)) }));
  }

  private keys(prefix: string): string[] {
    // The folder of the prefix is walked; keys are then filtered by the whole prefix.
    const dir = this.path(prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '.');
    return walkFiles(this.root, dir).filter((k) => k.startsWith(prefix));
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const p = this.path(key);
    return existsSync(p) ? { key, ...this.info(p) } : undefined;
  }

  async move(from: string, to: string): Promise<string | undefined> {
    const src = this.path(from);
    if (!existsSync(src)) return undefined;
    const dst = this.path(to);
    mkdirSync(dirname(dst), { recursive: true });
    renameSync(src, dst);
    return this.etagOf(dst);
  }

  async delete(key: string): Promise<void> {
    const p = this.path(key);
    if (existsSync(p)) unlinkSync(p);
  }

  async clearDeadTemps(prefix: string): Promise<number> {
    let n = 0;
    for (const key of this.keys(prefix)) {
      const writer = tempWriter(key);
      // Another machine's (a folder shared over NFS) is left: its pid is not one of this host's.
      if (!writer || (writer.host !== undefined && writer.host !== hostTag())) continue;
      if (writer.pid === process.pid || alive(writer.pid)) continue;
      rmSync(this.path(key), { force: true });
      n++;
    }
    return n;
  }

  /** Makes the moves into these folders durable (a rename is only on disk once its folder is). */
  syncDirs(keys: string[]): void {
    for (const d of new Set(keys.map((k) => dirname(this.path(k))))) if (existsSync(d)) fsyncPath(d);
  }

  private info(p: string): { size: number; etag: string } {
    const s = statSync(p);
    return { size: s.size, etag: `${s.size}-${s.mtimeMs}` };
  }

  private etagOf(p: string): string {
    return this.info(p).etag;
  }
}
