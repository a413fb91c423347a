// A stream is declared once, as data: where it is served, how it is paged and partitioned, how it
// refreshes, and its columns. Every stage (config, extract, transform, load, docs) reads these.
import type { ClientPort, Page, PaginateOptions, RequestContext } from './request.js';
import type { Exactness } from '../json.js';

/** Column types as landed in Parquet. `amount` lands as `<name>` DECIMAL(38,0) plus `<name>_raw` VARCHAR. */
export type ColumnType =
  | 'varchar'
  | 'evm_address' // varchar, lowercased
  | 'bigint' // from a decimal string or an integer number
  | 'ubigint' // the same, 0 to 2^64-1: a uint64 that may use its top bit (a locktime)
  | 'integer'
  | 'double'
  | 'boolean'
  | 'timestamptz' // from Unix seconds
  | 'amount'
  | 'varchar[]'
  | 'integer[]'
  | 'json';

export interface Column {
  name: string;
  type: ColumnType;
  /** Dot path into the item; with several paths the first present one is used. */
  from?: string | string[];
  /**
   * An amount's decimals: a number (18 for wei, 9 for nAVAX) or the column that holds them (a
   * token's, an asset's denomination). chainlake's SQL then gives `<name>_units` beside it: the
   * amount in whole units, a DOUBLE (NULL where the decimals are unknown).
   */
  units?: number | string;
  /** A value of the partition (chain_id, network, metric, ...) instead of the item. */
  partition?: string;
  /** Computed from the item where a path is not enough (which transfer form, which reward field). */
  derive?: (item: Record<string, unknown>, ctx: DeriveContext) => unknown;
  /** A required column that is missing or of the wrong type sends the row to _rejects. */
  required?: boolean;
  /**
   * Set from the run's clock, not from the service (when a snapshot was taken): it differs between
   * two runs of the same data, so a comparison of two lakes leaves it out.
   */
  stamp?: true;
  doc: string;
}

/** What a derive function may ask of the transform: state carried across pages of a partition. */
export interface DeriveContext {
  /** How many times `key` was seen before within `group` (the count restarts when the group changes). */
  seen(group: string, key: string): number;
}

export type OptionKind =
  | 'string'
  | 'int'
  | 'number' // a JSON number, fractions allowed (a percentage)
  | 'evm_chain_id'
  | 'metrics_chain_id[]'
  | 'network'
  | 'evm_address[]'
  | 'node_id[]'
  | 'primary_address[]'
  | 'metric[]'
  | 'boolean'
  | 'enum'
  | 'string[]'
  | 'cb58_id[]' // 32-byte ids in cb58: subnets, assets
  | 'blockchain_id' // a cb58 blockchain id or the alias P, X or C
  | 'blockchain_id[]'
  | 'x_address[]' // X- address of any network, or of the entry's `network` when it has one
  | 'evm_block' // a block as an EVM node takes it: hex number, hash or tag (latest, ...)
  | 'unix_seconds'; // a time within UNIX_SECONDS: whole Unix seconds, a date or a UTC date-time, kept as Unix seconds

/**
 * The times a `unix_seconds` key takes: from 2009-01-01, before any chain here, to 2100-01-01.
 * Outside them a value is in other units (milliseconds read as seconds are in the year 57804) or
 * a slip, and would plan a window with nothing in it.
 */
export const UNIX_SECONDS = {
  min: 1_230_768_000,
  max: 4_102_444_800,
  doc: 'a date (2025-10-01, UTC), a UTC date-time (2025-10-01T12:00:00Z) or Unix seconds, from 2009-01-01 (1230768000) to 2100-01-01 (4102444800)',
} as const;

export interface OptionSpec {
  kind: OptionKind;
  required?: boolean;
  values?: readonly string[]; // for enum
  min?: number;
  doc: string;
}

/** A validated stream entry of a pipeline: its table plus option values. */
export interface StreamConfig {
  table: string;
  pageSize?: number;
  [option: string]: unknown;
}

