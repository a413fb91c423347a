// The driver that keeps each lake table an Iceberg table: the state store calls `publish` for every
// commit that adds or removes a table's data files, after the files are in place and before the
// replaced ones are deleted, so that the table moves from one snapshot to the next and never names
// a file that is not there. A commit is published once (its id is in the snapshot's summary), so
// rolling a half-done commit forward publishes it if it was not, and does nothing if it was.
//
// The pointer moves by creating v<N+1>.metadata.json where none exists (a link on disk, a
// conditional write on the store): of two writers of one table (partitions committing at once,
// workers on other machines), one wins and the other reads the new version and tries again.
import { randomBytes, randomUUID } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { StreamDecl } from '../decl/stream.js';
import { pathToFileURL } from 'node:url';
import type { ObjectStore } from '../state/objects.js';
import { isTableData } from '../state/names.js';
import { committedBefore, type StateStore, type TableChange, type TablePublisher } from '../state/store.js';
import { STREAM_BY_TABLE } from '../streams/index.js';
import { OPERATIONS } from '../decl/operations.js';
import { duck } from '../load/parquet.js';
import { readManifest, readManifestList, writeManifest, writeManifestList, partitionSummaries, type DataFile, type ManifestEntry, type ManifestFile, type PartitionField } from './avro.js';
import { COMMIT_KEY, RETENTION_KEY, currentSchema, currentSnapshot, expiredMetadata, nextMetadata, operationOf, retentionOf, versionFile, versionOf, MAX_PREVIOUS_METADATA, type Snapshot, type TableMetadata } from './metadata.js';
import { fieldIdEntries, nameMapping, partitionSpecOf, schemaOf, type PartitionSpec, type Schema } from './schema.js';
import { describeFile } from './stats.js';

export const METADATA = 'metadata';
const HINT = 'version-hint.text';
/** Manifests a snapshot's list holds before they are merged into one. */
const MERGE_MANIFESTS = 64;

export interface IcebergOptions {
  objects: ObjectStore;
  /** The rest is what a writer needs; a reader (`check`) gives the store and the URI alone. */
  /** The lake as a URI (file:///..., s3://bucket/prefix): what manifests name files by. */
  uri: string;
  decl: (table: string) => StreamDecl | undefined;
  /** Local paths of lake files (fetched first on object storage). */
  local: (files: string[]) => Promise<string[]>;
  /** Every data file the table's partitions list, for a table that has no metadata yet. */
  committed: (table: string) => string[];
  conn: () => Promise<DuckDBConnection>;
  now?: () => number;
  /** Runs a table's publish in turn with other processes' (workers of a queued run); in this process they take turns anyway. */
  serialize?: <T>(table: string, f: () => Promise<T>) => Promise<T>;
}

interface Current {
  version: number;
  metadata: TableMetadata;
}

export class IcebergTables {
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Per table, the version this process published last, with its snapshot's manifests. */
  private readonly last = new Map<string, Current & { manifests: ManifestFile[] }>();

  constructor(private readonly o: IcebergOptions) {}

  /** Lake-relative key of a URI this lake wrote. */
  keyOf(uri: string): string {
    if (!uri.startsWith(`${this.o.uri}/`)) throw new Error(`${uri} is not in the lake ${this.o.uri}`);
    return decodeURI(uri.slice(this.o.uri.length + 1));
  }

  uriOf(key: string): string {
    return `${this.o.uri}/${encodeURI(key)}`;
  }

