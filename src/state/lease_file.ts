// The lease's record on a local (or network) file system, with conditional writes that hold
// against other processes. A file system has no compare-and-swap, but it creates a name
// exclusively: the record is a folder of numbered versions, the newest one the record, and a write
// over version n is link(complete temp file, n + 1), which fails for all but one writer. An empty
// version is a removed record, so the numbers never go back. Older versions are deleted once a
// newer one exists; a writer whose version had already been deleted (it read long ago) may create
// its n + 1 again, but never as the newest, which it checks after the link and then undoes. The
// newest version is never deleted, so versions only grow and that check is enough.
import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { LeaseBackend } from './lease.js';
import { createByLink } from './objects.js';

/** The version of a lock file an older chainlake created exclusively in place of the folder. */
const LEGACY = 'file';
/** Temp files of writers killed before they linked them. */
const STALE_TEMP_MS = 10 * 60_000;

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

export class FileLeaseBackend implements LeaseBackend {
  readonly conditional = true;
  readonly where: string;

  constructor(private readonly dir: string) {
    this.where = dir;
  }

  /** Version numbers present; undefined when `dir` is an older chainlake's lock file. */
  private versions(): number[] | undefined {
    try {
      return readdirSync(this.dir)
        .filter((f) => /^\d+$/.test(f))
        .map(Number);
    } catch (err) {
      if (code(err) === 'ENOENT') return [];
      if (code(err) === 'ENOTDIR') return undefined;
      throw err;
    }
  }

  /** The newest version and its body ('' when removed); n = 0 when there has been none. */
  private newest(): { n: number; body: string } | undefined {
    for (;;) {
      const all = this.versions();
      if (!all) return undefined;
      if (all.length === 0) return { n: 0, body: '' };
      const n = Math.max(...all);
      try {
        return { n, body: readFileSync(join(this.dir, String(n)), 'utf8') };
      } catch (err) {
        // Deleted as a newer one landed: read that one.
        if (code(err) !== 'ENOENT') throw err;
      }
    }
  }

  async read(): Promise<{ body: string; version: string } | undefined> {
    for (;;) {
      const cur = this.newest();
      if (cur) return cur.body ? { body: cur.body, version: String(cur.n) } : undefined;
      try {
        return { body: readFileSync(this.dir, 'utf8'), version: LEGACY };
      } catch (err) {
        // Taken over since: the folder is there now.
        if (code(err) !== 'ENOENT' && code(err) !== 'EISDIR') throw err;
      }
    }
  }

  async create(body: string): Promise<boolean> {
    const cur = this.newest();
    if (!cur || cur.body) return false;
    try {
      mkdirSync(this.dir, { recursive: true });
    } catch (err) {
      if (code(err) === 'EEXIST' || code(err) === 'ENOTDIR') return false; // an older chainlake's lock file
      throw err;
    }
    return this.swap(cur.n, body);
  }

  async replace(body: string, version: string): Promise<boolean> {
    if (version === LEGACY) return this.dropLegacy() && this.create(body);
    return /^\d+$/.test(version) && this.swap(Number(version), body);
  }

  async remove(version: string): Promise<boolean> {
    if (version === LEGACY) return this.dropLegacy();
    return /^\d+$/.test(version) && this.swap(Number(version), '');
  }

  /** Only one process unlinks a given file; a folder in its place is not a lock file. */
  private dropLegacy(): boolean {
    try {
      if (!lstatSync(this.dir).isFile()) return false;
      unlinkSync(this.dir);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Writes version n + 1 if version n is the newest: exactly one of concurrent writers of n + 1
   * gets true. Only create makes the folder: a replace in a folder deleted by hand fails.
   */
  private swap(n: number, body: string): boolean {
    const next = join(this.dir, String(n + 1));
    const temp = join(this.dir, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      if (!createByLink(next, temp, body, `the lake's lock (${this.dir})`)) return false;
    } catch (err) {
      // The folder went (a release, or removed by hand): nothing to swap.
      if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return false;
      throw err;
    }
    const all = this.versions() ?? [];
    if (all.some((v) => v > n + 1)) {
      rmSync(next, { force: true });
      return false;
    }
    for (const v of all) if (v < n + 1) rmSync(join(this.dir, String(v)), { force: true });
    this.clearTemps();
    const dirFd = openSync(this.dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
    return true;
  }

  private clearTemps(): void {
    for (const f of readdirSync(this.dir)) {
      if (!f.startsWith('.tmp-')) continue;
      const p = join(this.dir, f);
      try {
        if (Date.now() - statSync(p).mtimeMs > STALE_TEMP_MS) unlinkSync(p);
      } catch {
        // gone already
      }
    }
  }
}
