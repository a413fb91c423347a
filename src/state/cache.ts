// Local copies of a lake on object storage. DuckDB cannot read s3:// here (its httpfs extension is
// downloaded at run time, and these machines reach no such host), so every command that reads a
// lake reads a local folder: for an s3:// lake, a copy of its committed files, which never change
// once committed (keyed by key and ETag, so only new files travel). A writer keeps its own copy
// (its states, its staging, the committed files a merge or a compaction reads) in a work folder.
//   <cache>/<hash of endpoint and URL>/read/<name>   what readers see (readableLake)
//   <cache>/<hash of endpoint and URL>/work          the writer's local side (StateStore)
// The cache is CHAINLAKE_CACHE, else $XDG_CACHE_HOME/chainlake, else ~/.cache/chainlake; its
// bound is CHAINLAKE_CACHE_MB (default 10240).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import PQueue from 'p-queue';
import { RunError, UsageError } from '../errors.js';
import { LakeLock } from './lock.js';
import { isTableFolder } from './block_times.js';
import { walkFiles, writeAtomic, type ObjectInfo, type ObjectStore } from './objects.js';
import { S3Objects } from './s3.js';
import { isObjectUrl, parseS3Url } from './location.js';

/** Folders of a lake's local copy that are not objects of the store. */
const LOCAL_ONLY = new Set(['_staging', '_lock', '.objects.json', '.used']);

export function cacheRoot(): string {
  return process.env.CHAINLAKE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'chainlake');
}

/** The cache's bound in bytes (CHAINLAKE_CACHE_MB). */
export function cacheBound(): number {
  const v = process.env.CHAINLAKE_CACHE_MB;
  if (v === undefined || v === '') return 10240 * 1024 * 1024;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`CHAINLAKE_CACHE_MB=${JSON.stringify(v)}: must be a whole number of megabytes >= 1`);
  return Number(v) * 1024 * 1024;
}

/** The cache folder of one lake: the same bucket and prefix at two endpoints are two lakes. */
export function lakeCacheDir(url: string): string {
  const endpoint = process.env.AWS_ENDPOINT_URL_S3 || process.env.AWS_ENDPOINT_URL || 'aws';
  // Only the endpoint's origin: a URL with user:password@ must not leave a trace in a folder name.
  let origin = endpoint;
  try {
    origin = new URL(endpoint).origin;
  } catch {
    // not a URL: taken as it is (hashed below, never shown)
  }
  const id = createHash('sha256').update(`${origin}\n${parseS3Url(url).url}`).digest('hex').slice(0, 16);
  return join(cacheRoot(), id);
}

/** The folder a reader of `url` reads (readableLake fills it). */
export function readFolder(url: string): string {
  const { bucket, prefix } = parseS3Url(url);
  return join(lakeCacheDir(url), 'read', basename(prefix) || bucket);
}

/** The writer's work folder of `url`. */
export function workFolder(url: string): string {
  return join(lakeCacheDir(url), 'work');
}

/**
 * A folder holding copies of some of a store's objects at their keys, with the ETag each copy was
 * made from (in `.objects.json`), so that a copy is fetched again only when the object changed.
 */
export class Mirror {
  private readonly indexFile: string;
  private index: Record<string, { etag: string; size: number }>;

  constructor(
    readonly objects: ObjectStore,
    readonly dir: string,
  ) {
    this.indexFile = join(dir, '.objects.json');
    try {
      this.index = JSON.parse(readFileSync(this.indexFile, 'utf8')) as typeof this.index;
    } catch {
      this.index = {};
    }
  }

  path(key: string): string {
    return join(this.dir, ...key.split('/'));
  }

  /** Whether the copy of `key` is there, and (when given) made from `etag`. */
  has(key: string, etag?: string): boolean {
    const at = this.index[key];
    return at !== undefined && (etag === undefined || at.etag === etag) && existsSync(this.path(key));
  }

  /** Copies `key` (from `source` instead, when given: a pending move's staged object). False when the store has neither. */
  async fetch(key: string, o: { etag?: string; source?: string } = {}): Promise<boolean> {
    if (this.has(key, o.etag)) return true;
    for (const from of [key, ...(o.source ? [o.source] : [])]) {
      const etag = await this.objects.download(from, this.path(key));
      if (etag !== undefined) {
        this.record(key, etag, statSync(this.path(key)).size);
        return true;
      }
    }
    return false;
  }

