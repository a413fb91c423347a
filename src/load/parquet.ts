// Typed batches -> zstd Parquet files in a staging folder, through DuckDB: the batch is appended
// column-wise into a temporary table, then one COPY casts it (DECIMAL(38,0), BIGINT, TIMESTAMPTZ,
// JSON) and writes it. The state stage moves the files into the lake when it commits.
import { fileName, PARQUET_EXT, writerMark } from '../state/names.js';
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import PQueue from 'p-queue';
import type * as DuckDB from '@duckdb/node-api';
import type { DuckDBConnection, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { duckdb } from './duckdb.js';
import type { StreamDecl } from '../decl/stream.js';
import { makeDir } from './spool.js';
import { engineOptions, spillFolder, WRITER_MEMORY } from './limits.js';
import { MERGED_FROM, mergedFromValue, sqlString, type MergedPart } from './paths.js';
import type { Batch, Reject } from '../transform/rows.js';
import { stagedColumns } from '../transform/columns.js';
import type { StagedColumn } from '../transform/staging.js';

const { BOOLEAN, DOUBLE, DuckDBDataChunk, DuckDBInstance, INTEGER, VARCHAR } = duckdb;

const DUCK_TYPES: Record<StagedColumn['type'], DuckDBType> = { VARCHAR, INTEGER, DOUBLE, BOOLEAN };

/** DuckDB's vector size: a data chunk holds at most this many rows. */
const CHUNK = 2048;

/**
 * COPY options of every Parquet file chainlake writes. zstd level 1 rather than DuckDB's default 3:
 * on transfer batches the COPY runs ~25% faster and the files come out no bigger (5.6 against
 * 6.0 MB for 100,000 rows here).
 */
export const PARQUET = 'FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1';

export interface WrittenFile {
  /** Absolute path in staging. */
  staged: string;
  /** Path relative to the staging folder, hive folder included (`chain=43114/x.parquet`). */
  rel: string;
}

// The instance being made, not only the made one: the writers a run opens at once (one per
// partition under way) all ask for it before the first is made, and would each make their own.
let instance: Promise<DuckDB.DuckDBInstance> | undefined;

/**
 * One in-memory DuckDB per process; each writer has its own connection. Its memory is bounded and
 * what does not fit spills to `spillDir` (under the lake's _staging, cleared at the next start),
 * never to a `.tmp` in whatever folder the command runs from (WRITER_MEMORY: a merge's window
 * cannot spill).
 */
export async function duck(spillDir?: string): Promise<DuckDB.DuckDBInstance> {
  // The user's limits (load/limits.ts) win; a spill folder they name is this process's own in it.
  const user = engineOptions();
  // No external file cache: it keeps what read_parquet read (merges, compaction) up to the memory
  // limit, for re-reads this writer never makes; compacting 5M rows peaked at 310 MB with it, 244 without.
  instance ??= DuckDBInstance.create(':memory:', {
    threads: String(user.threads ?? 2),
    memory_limit: user.memoryLimit ?? WRITER_MEMORY,
    preserve_insertion_order: 'false',
    enable_external_file_cache: 'false',
  }).catch((err: unknown) => {
    // A setting DuckDB refused is said to each caller, not kept as the process's answer.
    instance = undefined;
    throw err;
  });
  const made = await instance;
  const spill = user.tempDirectory ? spillFolder(user.tempDirectory) : spillDir;
  if (spill) {
    const c = await made.connect();
    await c.run(`SET temp_directory = ${sqlString(spill)}`);
    c.closeSync();
  }
  return made;
}

/**
 * One COPY at a time across every writer of the process. Each holds its own buffers (about
 * 30 MB for a 10,000-row batch of transfers) and uses all of DuckDB's threads anyway: eight at once
 * cost memory and gained no speed, and two instead of one put the 5M-row run's peak at 240-249 MB
 * against 220-234 (the run goes on transforming the other partitions meanwhile).
 */
const copies = new PQueue({ concurrency: 1 });

/** Runs `f` (a read of the process's DuckDB) between two COPYs, not beside one: it then takes milliseconds, not the COPY's time. */
export function betweenCopies<T>(f: () => Promise<T>): Promise<T> {
  return copies.add(f) as Promise<T>;
}

/** Rows in a row group of a compacted file (DuckDB's default is 122,880). */
const COMPACT_ROW_GROUP = 61_440;

/**
 * COPY options that give each row group of a string column a Parquet bloom filter, hashes
 * (tx_hash, block_hash) included, for a file of `rows` rows. DuckDB writes a bloom only for a
 * dictionary-encoded column, and under its default limits a column of distinct values stays
 * plain; a dictionary big enough for a row group of distinct hashes (up to COMPACT_ROW_GROUP
 * entries of about HASH_ENTRY bytes) lets an equality on a hash skip the row groups that cannot
 * hold it, in DuckDB and in any engine that reads Parquet blooms. The limits follow the file's rows:
 * DuckDB's buffers follow the limits, and at their largest they cost a file of a few hundred rows
 * more than its rows. A big file takes about twice the CPU to write and a tenth more room
 * (docs/benchmarks.md); a batch of a run leaves them out, a merge (a run's or `compact`'s) asks for them.
 */
function hashBlooms(rows: number): string {
  const entries = Math.min(Math.max(rows, 1), COMPACT_ROW_GROUP) + 1;
  return `DICTIONARY_SIZE_LIMIT ${entries}, STRING_DICTIONARY_PAGE_SIZE_LIMIT ${entries * HASH_ENTRY}`;
}

/** Bytes a dictionary entry of a hash takes: 66 characters of hex, its length, and room. */
const HASH_ENTRY = 80;

/** Per column name of a table, its FIELD_IDS entry (the table's Iceberg field ids: iceberg/schema.ts). */
export type FieldIds = (decl: StreamDecl) => Promise<Map<string, string>>;

export class ParquetWriter {
  private constructor(
    private readonly conn: DuckDBConnection,
    private readonly ids?: FieldIds,
  ) {}

  /** `ids`: the field ids each table's files carry, so that readers match columns by id, not name. */
  static async open(spillDir?: string, ids?: FieldIds): Promise<ParquetWriter> {
    return new ParquetWriter(await (await duck(spillDir)).connect(), ids);
  }

  /** The COPY option giving `columns` (those a file will hold) their field ids, or '' without ids. */
  private async fieldIds(decl: StreamDecl | undefined, columns: string[]): Promise<string> {
    if (!decl || !this.ids) return '';
    const ids = await this.ids(decl);
    const entries = columns.filter((c) => ids.has(c)).map((c) => `"${c.replace(/"/g, '""')}": ${ids.get(c)}`);
    return entries.length ? `, FIELD_IDS {${entries.join(', ')}}` : '';
  }

  /** The names of the columns a query gives. */
  private async columnsOf(sql: string): Promise<string[]> {
    const r = await this.conn.runAndReadAll(`DESCRIBE ${sql}`);
    return r.getRows().map((row) => String(row[0]));
  }

  close(): void {
    this.conn.closeSync();
  }

  /**
   * Runs `f` with the process's DuckDB on `threads` threads, unless the user set its threads
   * (load/limits.ts), and puts its setting back after. The setting is the instance's: it changes
   * between two COPYs, not under one.
   */
  async withThreads<T>(threads: number, f: () => Promise<T>): Promise<T> {
    if (engineOptions().threads !== undefined) return f();
    const before = await copies.add(async () => {
      const r = await this.conn.runAndReadAll(`SELECT current_setting('threads')`);
      await this.conn.run(`SET threads = ${threads}`);
      return Number(r.getRows()[0]![0]);
    });
    try {
      return await f();
    } finally {
      await copies.add(() => this.conn.run(`SET threads = ${before}`));
    }
  }

  private async copy(sql: string): Promise<void> {
    await copies.add(() => this.conn.run(sql));
  }

  private async stage(table: string, cols: StagedColumn[], columns: unknown[][], rows: number): Promise<void> {
    await this.conn.run(`CREATE OR REPLACE TEMP TABLE "${table}" (${cols.map((c) => `"${c.name}" ${c.type}`).join(', ')})`);
    const appender = await this.conn.createAppender(table);
    const types = cols.map((c) => DUCK_TYPES[c.type]);
    for (let start = 0; start < rows; start += CHUNK) {
      const n = Math.min(CHUNK, rows - start);
      const chunk = DuckDBDataChunk.create(types, n);
      chunk.setColumns(columns.map((col) => col.slice(start, start + n) as DuckDBValue[]));
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
    appender.closeSync();
  }

  /**
   * Writes the staged rows in `rowsFile` (lines, see transform/rows.ts) as one Parquet file under
   * `dir` (in `sub`, a hive folder such as `chain=43114`, when given). DuckDB reads the lines with
   * its CSV reader and casts them on the way to Parquet.
   */
  async write(decl: StreamDecl, rowsFile: string, rows: number, dir: string, stem: string, sub = ''): Promise<WrittenFile[]> {
    if (rows === 0) return [];
    const cols = stagedColumns(decl);
    const columns = cols.map((c) => `'${c.name}': '${c.type}'`).join(', ');
    const read = `read_csv(${sqlString(rowsFile)}, delim = chr(31), quote = '', escape = '', header = false, auto_detect = false, nullstr = chr(1), new_line = '\\n', columns = {${columns}})`;
    const file = this.newFile(dir, stem, sub);
    const ids = await this.fieldIds(decl, cols.map((c) => c.name));
    await this.copy(`COPY (SELECT ${cols.map((c) => c.select).join(', ')} FROM ${read}) TO ${sqlString(file)} (${PARQUET}${ids})`);
    return [{ staged: file, rel: relative(dir, file) }];
  }

  /** `write` for a batch whose lines are in memory (tests, small batches). */
  async writeBatch(decl: StreamDecl, batch: Batch, dir: string, stem: string, sub = ''): Promise<WrittenFile[]> {
    if (batch.rows === 0) return [];
    const text = `${dir}.rows`;
    mkdirSync(dirname(text), { recursive: true });
    writeFileSync(text, batch.lines.join('\n') + '\n');
    try {
      return await this.write(decl, text, batch.rows, dir, stem, sub);
    } finally {
      unlinkSync(text);
    }
  }

  /**
   * Merges fresh rows into committed ones by the declaration's key, under `dir`; the caller
   * commits the result in place of `old`. Among fresh rows of one key the one from the latest
   * file in `fresh` wins (files are in fetch order); a fresh row wins over an old one.
   */
  async merge(decl: StreamDecl, fresh: string[], old: string[], dir: string, stem: string, sub = ''): Promise<WrittenFile[]> {
    if (fresh.length === 0) return [];
    const list = (files: string[]) => `[${files.map(sqlString).join(', ')}]`;
    const key = decl.key.map((k) => `"${k}"`);
    const same = decl.key.map((k) => `f."${k}" IS NOT DISTINCT FROM o."${k}"`).join(' AND ');
    const freshSql = `SELECT * EXCLUDE (filename, file_row_number) FROM read_parquet(${list(fresh)}, union_by_name = true, hive_partitioning = false, filename = true, file_row_number = true)
      QUALIFY row_number() OVER (PARTITION BY ${key.join(', ')} ORDER BY list_position(${list(fresh)}, filename) DESC, file_row_number DESC) = 1`;
    const body = old.length
      ? `WITH f AS (${freshSql}) SELECT * FROM f UNION ALL BY NAME SELECT * FROM read_parquet(${list(old)}, union_by_name = true, hive_partitioning = false) o WHERE NOT EXISTS (SELECT 1 FROM f WHERE ${same})`
      : freshSql;
    const file = this.newFile(dir, stem, sub);
    const select = `SELECT * FROM (${body}) ORDER BY ${key.join(', ')}`;
    // Fresh files hold every column of the declaration (write() lands them all), so the merge does.
    const ids = await this.fieldIds(decl, stagedColumns(decl).map((c) => c.name));
    await this.copy(`COPY (${select}) TO ${sqlString(file)} (${PARQUET}${ids})`);
    return [{ staged: file, rel: relative(dir, file) }];
  }

  /**
   * Rewrites Parquet files as one under `dir` (compaction), their rows in the order of `files`
   * and, within a file, as they are: given files in block order, the row groups come out in block
   * order, so a reader of a block or time range skips the others. Sorting wide rows instead needs
   * the whole group in memory (an ORDER BY ran out at 192 MB with spilling on and took 645 MB at
   * 512). DuckDB cuts row groups by bytes only when the order may change: here by rows, half its
   * default, which keeps a group's memory down and its block range narrow.
   * `keep`: a condition on a row that keeps it (a reset takes back the rows it does not hold).
   * `bloomRows`: the rows the new file holds, for a bloom filter of each row group's string
   * columns (hashBlooms); none without it. `from`: the lake names of `files` and their rows, said
   * in the new file's metadata (MERGED_FROM) when it holds their rows as they are (no `keep`).
   */
  async rewrite(files: string[], dir: string, stem: string, sub = '', decl?: StreamDecl, o: { keep?: string; bloomRows?: number; from?: MergedPart[] } = {}): Promise<WrittenFile[]> {
    const { keep, bloomRows } = o;
    const from = o.from && !keep ? `, KV_METADATA {${sqlString(MERGED_FROM)}: ${sqlString(mergedFromValue(o.from))}}` : '';
    const file = this.newFile(dir, stem, sub);
    // By name: files written before a column was added lack it (NULL there), as the views read them.
    const read = `read_parquet([${files.map(sqlString).join(', ')}], union_by_name = true, hive_partitioning = false)`;
    const ids = this.ids ? await this.fieldIds(decl, await this.columnsOf(`SELECT * FROM ${read}`)) : '';
    // The setting is the instance's, not the connection's: set and put back inside the one COPY at a time.
    await copies.add(async () => {
      await this.conn.run('SET preserve_insertion_order = true');
      try {
        await this.conn.run(`COPY (SELECT * FROM ${read}${keep ? ` WHERE ${keep}` : ''}) TO ${sqlString(file)} (${PARQUET}, ROW_GROUP_SIZE ${COMPACT_ROW_GROUP}${bloomRows ? `, ${hashBlooms(bloomRows)}` : ''}${from}${ids})`);
      } finally {
        await this.conn.run('SET preserve_insertion_order = false');
      }
    });
    return [{ staged: file, rel: relative(dir, file) }];
  }

  /** A new file's path under `dir` (in `sub`), its folder made; `stem` from state/names.ts. */
  private newFile(dir: string, stem: string, sub: string): string {
    makeDir(join(dir, sub));
    return join(dir, sub, fileName(stem, writerMark(), PARQUET_EXT));
  }

  /**
   * Each file's rows and, given a column, its least value there as sortable text (numbers padded,
   * timestamps as ISO text): what compaction orders files by. From the footers alone for rows; the
   * least value reads the one column.
   */
  async fileStats(files: string[], column?: string): Promise<Array<{ rows: number; low?: string }>> {
    if (files.length === 0) return [];
    const list = `[${files.map(sqlString).join(', ')}]`;
    const r = await this.conn.runAndReadAll(`SELECT file_name, num_rows::BIGINT AS n FROM parquet_file_metadata(${list})`);
    const rows = new Map(r.getRows().map(([f, n]) => [String(f), Number(n)]));
    const lows = new Map<string, string>();
    if (column) {
      const sortable = `CASE WHEN typeof(min("${column}")) LIKE 'TIMESTAMP%' THEN strftime(min("${column}")::TIMESTAMP, '%Y-%m-%dT%H:%M:%S.%f') ELSE lpad(min("${column}")::VARCHAR, 20, '0') END`;
      const l = await this.conn.runAndReadAll(`SELECT filename, ${sortable} FROM read_parquet(${list}, filename = true, union_by_name = true, hive_partitioning = false) GROUP BY filename`);
      for (const [f, low] of l.getRows()) if (low !== null) lows.set(String(f), String(low));
    }
    return files.map((f) => ({ rows: rows.get(f)!, low: lows.get(f) }));
  }

  /** Rows in a set of Parquet files. */
  async countRowsOf(files: string[]): Promise<number> {
    if (files.length === 0) return 0;
    const r = await this.conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM read_parquet([${files.map(sqlString).join(', ')}])`);
    return Number(r.getRows()[0]![0]);
  }

  /** Rejected rows: table, partition, reason and the raw JSON as received. */
  async writeRejects(table: string, partition: string, runId: string, rejects: Reject[], dir: string, stem: string): Promise<WrittenFile[]> {
    if (rejects.length === 0) return [];
    const cols: StagedColumn[] = ['table_name', 'partition_id', 'run_id', 'reason', 'raw_json'].map((name) => ({ name, type: 'VARCHAR', select: `"${name}"` }));
    const n = rejects.length;
    await this.stage('stage_rejects', cols, [Array(n).fill(table), Array(n).fill(partition), Array(n).fill(runId), rejects.map((r) => r.reason), rejects.map((r) => r.raw)], n);
    const file = this.newFile(dir, stem, '');
    await this.conn.run(
      `COPY (SELECT table_name, partition_id, run_id, reason, raw_json, now() AS rejected_at FROM stage_rejects) TO ${sqlString(file)} (${PARQUET})`,
    );
    await this.conn.run('DROP TABLE stage_rejects');
    return [{ staged: file, rel: relative(dir, file) }];
  }
}
