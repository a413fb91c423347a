// Checkpoints and the commit protocol. A partition's state file lists the Parquet files that hold
// its committed rows together with the cursor that produced them, so data and cursor commit as one:
//   1. the batch is written to staging (_staging/) and made durable: fsynced on disk, uploaded
//      under its staging key on object storage;
//   2. the new state (files + cursor + the pending moves) replaces the old one whole (a rename on
//      disk, one PUT of the state object on object storage);
//   3. the staged files are moved into the table folder (a rename; on a store without rename a
//      server-side copy to the final key, then the delete of the staging key), replaced files removed;
//   4. the state is rewritten without the pending moves.
// A crash before 2 leaves only staging litter (removed at the next start); a crash after 2 is rolled
// forward from the pending moves. Readers of <lake>/<table>/ only ever see complete, committed files.
// On object storage (s3://) the states, staging and fetched files live in a local work folder too
// (cache.ts), which the writer keeps in step with the store under the lake's lock.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Cursor } from './cursor.js';
import type { StreamDecl } from '../decl/stream.js';
import { DiskObjects, writeAtomic, type ObjectStore } from './objects.js';
import { S3Objects } from './s3.js';
import { isObjectUrl } from './location.js';
import { cacheBound, Mirror, workFolder } from './cache.js';
import { isTableData, RAW, REBUILD, REJECTS, slug } from './names.js';
import { BLOCK_TIMES, decodeBlockTimes, encodeBlockTimes, isTableFolder, type Resolved } from './block_times.js';

export { writeAtomic } from './objects.js';

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
  /**
   * Rows committed before a `chainlake reset` have no raw pages any more (the reset deleted those
   * holding rows it took back): `rebuild` cannot re-derive the partition until a whole refetch
   * (--full-refresh) clears it.
   */
  rawIncomplete?: true;
  /**
   * Where the range the partition has fetched begins: a block (append by block: every block from
   * it up to the cursor is committed) or Unix seconds (a series by time). It is the configured
   * start of the partition's first fetch, or of a later start past its cursor; a run configured to
   * start earlier would otherwise fetch nothing below it (state/cursor.ts startBelow). A lake of an
   * earlier version has none until a run records the start it is configured with.
   */
  from?: number;
  /** The chain's newest block when the partition's last window was opened (append streams that find it), and when. */
  head?: { block: number; at: string };
  /** A --full-refresh in progress: its files live under _rebuild/ until the rebuild swaps them in. */
  rebuild?: { cursor: Cursor; files: string[]; rows: number; rejects: number };
  /**
   * Data files the state no longer lists that stay on disk for the table's older Iceberg snapshots,
   * within its retention (iceberg/metadata.ts RETENTION_KEY): chainlake's views and checks leave
   * them out; they go once no snapshot kept names them (expireRetained).
   */
  retained?: string[];
  /**
   * A commit under way. `retains`: data files it removes from the table and keeps on disk (a
   * retention); `expiry`: its deletes are retained files no snapshot names any more, not a change
   * of the table.
   */
  pending?: { moves: Array<[string, string]>; deletes: string[]; rewrite?: true; retains?: string[]; expiry?: true };
}

/** A partition's committed data files as they were before its pending commit (all of them without one). */
export function committedBefore(s: PartitionState): string[] {
  const data = (f: string) => isTableData(s.table, f);
  if (!s.pending) return s.files.filter(data);
  const coming = new Set(s.pending.moves.map(([, to]) => to));
  const gone = s.pending.expiry ? [] : [...s.pending.deletes.filter(data), ...(s.pending.retains ?? [])];
  return [...s.files.filter((f) => data(f) && !coming.has(f)), ...gone];
}

/** One partition's commit as its table sees it (iceberg/table.ts): lake-relative data files. */
export interface TableChange {
  table: string;
  values: Record<string, string>;
  added: string[];
  removed: string[];
  /** A compaction's: the same rows, rewritten. */
  rewrite?: boolean;
  /** Unique to the commit, and the same when it is rolled forward. */
  commit: string;
  /**
   * A commit an earlier process (or this one's earlier attempt) began: it may be published
   * already, and its snapshot may have expired since (a later commit removing files expires them).
   */
  rolledForward?: true;
}