  /** The newest metadata of a table: the version hint, then any later version a writer made before writing the hint. */
  async current(table: string): Promise<Current | undefined> {
    const dir = `${table}/${METADATA}`;
    const onFrom = async (n: number) => {
      while (await this.o.objects.head(`${dir}/${versionFile(n + 1)}`)) n++;
      return n;
    };
    const listed = async () => Math.max(0, ...(await this.o.objects.list(`${dir}/v`)).map((x) => versionOf(x.key) ?? 0));
    const hint = await this.o.objects.get(`${dir}/${HINT}`);
    let n = hint ? Number(hint.body.toString('utf8').trim()) : 0;
    if (!Number.isSafeInteger(n) || n < 0) n = 0;
    n = await onFrom(n > 0 ? n : await listed());
    if (n === 0) return undefined;
    let got = await this.o.objects.get(`${dir}/${versionFile(n)}`);
    if (!got) {
      // A hint left far behind (its writer was slow, or killed before writing it) names a version
      // since deleted as old: the newest one listed, and any made after the listing.
      n = await onFrom(await listed());
      got = n > 0 ? await this.o.objects.get(`${dir}/${versionFile(n)}`) : undefined;
      if (!got) throw new Error(`${table}: ${METADATA}/${versionFile(n)} is missing`);
    }
    return { version: n, metadata: JSON.parse(got.body.toString('utf8')) as TableMetadata };
  }

  /** The schema a table's next data files are written with (ids kept from its metadata). */
  async schemaFor(decl: StreamDecl): Promise<Schema> {
    const cur = await this.current(decl.table);
    return schemaOf(decl, currentSchema(cur?.metadata), cur?.metadata['last-column-id']);
  }

  /** A table's first metadata, naming every file its partitions committed, when it has files and no metadata yet. */
  async adopt(table: string): Promise<boolean> {
    if ((await this.current(table)) || this.o.committed(table).length === 0) return false;
    await this.publish({ table, values: {}, added: [], removed: [], commit: `adopt-${randomUUID()}` });
    return true;
  }

  /** Publishes a commit of a table's files as its next snapshot (one at a time per table in this process). */
  publish(change: TableChange): Promise<void> {
    return this.inTurn(change.table, () => this.publishNow(change));
  }

  /** A table's retention in ms (RETENTION_KEY): how long the files a commit removes stay for older snapshots. */
  async retention(table: string): Promise<number> {
    // What this process published last carries it (only `compact`, holding the lake, changes it).
    return retentionOf(this.last.get(table)?.metadata ?? (await this.current(table))?.metadata);
  }

  /**
   * Expires the snapshots the table's retention no longer keeps (`retainMs`, when given, set as
   * its retention first), in a new metadata version when anything changes; returns the data files
   * the snapshots kept name (lake-relative), which must stay. Undefined for a table without
   * metadata, or whose metadata names another location (a moved lake): nothing is known to be free.
   */
  expire(table: string, retainMs?: number): Promise<Set<string> | undefined> {
    return this.inTurn(table, () => this.expireNow(table, retainMs));
  }

  /** One table's publishes and expiries in turn: in this process, and with other processes' through `serialize`. */
  private inTurn<T>(table: string, f: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(table) ?? Promise.resolve();
    const serialize = this.o.serialize;
    const next = prev.catch(() => undefined).then(() => (serialize ? serialize(table, f) : f()));
    this.chains.set(table, next);
    return next;
  }

  private async expireNow(table: string, retainMs?: number): Promise<Set<string> | undefined> {
    for (let attempt = 0; ; attempt++) {
      const cur = await this.current(table);
      if (!cur || cur.metadata.location !== this.uriOf(table)) return undefined;
      const made = expiredMetadata(cur.metadata, {
        now: (this.o.now ?? Date.now)(),
        ...(retainMs === undefined ? {} : { properties: { [RETENTION_KEY]: String(retainMs) } }),
        previousFile: this.uriOf(`${table}/${METADATA}/${versionFile(cur.version)}`),
      });
      let metadata = cur.metadata;
      if (made) {
        const version = cur.version + 1;
        this.last.delete(table);
        if (!(await this.o.objects.create(`${table}/${METADATA}/${versionFile(version)}`, JSON.stringify(made.metadata, null, 1)))) {
          if (attempt >= 50) throw new Error(`${table}: could not expire Iceberg snapshots after ${attempt + 1} attempts (other writers kept committing first)`);
          continue;
        }
        const oldest = made.metadata.snapshots[0];
        const garbage = await this.orphaned(made.expired, async () => (oldest ? readManifestList(await this.read(oldest['manifest-list'])).map((x) => x.path) : []));
        await Promise.all([this.hint(table, version), this.tidy(table, version, garbage)]);
        metadata = made.metadata;
      }
      return new Set([...(await this.liveFiles(metadata.snapshots))].map((f) => this.keyOf(f)));
    }
  }

