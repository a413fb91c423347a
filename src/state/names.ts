// The names of the files chainlake writes into a lake (data, rejects, raw pages) and of the
// folders beside the tables, made and read here alone. A name says whose rows a file holds, which listing they came from and the file's
// place in its partition's order, so that `rebuild` replays raw pages as they were fetched:
//
//   <partition slug>[.<listing>]-n<seq>-<writer><extension>
//
// <listing>: `w<window start>.c<block the chunk ends before, or head>.f<its floor>` for a chunk
// of a block window, `chunk<start>` for a range of a series fetched at once, `compact` for a
// compaction's output. <seq>: the file's place in the partition, one more than any it holds
// (PartitionState files), so order comes from the state and not from a clock, which differs
// between machines. <writer>: unique to the process and the file, so that two writers of a
// partition (a worker whose lease was taken over, and its successor) never write the same name.
// Names written before this codec (`-<pid>-<milliseconds>-<counter>`) are read too, and come
// first.
import { createHash, randomBytes } from 'node:crypto';

/** Folders beside the tables: rejected rows, raw pages, and the rows a rebuild re-derives. */
export const REJECTS = '_rejects';
export const RAW = '_raw';
export const REBUILD = '_rebuild';

export const PARQUET_EXT = '.parquet';

/** A file name for a partition id: readable, safe, and unique (hash suffix). */
export function slug(partition: string): string {
  // No '=': a folder named k=v reads as a hive partition to DuckDB and Spark.
  const readable = partition.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '_').slice(0, 80);
  return `${readable}-${createHash('sha256').update(partition).digest('hex').slice(0, 10)}`;
}

/**
 * A key of one of `table`'s data files: a Parquet file in its folder, which a partition state also
 * lists beside its rejects and raw pages (in `_rejects/` and `_raw/`); what a table's Iceberg
 * snapshot names and `check` compares.
 */
export function isTableData(table: string, key: string): boolean {
  return key.startsWith(`${table}/`) && key.endsWith(PARQUET_EXT);
}
export const RAW_EXT = '.ndjson.br';
export type Extension = typeof PARQUET_EXT | typeof RAW_EXT;

/** The listing a file's rows came from. */
export type ListingTag =
  | { kind: 'chunk'; window: number; end: number | 'head'; floor: number }
  | { kind: 'range'; start: number }
  | { kind: 'compact' };

/** What a name says before its writer and extension. */
export interface Stem {
  /** The partition's slug (store.ts). */
  partition: string;
  listing?: ListingTag;
  seq: number;
}

/** A name read back. */
export interface ReadName extends Stem {
  ext: Extension;
  /** Place in the partition's order: names of this codec after the older ones, each by its seq. */
  order: [number, number, number];
}

function listingText(t: ListingTag): string {
  if (t.kind === 'chunk') return `w${t.window}.c${t.end}.f${t.floor}`;
  if (t.kind === 'range') return `chunk${t.start}`;
  return 'compact';
}

/** A chunk's tag from its window's start and its range [from, to): `from` is its floor. */
export function chunkTag(windowStart: number, range: { from: number; to: number }): ListingTag {
  return { kind: 'chunk', window: windowStart, end: Number.isFinite(range.to) ? range.to : 'head', floor: range.from };
}

/** The name's beginning, up to its writer: `<partition>[.<listing>]-n<seq>`. */
export function stemText(s: Stem): string {
  return `${s.partition}${s.listing ? `.${listingText(s.listing)}` : ''}-n${s.seq}`;
}

/** The stem of file number `seq` of a partition (its id, as the state names it). */
export function partitionStem(partition: string, seq: number, listing?: ListingTag): string {
  return stemText({ partition: slug(partition), ...(listing ? { listing } : {}), seq });
}

/** The stem of the next file of a partition that holds `files`. */
export function nextStem(partition: string, files: Iterable<string>, listing?: ListingTag): string {
  return partitionStem(partition, nextSeq(files), listing);
}

/** A whole name: the stem, a writer's mark (`writerMark()`) and the extension. */
export function fileName(stem: string, writer: string, ext: Extension): string {
  return `${stem}-${writer}${ext}`;
}

const PROCESS = `${process.pid.toString(36)}${randomBytes(3).toString('hex')}`;
let counter = 0;

/** A mark no other file of this process, nor (but by a chance of one in 16 million) of another, carries. */
export function writerMark(): string {
  return `${PROCESS}${(counter++).toString(36)}`;
}

const SLUG = String.raw`(.*-[0-9a-f]{10})`;
const LISTING = String.raw`(?:\.(?:w(\d+)\.c(\d+|head)\.f(\d+)|chunk(\d+)|(compact)))?`;
const EXT = String.raw`(\.parquet|\.ndjson\.br)`;
const NAME = new RegExp(String.raw`^${SLUG}${LISTING}-n(\d+)-[0-9a-z]+${EXT}$`);
const LEGACY = new RegExp(String.raw`^${SLUG}${LISTING}(-compact)?-\d+-(\d{13})-(\d+)${EXT}$`);

/** A file's name (a path's last part is read) as this codec made it; undefined for any other. */
export function readName(path: string): ReadName | undefined {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const m = NAME.exec(name);
  if (m) {
    const seq = Number(m[7]);
    return { partition: m[1]!, listing: listingOf(m), seq, ext: m[8] as Extension, order: [1, seq, 0] };
  }
  const l = LEGACY.exec(name);
  if (!l) return undefined;
  const listing = listingOf(l) ?? (l[7] ? ({ kind: 'compact' } as const) : undefined);
  return { partition: l[1]!, listing, seq: 0, ext: l[10] as Extension, order: [0, Number(l[8]), Number(l[9])] };
}

function listingOf(m: RegExpExecArray): ListingTag | undefined {
  if (m[2] !== undefined) return { kind: 'chunk', window: Number(m[2]), end: m[3] === 'head' ? 'head' : Number(m[3]), floor: Number(m[4]) };
  if (m[5] !== undefined) return { kind: 'range', start: Number(m[5]) };
  if (m[6] !== undefined) return { kind: 'compact' };
  return undefined;
}

/** Compares two names read by `readName` by their place in the partition's order (names of no codec first). */
export function compareNames(a: ReadName | undefined, b: ReadName | undefined): number {
  const x = a?.order ?? [-1, 0, 0];
  const y = b?.order ?? [-1, 0, 0];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/** The seq of a partition's next file: one more than any of `files`. */
export function nextSeq(files: Iterable<string>): number {
  let n = 0;
  for (const f of files) {
    const r = readName(f);
    if (r && r.order[0] === 1) n = Math.max(n, r.seq + 1);
  }
  return n;
}