/** What keeps each table's own metadata in step with its commits (an Iceberg table: iceberg/table.ts). */
export interface TablePublisher {
  /** Called once a commit's files are in place and before the files it replaces are deleted; safe to repeat. */
  publish(change: TableChange): Promise<void>;
  /** A table's retention in ms: how long the data files a commit removes stay on disk for older snapshots (0: none). */
  retention(table: string): Promise<number>;
  /**
   * Expires the table's snapshots its retention no longer keeps (setting `retainMs` as its
   * retention first, when given); the data files the snapshots kept name (lake-relative), or
   * undefined when that is not known.
   */
  expire(table: string, retainMs?: number): Promise<Set<string> | undefined>;
  /** Writes the metadata of a table that has committed files and none yet (a lake written before); false when there was nothing to do. */
  adopt(table: string): Promise<boolean>;
  /** Deletes what a publish cut short left in the table's metadata (while the caller holds the lake); how many went. */
  sweep(table: string): Promise<number>;
  /** Deletes the temporary files of publishers killed mid-write, beside any publishing now; how many went. */
  tidy(table: string): Promise<number>;
  /** Per column name, what DuckDB's FIELD_IDS option gives it in the table's next files. */
  fieldIds(decl: StreamDecl): Promise<Map<string, string>>;
  /** The columns of the table's rows as landed so far (its current schema), or undefined before its first commit. */
  columns?(table: string): Promise<string[] | undefined>;
}

export const STAGING = '_staging';
export const STATE = '_state';
export const RUNS = '_runs';
export { RAW, REBUILD, REJECTS, slug };

/** Partition id of the state that owns a merge-into-table stream's data files. */
export const TABLE_PARTITION = '(table)';

/** A writer's checks around its changes to the lake, given when the store is made. */
export interface StoreHooks {
  /** Throws when this process may no longer write the lake (its lock was taken over): checked before every commit and recovery. */
  fence?: () => void;
  /**
   * Runs each state change of a partition (a commit, a roll-forward) inside the caller's check: a
   * worker's lease on the partition (cluster/queue.ts), which refuses or holds off a takeover.
   */
  guard?: <T>(table: string, partition: string, change: () => Promise<T>) => Promise<T>;
  /** The tables' metadata kept with each commit, made for the store. */
  publisher?: (store: StateStore) => TablePublisher;
}

export class StateStore {
  /** The lake as given, made absolute: a folder, or `s3://bucket/prefix`. */
  readonly lake: string;
  /** The local folder behind the lake: the lake itself, or the work folder of an object-storage lake. */
  readonly root: string;
  readonly objects: ObjectStore;
  /** On object storage: the local copies of the states and of the files fetched or committed. */
  private readonly mirror?: Mirror;
  private readonly fence?: () => void;
  private readonly guard?: StoreHooks['guard'];
  readonly publisher?: TablePublisher;

  /** A lake folder on this machine (StateStore.open takes an s3:// lake too). */
  constructor(lake: string, o: StoreHooks & { remote?: { objects: S3Objects; root: string } } = {}) {
    this.fence = o.fence;
    this.guard = o.guard;
    const remote = o.remote;
    if (remote) {
      this.lake = remote.objects.where;
      this.root = resolve(remote.root);
      this.objects = remote.objects;
      this.mirror = new Mirror(remote.objects, this.root);
    } else {
      this.lake = resolve(lake);
      this.root = this.lake;
      this.objects = new DiskObjects(this.lake);
    }
    this.publisher = o.publisher?.(this);
  }

  /**
   * The store of a lake folder or of an s3:// lake (its bucket checked). `work`: the local work
   * folder of an s3:// lake, when not the lake's usual one (each worker process has its own).
   */
  static async open(lake: string, o: StoreHooks & { work?: (usual: string) => string } = {}): Promise<StateStore> {
    const { work, ...hooks } = o;
    if (!isObjectUrl(lake)) return new StateStore(lake, hooks);
    const objects = await S3Objects.open(lake);
    const usual = workFolder(objects.where);
    return new StateStore(lake, { ...hooks, remote: { objects, root: work?.(usual) ?? usual } });
  }