  /**
   * What expired snapshots alone referenced: their manifest lists, and the manifests they list
   * that the oldest snapshot kept does not (a manifest, once dropped from a list, never returns).
   */
  private async orphaned(expired: Snapshot[], oldestManifests: () => Promise<string[]>): Promise<string[]> {
    if (!expired.length) return [];
    const kept = new Set(await oldestManifests());
    const out: string[] = [];
    for (const s of expired) {
      out.push(this.keyOf(s['manifest-list']));
      const listed = await this.o.objects.get(this.keyOf(s['manifest-list']));
      if (listed) for (const mf of readManifestList(listed.body)) if (!kept.has(mf.path)) out.push(this.keyOf(mf.path));
    }
    return out;
  }

  private async publishNow(change: TableChange): Promise<void> {
    const decl = this.o.decl(change.table);
    if (!decl) return;
    for (let attempt = 0; ; attempt++) {
      // What this process published last is the table's newest version unless another writer
      // moved it since: then the create below fails, and the store is read again. A commit rolled
      // forward reads the store: the process that began it may have published it.
      const known = attempt === 0 && !change.rolledForward ? this.last.get(change.table) : undefined;
      const cur = known ?? (await this.current(change.table));
      if (cur && (cur.metadata.snapshots.some((s) => s.summary[COMMIT_KEY] === change.commit) || (change.rolledForward && (await this.holds(cur, change))))) {
        await this.hint(change.table, cur.version);
        this.last.delete(change.table);
        return;
      }
      let made;
      try {
        made = await this.prepare(decl, change, cur, known?.manifests);
      } catch (err) {
        // What this process published last may be stale: another writer published since and
        // deleted manifests it alone named. Read the table again; an error then is real.
        if (!known) throw err;
        this.last.delete(change.table);
        continue;
      }
      const version = (cur?.version ?? 0) + 1;
      if (await this.o.objects.create(`${change.table}/${METADATA}/${versionFile(version)}`, JSON.stringify(made.metadata, null, 1), { durable: made.written })) {
        this.last.set(change.table, { version, metadata: made.metadata, manifests: made.manifests });
        await Promise.all([this.hint(change.table, version), this.tidy(change.table, version, made.garbage)]);
        return;
      }
      this.last.delete(change.table);
      // Another writer made that version first: what this attempt wrote is nobody's.
      await Promise.all(made.written.map((k) => this.o.objects.delete(k)));
      if (attempt >= 50) throw new Error(`${change.table}: could not publish an Iceberg snapshot after ${attempt + 1} attempts (other writers kept committing first)`);
    }
  }

  /**
   * Whether the current snapshot already shows a commit: its added files named (a commit's new
   * files have names no other commit gives), or for one that only removes, none of those named.
   * What a roll-forward asks when the commit's own snapshot may have expired since.
   */
  private async holds(cur: Current, change: TableChange): Promise<boolean> {
    const snap = currentSnapshot(cur.metadata);
    if (!snap || cur.metadata.location !== this.uriOf(change.table)) return false;
    const named = await this.liveFiles([snap]);
    return change.added.length ? change.added.every((f) => named.has(this.uriOf(f))) : change.removed.every((f) => !named.has(this.uriOf(f)));
  }

  /** The data files (URIs) that snapshots of this lake's table name, each manifest they share read once. */
  private async liveFiles(snapshots: Snapshot[]): Promise<Set<string>> {
    const named = new Set<string>();
    const seen = new Set<string>();
    for (const snap of snapshots)
      for (const mf of readManifestList(await this.read(snap['manifest-list']))) {
        if (seen.has(mf.path)) continue;
        seen.add(mf.path);
        for (const e of readManifest(await this.read(mf.path)).entries) if (e.status !== 2) named.add(e.file.path);
      }
    return named;
  }

