// Checkpoints and the commit protocol. A partition's state file lists the Parquet files that hold
// its committed rows together with the cursor that produced them, so data and cursor commit as one:
//   1. the batch is written to staging (_staging/) and fsynced;
//   2. the new state (files + cursor + the pending moves) replaces the old one atomically (rename);
//   3. the staged files are renamed into the table folder, replaced files removed;
//   4. the state is rewritten without the pending moves.
// A crash before 2 leaves only staging litter (removed at the next start); a crash after 2 is rolled
// forward from the pending moves. Readers of <lake>/<table>/ only ever see complete files.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Cursor } from './cursor.js';

/** Where a partition stands: its committed files and its cursor. */
export interface PartitionState {
  table: string;
  partition: string;
  /** Values of the partition's columns (chain_id, network, ...). */
  values?: Record<string, string>;
  /** Lake-relative paths of the committed files (data and rejects). */
  files: string[];
  rows: number;
  rejects: number;
  cursor: Cursor;
  lastRun?: { runId: string; at: string; status: 'complete' | 'partial' };
  /** A --full-refresh in progress: its files live under _rebuild/ until the rebuild swaps them in. */
  rebuild?: { cursor: Cursor; files: string[]; rows: number; rejects: number };
  pending?: { moves: Array<[string, string]>; deletes: string[] };
}

export const STAGING = '_staging';
export const STATE = '_state';
export const REJECTS = '_rejects';
export const RUNS = '_runs';
export const REBUILD = '_rebuild';
export const RAW = '_raw';

/** Partition id of the state that owns a merge-into-table stream's data files. */
export const TABLE_PARTITION = '(table)';

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes a file so that a reader sees the old or the new content, never a part. */
export function writeAtomic(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    writeFileSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncPath(dirname(path));
}

/** A file name for a partition id: readable, safe, and unique (hash suffix). */
export function slug(partition: string): string {
  // No '=': a folder named k=v reads as a hive partition to DuckDB and Spark.
  const readable = partition.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '_').slice(0, 80);
  return `${readable}-${createHash('sha256').update(partition).digest('hex').slice(0, 10)}`;
}

export class StateStore {
  readonly lake: string;
  /** Throws when this process may no longer write the lake (its lock was taken over): checked before every commit and recovery. */
  fence?: () => void;

  constructor(lake: string) {
    this.lake = resolve(lake);
  }

  /** Resolves a lake-relative path and refuses anything that would land outside the lake. */
  path(rel: string): string {
    const abs = resolve(this.lake, rel);
    if (abs !== this.lake && !abs.startsWith(this.lake + sep)) throw new Error(`refusing a path outside the lake: ${rel}`);
    return abs;
  }

  private stateFile(table: string, partition: string): string {
    return this.path(join(STATE, table, `${slug(partition)}.json`));
  }

  load(table: string, partition: string): PartitionState {
    const f = this.stateFile(table, partition);
    if (!existsSync(f)) return { table, partition, files: [], rows: 0, rejects: 0, cursor: {} };
    return JSON.parse(readFileSync(f, 'utf8')) as PartitionState;
  }

  all(): PartitionState[] {
    const root = this.path(STATE);
    if (!existsSync(root)) return [];
    const out: PartitionState[] = [];
    for (const table of readdirSync(root).sort())
      for (const f of readdirSync(join(root, table)).sort())
        if (f.endsWith('.json')) out.push(JSON.parse(readFileSync(join(root, table, f), 'utf8')) as PartitionState);
    return out;
  }

  /** A fresh folder under staging for one batch. */
  stagingDir(table: string, partition: string): string {
    return this.path(join(STAGING, table, `${slug(partition)}-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`));
  }

  /**
   * Commits a partition's next state in one step: `moves` are [file, lake-relative target] (staged
   * or rebuilt files, absolute or lake-relative), `deletes` lake-relative files the state drops.
   * `next.files` must already list the targets and not the deleted files.
   */
  commit(next: PartitionState, moves: Array<[string, string]>, deletes: string[] = []): PartitionState {
    this.fence?.();
    const rel = (p: string) => relative(this.lake, this.path(p));
    const pendingMoves = moves.map(([s, t]): [string, string] => [rel(s), rel(t)]);
    for (const [s] of pendingMoves) fsyncPath(this.path(s));
    const state: PartitionState = { ...next, pending: { moves: pendingMoves, deletes: deletes.map(rel) } };
    const file = this.stateFile(next.table, next.partition);
    writeAtomic(file, JSON.stringify(state, null, 1));
    this.apply(state);
    delete state.pending;
    writeAtomic(file, JSON.stringify(state, null, 1));
    return state;
  }

  /** Carries out pending moves and deletes; safe to repeat. */
  private apply(state: PartitionState): void {
    const dirs = new Set<string>();
    for (const [from, to] of state.pending?.moves ?? []) {
      const src = this.path(from);
      const dst = this.path(to);
      if (existsSync(src)) {
        mkdirSync(dirname(dst), { recursive: true });
        renameSync(src, dst);
        dirs.add(dirname(dst));
      }
    }
    for (const f of state.pending?.deletes ?? []) {
      const p = this.path(f);
      if (existsSync(p)) unlinkSync(p);
    }
    for (const d of dirs) fsyncPath(d);
  }

  /**
   * Finishes what a killed run committed but did not move, then clears staging. Call while
   * holding the lake lock, before anything else touches the lake.
   */
  recover(): { rolledForward: number } {
    this.fence?.();
    let rolledForward = 0;
    const root = this.path(STATE);
    if (existsSync(root)) {
      for (const table of readdirSync(root)) {
        for (const f of readdirSync(join(root, table))) {
          const file = join(root, table, f);
          if (f.includes('.tmp-')) {
            unlinkSync(file);
            continue;
          }
          const state = JSON.parse(readFileSync(file, 'utf8')) as PartitionState;
          if (!state.pending) continue;
          this.apply(state);
          delete state.pending;
          writeAtomic(file, JSON.stringify(state, null, 1));
          rolledForward++;
        }
      }
    }
    rmSync(this.path(STAGING), { recursive: true, force: true });
    return { rolledForward };
  }

  /** Every committed file of a table, as the state lists them. */
  committedFiles(table: string): string[] {
    return this.all()
      .filter((s) => s.table === table)
      .flatMap((s) => s.files);
  }

  isLakeDir(): boolean {
    return !existsSync(this.lake) || statSync(this.lake).isDirectory();
  }
}