  /** Whether the lake is on object storage. */
  get remote(): boolean {
    return this.mirror !== undefined;
  }

  /** Resolves a lake-relative path in the local folder and refuses anything that would land outside it. */
  path(rel: string): string {
    const abs = resolve(this.root, rel);
    if (abs !== this.root && !abs.startsWith(this.root + sep)) throw new Error(`refusing a path outside the lake: ${rel}`);
    return abs;
  }

  /** Local paths of committed files, fetched first on object storage (a merge, a compaction or a rebuild reads them). */
  async local(files: string[]): Promise<string[]> {
    const mirror = this.mirror;
    if (mirror) {
      for (const f of files) {
        if (!(await mirror.fetch(f))) throw new Error(`${this.lake}: ${f} is listed by a partition state but the store has no such object`);
      }
      mirror.save();
    }
    return files.map((f) => this.path(f));
  }

  /** A file written under the local folder at `file` goes to the lake at the same key (run reports). */
  async publish(file: string): Promise<void> {
    const key = relative(this.root, file).split(sep).join('/');
    if (!this.mirror) return;
    const etag = await this.objects.upload(key, file);
    this.mirror.record(key, etag, statSync(file).size);
    this.mirror.save();
  }

  private stateKey(table: string, partition: string): string {
    return `${STATE}/${table}/${slug(partition)}.json`;
  }

  load(table: string, partition: string): PartitionState {
    const f = this.path(this.stateKey(table, partition));
    if (!existsSync(f)) return { table, partition, files: [], rows: 0, rejects: 0, cursor: {} };
    return JSON.parse(readFileSync(f, 'utf8')) as PartitionState;
  }

  all(): PartitionState[] {
    const root = this.path(STATE);
    if (!existsSync(root)) return [];
    return readdirSync(root).sort().filter(isTableFolder).flatMap((table) => this.statesOf(table));
  }

  private blockTimesKey(chain: string): string {
    return `${STATE}/${BLOCK_TIMES}/${slug(chain)}.json`;
  }

  /** The times resolved to blocks of a chain that the lake remembers (state/block_times.ts). */
  blockTimes(chain: string): Resolved[] {
    const key = this.blockTimesKey(chain);
    const f = this.path(key);
    return existsSync(f) ? decodeBlockTimes(readFileSync(f, 'utf8'), chain, key) : [];
  }

  /** Replaces a chain's record of times resolved to blocks, whole: in the lake, and in the local copy blockTimes() reads. */
  async saveBlockTimes(chain: string, resolved: readonly Resolved[]): Promise<void> {
    this.fenced();
    const key = this.blockTimesKey(chain);
    const text = encodeBlockTimes(chain, resolved);
    const etag = await this.objects.put(key, text);
    if (this.mirror) {
      writeAtomic(this.path(key), text);
      this.mirror.record(key, etag, Buffer.byteLength(text));
      this.mirror.save();
    }
  }

  /** One table's partition states (what reads one table need not parse every table's). */
  statesOf(table: string): PartitionState[] {
    const dir = join(this.path(STATE), table);
    if (!existsSync(dir)) return [];
    const out: PartitionState[] = [];
    for (const f of readdirSync(dir).sort()) if (f.endsWith('.json')) out.push(JSON.parse(readFileSync(join(dir, f), 'utf8')) as PartitionState);
    return out;
  }

  /** A fresh folder under staging for one batch (local: on object storage, it is uploaded at commit). */
  stagingDir(table: string, partition: string): string {
    return this.path(join(STAGING, table, `${slug(partition)}-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`));
  }

  /** Replaces a state whole: in the lake, and in the local copy that load() reads. */
  private async writeState(state: PartitionState): Promise<void> {
    const key = this.stateKey(state.table, state.partition);
    const text = JSON.stringify(state, null, 1);
    const etag = await this.objects.put(key, text);
    if (this.mirror) {
      writeAtomic(this.path(key), text);
      this.mirror.record(key, etag, Buffer.byteLength(text));
    }
  }