  private async hint(table: string, version: number): Promise<void> {
    // A stale hint sends a reader to an older snapshot, whole: it need not be on disk before the next commit.
    await this.o.objects.write(`${table}/${METADATA}/${HINT}`, String(version));
  }

  /** Deletes what no snapshot kept references any more, and metadata files older than the log keeps. */
  private async tidy(table: string, version: number, garbage: string[]): Promise<void> {
    const old = version - MAX_PREVIOUS_METADATA - 1;
    const keys = [...garbage, ...(old > 0 ? [`${table}/${METADATA}/${versionFile(old)}`] : [])];
    await Promise.all(keys.map((k) => this.o.objects.delete(k)));
  }

  private async prepare(decl: StreamDecl, change: TableChange, cur: Current | undefined, known?: ManifestFile[]) {
    const m = cur?.metadata;
    const schema = schemaOf(decl, currentSchema(m), m?.['last-column-id']);
    const spec = partitionSpecOf(decl, schema);
    const fields = partitionFields(spec, schema);
    // A lake folder moved or copied elsewhere: its metadata names the files where they were. The
    // table starts a new history here (its schema and field ids kept) from every committed file.
    const moved = m !== undefined && m.location !== this.uriOf(change.table);
    const parent = moved ? undefined : currentSnapshot(m);
    const snapshotId = newSnapshotId();
    const seq = BigInt((m?.['last-sequence-number'] ?? 0) + 1);
    const written: string[] = [];
    const uuid = randomUUID();
    // Written at once after they are all made: the manifests, then the list naming them.
    const pending: Array<Promise<void>> = [];
    const put = (name: string, body: Buffer) => {
      const key = `${change.table}/${METADATA}/${name}`;
      pending.push(this.o.objects.write(key, body));
      written.push(key);
      return { key, length: BigInt(body.length) };
    };

    // The files this commit adds; a table without metadata yet starts from every committed file.
    const removed = new Set(change.removed.map((f) => this.uriOf(f)));
    const adding = m && !moved ? change.added : [...new Set([...this.o.committed(change.table).filter((f) => !change.removed.includes(f)), ...change.added])];
    const locals = await this.o.local(adding);
    const conn = await this.o.conn();
    const addedFiles: DataFile[] = [];
    for (let i = 0; i < adding.length; i++) {
      const file = await describeFile(conn, locals[i]!, this.uriOf(adding[i]!), schema);
      file.partition = partitionOf(decl, spec, fields, adding[i]!, change.values);
      addedFiles.push(file);
    }

    // The previous snapshot's manifests; those naming a removed file are written again without it.
    const header = { schemaJson: JSON.stringify(schema), schemaId: schema['schema-id'], partitionSpecId: spec['spec-id'], partitionFields: fields, partitionSourceIds: spec.fields.map((f) => f['source-id']) };
    let manifests: ManifestFile[] = parent ? (known ?? readManifestList(await this.read(parent['manifest-list']))) : [];
    const garbage: string[] = [];
    let deletedRows = 0n;
    let deletedFiles = 0;
    const live = async (mf: ManifestFile): Promise<ManifestEntry[]> =>
      readManifest(await this.read(mf.path)).entries
        .filter((e) => e.status !== 2)
        .map((e) => ({ ...e, status: 0, snapshotId: e.snapshotId ?? mf.addedSnapshotId, sequenceNumber: e.sequenceNumber ?? mf.sequenceNumber, fileSequenceNumber: e.fileSequenceNumber ?? mf.sequenceNumber }));
    const rewritten: ManifestFile[] = [];
    if (removed.size || manifests.length + 1 > MERGE_MANIFESTS) {
      const keep: ManifestFile[] = [];
      const merge: ManifestEntry[] = [];
      const merging = manifests.length + 1 > MERGE_MANIFESTS;
      for (const mf of manifests) {
        if (!merging && mf.addedFilesCount + mf.existingFilesCount === 0) continue;
        const entries = merging || removed.size ? await live(mf) : [];
        const hit = entries.some((e) => removed.has(e.file.path));
        if (!merging && !hit) {
          keep.push(mf);
          continue;
        }
        for (const e of entries) {
          if (removed.has(e.file.path)) {
            deletedRows += e.file.recordCount;
            deletedFiles++;
            merge.push({ ...e, status: 2, snapshotId: BigInt(snapshotId) });
          } else merge.push(e);
        }
      }
      if (merge.length) {
        const body = writeManifest(header, merge);
        const { key, length } = put(`${uuid}-m1.avro`, body);
        rewritten.push(manifestFileOf(this.uriOf(key), length, spec, fields, merge, BigInt(snapshotId), seq));
      }
      manifests = keep;
    }
    const entries: ManifestEntry[] = addedFiles.map((file) => ({ status: 1, snapshotId: null, sequenceNumber: null, fileSequenceNumber: null, file }));
    if (entries.length) {
      const { key, length } = put(`${uuid}-m0.avro`, writeManifest(header, entries));
      rewritten.push(manifestFileOf(this.uriOf(key), length, spec, fields, entries, BigInt(snapshotId), seq));
    }
    const all = [...manifests, ...rewritten];
    const listName = `snap-${snapshotId}-1-${uuid}.avro`;
    const list = put(listName, writeManifestList({ snapshotId: BigInt(snapshotId), parentSnapshotId: parent ? BigInt(parent['snapshot-id']) : null, sequenceNumber: seq }, all));
    const addedRows = addedFiles.reduce((n, f) => n + f.recordCount, 0n);
    const totalRows = BigInt(parent?.summary['total-records'] ?? '0') + addedRows - deletedRows;
    const totalFiles = Number(parent?.summary['total-data-files'] ?? '0') + addedFiles.length - deletedFiles;
    const { metadata, expired } = nextMetadata(m, {
      location: this.uriOf(change.table),
      uuid: randomUUID(),
      relocated: moved,
      schema,
      spec,
      properties: { 'schema.name-mapping.default': nameMapping(schema), 'write.parquet.compression-codec': 'zstd', 'chainlake.table': change.table },
      snapshotId,
      manifestList: this.uriOf(list.key),
      summary: { operation: operationOf(addedFiles.length, deletedFiles, !!change.rewrite && addedRows === deletedRows), commit: change.commit, addedFiles: addedFiles.length, addedRows, deletedFiles, deletedRows, totalFiles, totalRows },
      previousFile: cur ? this.uriOf(`${change.table}/${METADATA}/${versionFile(cur.version)}`) : undefined,
      now: (this.o.now ?? Date.now)(),
    });
    // The writes are done before anything below reads the store (and may fail on what another
    // writer deleted meanwhile): no write is left under way when prepare throws.
    await Promise.all(pending);
    if (moved) for (const s of expired) garbage.push(`${change.table}/${METADATA}/${s['manifest-list'].slice(s['manifest-list'].lastIndexOf('/') + 1)}`);
    else {
      const oldest = metadata.snapshots[0]!;
      garbage.push(...(await this.orphaned(expired, async () => (oldest['snapshot-id'] === snapshotId ? all.map((x) => x.path) : readManifestList(await this.read(oldest['manifest-list'])).map((x) => x.path)))));
    }
    return { metadata, manifests: all, written, garbage: [...new Set(garbage)] };
  }