  /** Notes that the file at `key` is a copy of the object with `etag` (the writer's own uploads). */
  record(key: string, etag: string, size: number): void {
    this.index[key] = { etag, size };
  }

  forget(key: string): void {
    delete this.index[key];
    rmSync(this.path(key), { force: true });
  }

  /** Removes every copy (and stray file) whose key `keep` refuses. */
  prune(keep: (key: string) => boolean): void {
    if (!existsSync(this.dir)) return;
    for (const key of walkFiles(this.dir, this.dir)) {
      if (LOCAL_ONLY.has(key.split('/')[0]!) || keep(key)) continue;
      this.forget(key);
    }
    for (const key of Object.keys(this.index)) if (!keep(key) || !existsSync(this.path(key))) delete this.index[key];
  }

  bytes(): number {
    return Object.values(this.index).reduce((n, e) => n + e.size, 0);
  }

  /**
   * Keeps the copies of `committed` keys (and the states) only, and of those no more than `bound`
   * bytes: the oldest copies go first (a writer fetches one again when it needs it).
   */
  trim(committed: Set<string>, bound: number): void {
    this.prune((key) => key.startsWith('_state/') || committed.has(key));
    let bytes = this.bytes();
    for (const [key, e] of Object.entries(this.index)) {
      if (bytes <= bound) break;
      if (key.startsWith('_state/')) continue;
      this.forget(key);
      bytes -= e.size;
    }
    this.save();
  }

  save(): void {
    writeAtomic(this.indexFile, JSON.stringify(this.index));
  }

  /** Brings the copies of the state objects up to date with the store: changed ones fetched, removed ones removed. */
  async pullStates(listing?: ObjectInfo[]): Promise<void> {
    const states = listing ?? (await this.objects.list('_state/'));
    const listed = new Set(states.map((o) => o.key));
    const queue = new PQueue({ concurrency: 8 });
    await Promise.all(states.filter((o) => o.key.endsWith('.json')).map((o) => queue.add(() => this.fetch(o.key, { etag: o.etag }))));
    this.prune((key) => !key.startsWith('_state/') || listed.has(key));
    this.save();
  }
}

interface StateFiles {
  files: string[];
  pending?: { moves: Array<[string, string]> };
}


/**
 * The file `<name>.<suffix>` that belongs to `lake` alone (its warehouse file, its report): beside
 * a lake folder and named after it (data/lake -> data/lake.warehouse.duckdb), so two lakes in one
 * folder never share one; for an s3:// lake, in the current folder, named after its last prefix
 * part and its cache id (endpoint and URL), so two buckets, prefixes or endpoints never do.
 */
export function lakeFile(lake: string, suffix: string): string {
  if (!isObjectUrl(lake)) return `${resolve(lake)}.${suffix}`;
  const { bucket, prefix } = parseS3Url(lake);
  return resolve(`${basename(prefix) || bucket}-${basename(lakeCacheDir(lake)).slice(0, 8)}.${suffix}`);
}

/**
 * The local folder to read `lake` from: the folder itself, or for an s3:// lake its read copy,
 * brought up to date first: the state objects and run reports, and (with `data`, the default) the
 * files the states list, fetched when new and removed when no state lists them any more. A file of
 * a commit whose moves are still pending is read from its staging key. `mustExist`: a prefix with
 * no object at all is a usage error (a typo), not an empty lake.
 */
export async function readableLake(lake: string, o: { data?: boolean; mustExist?: boolean } = {}): Promise<string> {
  if (!isObjectUrl(lake)) return lake;
  const s3 = await S3Objects.open(lake);
  const dir = readFolder(lake);
  mkdirSync(dir, { recursive: true });
  // Two readers of one lake on this machine take turns at the copy.
  const lock = await LakeLock.acquire(dirname(dir), { wait: true });
  try {
    // A compaction committed between the listing and the fetches removes files the listing named: again.
    for (let attempt = 1; ; attempt++) {
      const missing = await syncOnce(s3, dir, o.data !== false, o.mustExist === true);
      if (missing.length === 0) break;
      if (attempt === 3) throw new RunError(`${s3.where}: committed files changed under three reads in a row (${missing.slice(0, 3).join(', ')}); is a compaction running? Try again`);
    }
    touch(dirname(dir));
    evictOthers(cacheRoot());
  } finally {
    lock.release();
  }
  return dir;
}