  /**
   * Commits a partition's next state in one step: `moves` are [file, lake-relative target] (staged
   * or rebuilt files, absolute or lake-relative), `deletes` lake-relative files the state drops.
   * `next.files` must already list the targets and not the deleted files.
   */
  async commit(next: PartitionState, moves: Array<[string, string]>, deletes: string[] = [], o: { rewrite?: boolean; expiry?: boolean } = {}): Promise<PartitionState> {
    this.fenced();
    const rel = (p: string) => relative(this.root, this.path(p)).split(sep).join('/');
    const pendingMoves = moves.map(([s, t]): [string, string] => [rel(s), rel(t)]);
    // Staged files go to the lake (on disk: to the disk) before the state names them; files of the
    // lake already (a rebuild's under _rebuild/) are moved where they are.
    await Promise.all(pendingMoves.filter(([s]) => s.startsWith(`${STAGING}/`)).map(([s]) => this.objects.upload(s, this.path(s))));
    let gone = deletes.map(rel);
    // With a retention, the data files the commit removes stay for the table's older snapshots.
    const retainMs = !o.expiry && this.publisher && gone.some((f) => isTableData(next.table, f)) ? await this.publisher.retention(next.table) : 0;
    const retains = retainMs > 0 ? gone.filter((f) => isTableData(next.table, f)) : [];
    const kept = new Set(retains);
    gone = gone.filter((f) => !kept.has(f));
    const deleted = new Set(gone);
    // A caller's state carries what its partition retains; one made afresh gets it from the store.
    const retained = [...new Set([...(next.retained ?? this.load(next.table, next.partition).retained ?? []), ...retains])].filter((f) => !deleted.has(f));
    const { retained: _, ...rest } = next;
    const state: PartitionState = {
      ...rest,
      ...(retained.length ? { retained } : {}),
      pending: { moves: pendingMoves, deletes: gone, ...(o.rewrite ? { rewrite: true as const } : {}), ...(retains.length ? { retains } : {}), ...(o.expiry ? { expiry: true as const } : {}) },
    };
    return this.guarded(state, async () => {
      await this.writeState(state);
      await this.finish(state);
      this.mirror?.save();
      return state;
    });
  }

  private fenced(): void {
    this.fence?.();
  }

  private guarded<T>(state: PartitionState, change: () => Promise<T>): Promise<T> {
    return this.guard ? this.guard(state.table, state.partition, change) : change();
  }

  /**
   * A worker's start on a partition: its state brought up to date with the store (another machine
   * may have committed it last) and a commit its last writer left half-done rolled forward. Other
   * partitions and staging are left alone: other workers write them.
   */
  async recoverPartition(table: string, partition: string): Promise<void> {
    this.fenced();
    const key = this.stateKey(table, partition);
    if (this.mirror) {
      const found = (await this.objects.list(key)).find((o) => o.key === key);
      if (found) await this.mirror.fetch(key, { etag: found.etag });
      else this.mirror.forget(key);
      this.mirror.save();
    }
    const state = this.load(table, partition);
    if (!state.pending) return;
    await this.guarded(state, async () => {
      await this.finish(state, true);
      this.mirror?.save();
    });
  }

  /** Carries out a state's pending moves and deletes, then writes it without them. */
  private async finish(state: PartitionState, rolledForward = false): Promise<void> {
    await this.apply(state, rolledForward);
    delete state.pending;
    await this.writeState(state);
  }

  /** Carries out pending moves and deletes; safe to repeat. */
  private async apply(state: PartitionState, rolledForward: boolean): Promise<void> {
    const moved: string[] = [];
    // One after the other on disk (each is a rename); at once on a store (each is a copy and a delete).
    await Promise.all(
      (state.pending?.moves ?? []).map(async ([from, to]) => {
        const etag = await this.objects.move(from, to);
        if (etag === undefined) return;
        moved.push(to);
        if (this.mirror) {
          // The staged file is the committed file's content: kept as its local copy.
          const src = this.path(from);
          if (existsSync(src)) {
            mkdirSync(dirname(this.path(to)), { recursive: true });
            renameSync(src, this.path(to));
            this.mirror.record(to, etag, statSync(this.path(to)).size);
          }
        }
      }),
    );
    // The table's metadata names the new files before the replaced ones go.
    await this.tell(state, rolledForward);
    // Replaced files go once the new ones are in place.
    await Promise.all(
      (state.pending?.deletes ?? []).map(async (f) => {
        await this.objects.delete(f);
        this.mirror?.forget(f);
      }),
    );
    if (this.objects instanceof DiskObjects) this.objects.syncDirs(moved);
  }