  private async read(uri: string): Promise<Buffer> {
    const got = await this.o.objects.get(this.keyOf(uri));
    if (!got) throw new Error(`${uri} is missing`);
    return got.body;
  }

  /**
   * Deletes the files of a table's metadata folder that neither its current metadata, nor a
   * snapshot it keeps, nor a version its log names, names: what a publish cut short left (written
   * manifests and a list whose version was never made). Only while no other writer publishes the
   * table (compaction holds the lake). Returns how many went.
   */
  async sweep(table: string): Promise<number> {
    const cur = await this.current(table);
    if (!cur) return 0;
    const key = keyIn(cur.metadata.location);
    const keep = new Set<string | undefined>([`${table}/${METADATA}/${HINT}`, `${table}/${METADATA}/${versionFile(cur.version)}`]);
    for (const l of cur.metadata['metadata-log']) keep.add(key(l['metadata-file']));
    for (const snap of cur.metadata.snapshots) {
      const list = key(snap['manifest-list']);
      keep.add(list);
      const got = list === undefined ? undefined : await this.o.objects.get(list);
      if (got) for (const mf of readManifestList(got.body)) keep.add(key(mf.path));
    }
    // A metadata file newer than the one read was made meanwhile: nothing is swept then.
    if (await this.o.objects.head(`${table}/${METADATA}/${versionFile(cur.version + 1)}`)) return 0;
    const gone = (await this.o.objects.list(`${table}/${METADATA}/`)).filter((x) => !keep.has(x.key));
    await Promise.all(gone.map((x) => this.o.objects.delete(x.key)));
    return gone.length;
  }