/** One pass of readableLake: returns the listed files the store did not have (changed meanwhile). */
async function syncOnce(s3: S3Objects, dir: string, data: boolean, mustExist: boolean): Promise<string[]> {
  const mirror = new Mirror(s3, dir);
  const states = await s3.list('_state/');
  const runs = await s3.list('_runs/');
  if (mustExist && states.length === 0 && runs.length === 0) throw new UsageError(`--lake ${s3.where}: no lake there (no partition state and no run report under this prefix)`);
  await mirror.pullStates(states);
  const queue = new PQueue({ concurrency: 8 });
  await Promise.all(runs.map((r) => queue.add(() => mirror.fetch(r.key, { etag: r.etag }))));
  const keep = new Set([...states, ...runs].map((x) => x.key));
  const missing: string[] = [];
  if (data) {
    const wanted = new Map<string, string | undefined>();
    for (const s of states) {
      if (!s.key.endsWith('.json') || !isTableFolder(s.key.split('/')[1] ?? '')) continue;
      const state = JSON.parse(readFileSync(mirror.path(s.key), 'utf8')) as StateFiles;
      const staged = new Map((state.pending?.moves ?? []).map(([from, to]) => [to, from]));
      // Raw pages are only read by `rebuild`, which is a writer: a reader leaves them in the store.
      for (const f of state.files) if (!f.startsWith('_raw/') && !f.startsWith('_rebuild/')) wanted.set(f, staged.get(f));
    }
    const tops = new Set([...wanted.keys()].map((k) => k.split('/')[0]!));
    const listing = new Map<string, ObjectInfo>();
    for (const top of tops) for (const x of await s3.list(`${top}/`)) listing.set(x.key, x);
    const bytes = [...wanted.keys()].reduce((n, k) => n + (listing.get(k)?.size ?? 0), 0);
    const bound = cacheBound();
    if (bytes > bound)
      throw new RunError(`${s3.where}: its committed files take ${mb(bytes)} MB, more than the read cache's bound of ${mb(bound)} MB: raise CHAINLAKE_CACHE_MB, or read the lake in place with DuckDB's httpfs (docs/object-storage.md)`);
    await Promise.all(
      [...wanted].map(([key, source]) =>
        queue.add(async () => {
          if (!(await mirror.fetch(key, { etag: listing.get(key)?.etag, source }))) missing.push(key);
        }),
      ),
    );
    for (const k of wanted.keys()) keep.add(k);
  }
  // Without data, the copies of committed files stay (they are still right, or pruned by the next full read).
  mirror.prune((key) => keep.has(key) || (!data && !key.startsWith('_state/') && !key.startsWith('_runs/')));
  mirror.save();
  return missing;
}

const mb = (bytes: number) => Math.ceil(bytes / 1024 / 1024);

function touch(dir: string): void {
  const f = join(dir, '.used');
  writeFileSync(f, '');
  const now = new Date();
  utimesSync(f, now, now);
}

/** Bytes of the files under `dir`. */
function folderBytes(dir: string): number {
  return walkFiles(dir, dir).reduce((n, k) => n + statSync(join(dir, k)).size, 0);
}

/**
 * Keeps the cache within its bound: the read copies of other lakes go, least recently used first,
 * while the whole cache is over the bound. The lake just read stays whatever its size (the bound
 * refused it before it was fetched, were it too big alone).
 */
function evictOthers(root: string): void {
  const bound = cacheBound();
  if (!existsSync(root)) return;
  const reads = readdirSync(root)
    .map((id) => join(root, id, 'read'))
    .filter((d) => existsSync(d))
    .map((d) => ({ dir: d, bytes: folderBytes(d), used: existsSync(join(d, '.used')) ? statSync(join(d, '.used')).mtimeMs : 0 }))
    .sort((a, b) => a.used - b.used);
  let total = reads.reduce((n, r) => n + r.bytes, 0);
  for (const r of reads.slice(0, -1)) {
    if (total <= bound) break;
    rmSync(r.dir, { recursive: true, force: true });
    total -= r.bytes;
  }
}