  /** Tells the publisher what a pending commit does to its table's data files (the table's folder, not rejects or raw pages). */
  private async tell(state: PartitionState, rolledForward: boolean): Promise<void> {
    const pending = state.pending;
    if (!this.publisher || !pending || pending.expiry) return;
    const data = (f: string) => isTableData(state.table, f);
    const added = pending.moves.map(([, to]) => to).filter(data);
    const removed = [...pending.deletes.filter(data), ...(pending.retains ?? [])];
    if (!added.length && !removed.length) return;
    const commit = createHash('sha256').update(JSON.stringify([state.table, state.partition, pending.moves, pending.deletes])).digest('hex').slice(0, 32);
    await this.publisher.publish({ table: state.table, values: state.values ?? {}, added, removed, ...(pending.rewrite ? { rewrite: true } : {}), ...(rolledForward ? { rolledForward: true as const } : {}), commit });
  }

  /**
   * Finishes what a killed run committed but did not move, then clears staging. Call while
   * holding the lake lock, before anything else touches the lake. On object storage the local
   * copies of the states are brought up to date with the store first.
   */
  async recover(): Promise<{ rolledForward: number }> {
    this.fenced();
    await this.mirror?.pullStates();
    let rolledForward = 0;
    const root = this.path(STATE);
    if (existsSync(root)) {
      for (const table of readdirSync(root)) {
        const states = isTableFolder(table);
        for (const f of readdirSync(join(root, table))) {
          const file = join(root, table, f);
          if (f.includes('.tmp-')) {
            unlinkSync(file);
            continue;
          }
          if (!states) continue;
          const state = JSON.parse(readFileSync(file, 'utf8')) as PartitionState;
          if (!state.pending) continue;
          await this.finish(state, true);
          rolledForward++;
        }
        if (states) await this.publisher?.tidy(table);
      }
    }
    if (this.mirror) {
      await Promise.all((await this.objects.list(`${STAGING}/`)).map((o) => this.objects.delete(o.key)));
      // The work folder keeps copies of committed files for merges and compactions, within the cache's bound.
      const committed = new Set(this.all().flatMap((s) => [...s.files, ...(s.rebuild?.files ?? [])]));
      this.mirror.trim(committed, cacheBound());
    }
    rmSync(this.path(STAGING), { recursive: true, force: true });
    return { rolledForward };
  }

  /**
   * Deletes the files the table's partitions retain that no snapshot its retention keeps names any
   * more (expiring those snapshots first; `retainMs`, when given, set as the table's retention).
   * Only while this process holds the lake. Returns how many went.
   */
  async expireRetained(table: string, retainMs?: number): Promise<number> {
    const states = this.statesOf(table);
    if (!this.publisher || (retainMs === undefined && !states.some((s) => s.retained?.length))) return 0;
    const named = await this.publisher.expire(table, retainMs);
    if (!named) return 0;
    let gone = 0;
    for (const s of states) {
      const free = (s.retained ?? []).filter((f) => !named.has(f));
      if (!free.length || s.pending) continue;
      await this.commit({ ...s, retained: s.retained!.filter((f) => named.has(f)) }, [], free, { expiry: true });
      gone += free.length;
    }
    return gone;
  }

  /** Every committed file of a table, as the state lists them. */
  committedFiles(table: string): string[] {
    return this.statesOf(table).flatMap((s) => s.files);
  }

  isLakeDir(): boolean {
    return !existsSync(this.lake) || statSync(this.lake).isDirectory();
  }
}