  /**
   * What a table's current snapshot holds, for `check`: its data files as lake-relative paths,
   * read relative to the metadata's own location (a lake copied elsewhere still reads), undefined
   * for a table without metadata.
   */
  async snapshotFiles(table: string): Promise<{ version: number; snapshot: number; location: string; files: string[] } | undefined> {
    const cur = await this.current(table);
    const snap = currentSnapshot(cur?.metadata);
    if (!cur || !snap) return undefined;
    const location = cur.metadata.location;
    const within = keyIn(location);
    const key = (uri: string) => {
      const k = within(uri);
      if (k === undefined) throw new Error(`${table}: the metadata names ${uri}, outside its location ${location}`);
      return k;
    };
    const get = async (uri: string) => {
      const got = await this.o.objects.get(key(uri));
      if (!got) throw new Error(`${table}: ${key(uri)} is named by the metadata and missing`);
      return got.body;
    };
    const files: string[] = [];
    for (const mf of readManifestList(await get(snap['manifest-list']))) for (const e of readManifest(await get(mf.path)).entries) if (e.status !== 2) files.push(key(e.file.path));
    return { version: cur.version, snapshot: snap['snapshot-id'], location, files: files.sort() };
  }
}

/**
 * Lake-relative keys of the URIs a table's metadata names, read relative to its own location (the
 * lake the metadata was written in, which may since have moved): undefined for a URI outside it.
 */
function keyIn(location: string): (uri: string) => string | undefined {
  const base = location.slice(0, location.lastIndexOf('/') + 1);
  return (uri) => (uri.startsWith(base) ? decodeURI(uri.slice(base.length)) : undefined);
}

function newSnapshotId(): number {
  // Positive and below 2^53: exact as a JSON number in every reader.
  return Number(randomBytes(8).readBigUInt64BE() >> 11n) || 1;
}

function partitionFields(spec: PartitionSpec, schema: Schema): PartitionField[] {
  return spec.fields.map((f) => {
    const source = schema.fields.find((x) => x.id === f['source-id'])!;
    return { fieldId: f['field-id'], name: f.name, type: source.type === 'long' ? 'long' : source.type === 'int' ? 'int' : 'string' };
  });
}

/** A file's partition value: the committing partition's value of the folder's column. */
function partitionOf(decl: StreamDecl, spec: PartitionSpec, fields: PartitionField[], file: string, values: Record<string, string>): Record<string, string | null> {
  if (!decl.folder || !spec.fields.length) return {};
  // A file of another partition (a table's first snapshot takes every committed file) says its value in its folder.
  const folder = new RegExp(`/${decl.folder.key}=([^/]+)/`).exec(`/${file}`)?.[1];
  const value = folder ?? values[decl.folder.partition] ?? null;
  return { [fields[0]!.name]: value };
}

