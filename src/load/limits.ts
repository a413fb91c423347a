// The limits of every DuckDB chainlake opens: memory, threads and where it spills. DuckDB's own
// default is 80% of the machine's memory and a `.tmp` folder in whatever folder the command runs
// from; a query over a big lake (a window over every transfer) would take gigabytes and, on a
// small machine, fail instead of spilling. Users set them for every command and the library:
//   CHAINLAKE_DUCKDB_MEMORY   a size (`2GB`, `512MiB`): DuckDB's memory_limit
//   CHAINLAKE_DUCKDB_THREADS  a whole number of threads (default: one a core)
//   CHAINLAKE_DUCKDB_TEMP     the folder DuckDB spills to (each process in a folder of its own there)
// The library takes the same as openLake's options, which win over the environment.
import { rmSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../errors.js';

export interface EngineOptions {
  /** DuckDB's memory_limit, as DuckDB reads it: `2GB`, `512MiB`. */
  memoryLimit?: string;
  /** DuckDB's threads. */
  threads?: number;
  /** The folder to spill to; each process spills into a folder of its own in it. */
  tempDirectory?: string;
}

export const ENGINE_ENV = { memoryLimit: 'CHAINLAKE_DUCKDB_MEMORY', threads: 'CHAINLAKE_DUCKDB_THREADS', tempDirectory: 'CHAINLAKE_DUCKDB_TEMP' } as const;

const SIZE = /^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$/i;

/** Checks a size and gives it in DuckDB's spelling; `where` names what gave it. */
export function checkSize(where: string, v: string): string {
  const m = SIZE.exec(v);
  if (!m || Number(m[1]) <= 0) throw new UsageError(`${where}: ${JSON.stringify(v)} is not a size; give a number and a unit, such as 2GB or 512MiB`);
  return `${m[1]}${m[2]!.toUpperCase().replace('IB', 'iB')}`;
}

function checkThreads(where: string, v: unknown): number {
  const n = typeof v === 'number' ? v : /^\s*\d+\s*$/.test(String(v)) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > 1024) throw new UsageError(`${where}: ${JSON.stringify(v)} is not a number of threads (a whole number from 1 to 1024)`);
  return n;
}

/** The options `given` checked, over those of the environment (each error names where a value came from). */
export function engineOptions(given: EngineOptions = {}, env: NodeJS.ProcessEnv = process.env): EngineOptions {
  const out: EngineOptions = {};
  const memory = given.memoryLimit ?? env[ENGINE_ENV.memoryLimit];
  if (memory !== undefined && memory !== '') out.memoryLimit = checkSize(given.memoryLimit !== undefined ? 'memoryLimit' : ENGINE_ENV.memoryLimit, memory);
  const threads = given.threads ?? env[ENGINE_ENV.threads];
  if (threads !== undefined && threads !== '') out.threads = checkThreads(given.threads !== undefined ? 'threads' : ENGINE_ENV.threads, threads);
  const temp = given.tempDirectory ?? env[ENGINE_ENV.tempDirectory];
  if (temp !== undefined && temp !== '') out.tempDirectory = temp;
  return out;
}

/**
 * A query's memory when none is set: a quarter of the machine's, between 512 MiB and 2 GiB, so
 * that a laptop running other work keeps room, and what does not fit spills.
 */
export function defaultQueryMemory(total = totalmem()): string {
  const mib = Math.min(2048, Math.max(512, Math.floor(total / 4 / 2 ** 20)));
  return `${mib}MiB`;
}

/**
 * The memory limit of DuckDB where it writes (a run's and a compaction's writer, the warehouse
 * file) unless the user sets one: 128 MB ran out merging a million-row partition, 512 MB did not;
 * a command that writes keeps its peak well under a query's.
 */
export const WRITER_MEMORY = '512MB';

/** This process's spill folders, removed when it exits (DuckDB removes its files, not the folder it was given). */
const spills = new Set<string>();
let cleanup = false;

/** A folder of this process's own under `parent`, for DuckDB to spill to. */
export function spillFolder(parent = tmpdir()): string {
  const dir = join(parent, `chainlake-duckdb-${process.pid}`);
  if (!spills.has(dir)) {
    spills.add(dir);
    if (!cleanup) {
      cleanup = true;
      process.once('exit', () => {
        for (const d of spills) rmSync(d, { recursive: true, force: true });
      });
    }
  }
  return dir;
}

/**
 * DuckDB's settings for an instance that reads the lake (queries, the library, check, export):
 * the user's limits, else a laptop's.
 */
export function querySettings(o: EngineOptions): Record<string, string> {
  return {
    memory_limit: o.memoryLimit ?? defaultQueryMemory(),
    temp_directory: spillFolder(o.tempDirectory),
    ...(o.threads ? { threads: String(o.threads) } : {}),
  };
}