export interface Partition {
  /** Stable and readable: the state file and the names of data files derive from it. */
  id: string;
  path: Record<string, string>;
  query: Record<string, string>;
  /** Values for partition columns. */
  values: Record<string, string>;
}

export type Refresh =
  /** Append pages from the partition's high-water block on; resume from the stored page token. */
  | 'append'
  /** Fetch the partition, then merge its rows into the committed ones by key (newest wins). */
  | 'merge'
  /**
   * The listing is the current state (pending rewards): a complete fetch replaces what was
   * committed, so a row the service stops listing is gone. Otherwise as `merge`.
   */
  | 'replace';

/** What a custom extractor gets: the partition's request and the default paginator to reuse. */
export interface ExtractContext extends RequestContext {
  /** `post` for JSON-RPC; `baseUrl` is what node snapshots are stamped with. */
  client: ClientPort;
  /** The endpoint with the partition's path values filled in. */
  path: string;
  query: Record<string, string>;
  partition: Partition;
  /** The stream entry of the pipeline. */
  config: StreamConfig;
  /** Where a checkpoint says to continue (whatever `next` this extractor yielded before). */
  startToken?: string;
  /** Compute units of one request to `endpoint`, and the partition's share key of the budget. */
  weight: number;
  flow: string;
  /** The default: GET `path` paged by nextPageToken, items under the declaration's `items`. */
  paginate(o?: Partial<PaginateOptions>): AsyncGenerator<Page>;
}

export type Service = 'data' | 'metrics' | 'node';

/** A block and its time (Unix seconds). */
export interface BlockTime {
  number: number;
  timestamp: number;
}

/**
 * Time keys that bound a block-ranged window instead of its block keys: each time is resolved to
 * the first block at or after it, through the chain's blocks (pipeline/block_times.ts).
 */
export interface BlockTimes {
  startOption: string;
  endOption: string;
  /** The chain a partition's blocks are of: resolutions are remembered per chain. */
  chain: (p: Partition) => string;
  /** The chain's newest block, as the window's head (asked once a run). */
  head: (x: ExtractContext) => Promise<BlockTime>;
  /** Block `n`: its number as the service answers it, and its time. */
  block: (x: ExtractContext, n: number) => Promise<BlockTime>;
}