function manifestFileOf(path: string, length: bigint, spec: PartitionSpec, fields: PartitionField[], entries: ManifestEntry[], snapshotId: bigint, seq: bigint): ManifestFile {
  const count = (s: number) => entries.filter((e) => e.status === s);
  const rows = (es: ManifestEntry[]) => es.reduce((n, e) => n + e.file.recordCount, 0n);
  const seqs = entries.filter((e) => e.status !== 2).map((e) => e.sequenceNumber ?? seq);
  return {
    path,
    length,
    partitionSpecId: spec['spec-id'],
    content: 0,
    sequenceNumber: seq,
    minSequenceNumber: seqs.length ? seqs.reduce((a, b) => (b < a ? b : a)) : seq,
    addedSnapshotId: snapshotId,
    addedFilesCount: count(1).length,
    existingFilesCount: count(0).length,
    deletedFilesCount: count(2).length,
    addedRowsCount: rows(count(1)),
    existingRowsCount: rows(count(0)),
    deletedRowsCount: rows(count(2)),
    partitions: fields.length ? partitionSummaries(fields, entries) : null,
  };
}

/** The lake as a URI: what its tables' metadata names files by. */
export function lakeUri(store: StateStore): string {
  return store.remote ? store.lake : pathToFileURL(store.lake).href;
}

/** Reads a lake's tables' metadata, writing nothing (`check`). */
export function icebergReader(objects: ObjectStore, uri: string): IcebergTables {
  const none = (): never => {
    throw new Error('a reader of the Iceberg metadata does not write it');
  };
  return new IcebergTables({ objects, uri, decl: () => undefined, local: none, committed: none, conn: none });
}

/**
 * The publisher a writer's store keeps its tables' Iceberg metadata with (StoreHooks.publisher):
 * files are named by file:// URIs on disk and s3:// ones on a store.
 */
export function icebergPublisher(store: StateStore, o: { uri?: string; serialize?: IcebergOptions['serialize']; now?: () => number } = {}): TablePublisher {
  let conn: Promise<DuckDBConnection> | undefined;
  const tables = new IcebergTables({
    objects: store.objects,
    // `uri`: where the lake's files are named from, when not where the store is (a copy checked as the lake: scripts/torture.mjs).
    uri: o.uri ?? lakeUri(store),
    decl: declOf,
    local: (files) => store.local(files),
    committed: (t) => store.statesOf(t).flatMap(committedBefore),
    // One connection for the process's publishes (they take turns per table, and a connection
    // serves one query at a time anyway).
    conn: () => (conn ??= duck().then((d) => d.connect())),
    ...(o.serialize ? { serialize: o.serialize } : {}),
    ...(o.now ? { now: o.now } : {}),
  });
  const ids = new Map<string, Promise<Map<string, string>>>();
  return {
    publish: (change) => tables.publish(change),
    retention: (table) => tables.retention(table),
    expire: (table, retainMs) => tables.expire(table, retainMs),
    adopt: (table) => tables.adopt(table),
    sweep: (table) => tables.sweep(table),
    tidy: async (table) => (await store.objects.clearDeadTemps?.(`${table}/${METADATA}/`)) ?? 0,
    columns: async (table) => currentSchema((await tables.current(table))?.metadata)?.fields.map((f) => f.name),
    fieldIds: (decl) => {
      if (declOf(decl.table) !== decl) return Promise.resolve(new Map());
      // A table's ids change only with its declaration, which a process does not change.
      let got = ids.get(decl.table);
      if (!got) ids.set(decl.table, (got = tables.schemaFor(decl).then(fieldIdEntries)));
      return got;
    },
  };
}

/** The declaration of a lake table: a stream's, or the export operations'. */
function declOf(table: string): StreamDecl | undefined {
  return STREAM_BY_TABLE.get(table) ?? (table === OPERATIONS.table ? OPERATIONS : undefined);
}