export interface StreamDecl {
  table: string;
  doc: string;
  service: Service;
  endpoint: string;
  /** Key of the array of items in a page. */
  items: string;
  /**
   * How pages are fetched when it is not the default paginator (one GET per id, a snapshot pinned
   * to a block, a JSON-RPC call). `next` of a yielded page is what a checkpoint stores to resume.
   */
  extract?: (x: ExtractContext) => AsyncGenerator<Page>;
  /**
   * One row per element of the list at this path of each item (e.g. a subnet's blockchains); the
   * element's fields are read as usual, the item's under `_parent.`, a scalar element as `_value`.
   * Several paths: the elements of each list in turn (lists of one kind, told apart by their fields:
   * a transaction's transfers of each token standard, a C-Chain import's consumed UTXOs and an
   * export's emitted ones).
   */
  explode?: string | readonly string[];
  /** JSON-RPC methods the extractor calls at `endpoint` (node streams; the docs list them). */
  methods?: string[];
  /** Compute units per request (docs/services.md, Rate limits). */
  weight: number;
  /**
   * The endpoint reports on the API key a request carries (its usage, its logs): a pipeline must
   * give the data source a key (`sources.data.apiKey`).
   */
  needsApiKey?: true;
  /** Page sizes chainlake sends; `note` says why they differ from the service's bounds, if they do. */
  pageSize: { min: number; max: number; default: number; note?: string };
  options: Record<string, OptionSpec>;
  /** Rules across options; returns problems as [option, message]. */
  check?: (s: StreamConfig) => Array<[string, string]>;
  partitions: (s: StreamConfig) => Partition[];
  refresh: Refresh;
  /** With `merge` or `replace`: into the partition's rows, or into the whole table's (rows of one
   * key may come from several queries). */
  mergeScope?: 'partition' | 'table';
  /** With `merge`: a time series fetched from its newest committed point on (refetched, as the
   * service may still change it). `start` is the query parameter, when the endpoint has one;
   * without it, paging stops at the first page older than that point (the listing is newest first). */
  timeCursor?: {
    column: string;
    start?: string;
    startOption?: string;
    /**
     * The pipeline key that ends the time range (Unix seconds, exclusive): a row at or after it is
     * not committed, however the service reads the parameter.
     */
    endOption?: string;
    /**
     * The query parameter ending a range, and the seconds between two points of a partition's
     * series (its query): with both, a series with a known start is fetched as ranges of a page
     * each, at once (at most the stream's `chunks`).
     */
    end?: string;
    step?: (query: Record<string, string>) => number;
    /**
     * Without a step (items at no regular interval: transactions), with `end`: a time range longer
     * than this many seconds (a backfill, or a partition not fetched for that long) whose listing
     * holds more than a page is fetched as ranges of equal length at once, as many as the stream's
     * `chunks` allows and none shorter (its first page is asked first, over the whole range).
     */
    span?: number;
    /**
     * A listing newest first whose items still change until they settle (a message pending until
     * delivered): whether an item has settled. The next run then pages back to the oldest item
     * not settled yet, when that is older than the newest point, so that every such item is
     * refetched until it settles.
     */
    settled?: (item: Record<string, unknown>) => boolean;
  };
  /**
   * With `append`: the block column and the query parameters bounding a window. `perBlock`: the
   * window is fetched a block a request, after one request that pins the chain's head.
   */
  blockCursor?: {
    column: string;
    start: string;
    end: string;
    startOption: string;
    endOption: string;
    /** The column of a row's block time: a row whose time lies in the future is not committed. */
    time?: string;
    perBlock?: boolean;
    /**
     * The chain's newest block. With it a window without an endBlock ends at the head found when
     * it begins, and is fetched as block ranges (chunks) at once, each its own listing, as many as
     * the stream's `chunks` option allows. The listing must be newest first for a range to be split
     * while under way.
     */
    head?: (x: ExtractContext) => Promise<number>;
    /** Time keys resolved to blocks, besides the block keys (`startOption`, `endOption`). */
    times?: BlockTimes;
  };
  key: string[];
  keyDoc?: string;
  /** Top-level fields read by derive functions only (so they do not count as drift). */
  knownFields?: string[];
  /**
   * A hive-style folder from a partition value (`chain=43114/`). A partition value, not a row
   * value: each commit then writes one file, where a folder per month would split every batch
   * into a file per month it spans. The folder key differs from the column (`chain` for
   * `chain_id`), so engines that infer types from folder names never clash with the file's column.
   */
  folder?: { key: string; partition: string };
  /**
   * Replay may give this stream's transform pages as UTF-8 bytes in one-byte strings (about twice
   * as fast to parse; src/bytes.ts). True only if its derive functions copy free text and
   * compare ASCII only: no case mapping, slicing or length of text that may not be ASCII.
   */
  bytesSafe?: boolean;
  /**
   * Its answers hold JSON numbers a double may change: they are parsed keeping each such number's
   * text (src/json.ts), here and when raw pages are replayed. `true`: any number (a node's uint64
   * fields); a list of keys: the numbers under them (a price's `value`).
   */
  exactNumbers?: Exactness;
  columns: Column[];
}

/** Chunks of one window fetched at once, at most, unless a stream's `chunks` option says otherwise. */
export const DEFAULT_CHUNKS = 16;

/** The columns a run stamps with its own clock (Column.stamp). */
export function stampColumns(decl: StreamDecl): string[] {
  return decl.columns.filter((c) => c.stamp).map((c) => c.name);
}

/** The hive folder of a partition's files (`chain=43114`), or '' for tables without one. */
export function folderOf(decl: StreamDecl, values: Record<string, string>): string {
  if (!decl.folder) return '';
  const v = values[decl.folder.partition] ?? '';
  return `${decl.folder.key}=${v.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}
