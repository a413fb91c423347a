// A table's Iceberg metadata (format version 2) and its next state after a commit, as a pure
// function of the current metadata, what the commit did and the clock: no I/O here (table.ts
// writes the files). The layout is the file-system catalog that engines read from a path:
// <table>/metadata/v<N>.metadata.json, the newest named in version-hint.text.
import { lastColumnId, type PartitionSpec, type Schema } from './schema.js';

export interface Snapshot {
  'snapshot-id': number;
  'parent-snapshot-id'?: number;
  'sequence-number': number;
  'timestamp-ms': number;
  'manifest-list': string;
  summary: Record<string, string> & { operation: Operation };
  'schema-id': number;
}

export type Operation = 'append' | 'replace' | 'overwrite' | 'delete';

export interface TableMetadata {
  'format-version': 2;
  'table-uuid': string;
  location: string;
  'last-sequence-number': number;
  'last-updated-ms': number;
  'last-column-id': number;
  'current-schema-id': number;
  schemas: Schema[];
  'default-spec-id': number;
  'partition-specs': PartitionSpec[];
  'last-partition-id': number;
  'default-sort-order-id': number;
  'sort-orders': Array<{ 'order-id': number; fields: unknown[] }>;
  properties: Record<string, string>;
  'current-snapshot-id': number;
  snapshots: Snapshot[];
  'snapshot-log': Array<{ 'snapshot-id': number; 'timestamp-ms': number }>;
  'metadata-log': Array<{ 'metadata-file': string; 'timestamp-ms': number }>;
  refs: Record<string, { 'snapshot-id': number; type: 'branch' }>;
}

/** Snapshots a table keeps at most (older ones expire; their files are the newer ones' or gone). */
export const MAX_SNAPSHOTS = 100;
/** Earlier metadata files named in the metadata log (and kept on the store) at most. */
export const MAX_PREVIOUS_METADATA = 20;
/** The summary key holding the chainlake commit a snapshot carries out: a commit is published once. */
export const COMMIT_KEY = 'chainlake.commit';
/**
 * The table property holding how long (ms) a snapshot stays readable after a later commit removed
 * files from the table (`chainlake compact --retention`); its files stay on disk as long. 0 or
 * absent: removed files go as the commit lands, and every earlier snapshot expires with it.
 */
export const RETENTION_KEY = 'chainlake.retention-ms';

/** A table's retention in ms (0 without the property, or with a value that is not a whole number). */
export function retentionOf(m: TableMetadata | undefined): number {
  const v = Number(m?.properties[RETENTION_KEY] ?? 0);
  return Number.isSafeInteger(v) && v > 0 ? v : 0;
}

const removesFiles = (s: Snapshot) => Number(s.summary['deleted-data-files'] ?? 0) > 0;

/**
 * The snapshots that stay, oldest first, of `snapshots` (oldest first) at `now`: each until
 * `retainMs` after the first later commit that removed files (`removing`: the commit being made
 * does, at `now`), for its files may be gone after that; at most `max`, the newest. The snapshots
 * kept are always the newest ones: an older snapshot's first later removal is never later than a
 * newer one's.
 */
export function keptSnapshots(snapshots: Snapshot[], o: { now: number; retainMs: number; removing: boolean; max: number }): Snapshot[] {
  let removal = o.removing ? o.now : undefined;
  const keep: Snapshot[] = [];
  for (let i = snapshots.length - 1; i >= 0 && keep.length < o.max; i--) {
    const s = snapshots[i]!;
    if (removal !== undefined && o.now - removal >= o.retainMs) break;
    keep.unshift(s);
    if (removesFiles(s)) removal = s['timestamp-ms'];
  }
  return keep;
}

export function currentSnapshot(m: TableMetadata | undefined): Snapshot | undefined {
  return m?.snapshots.find((s) => s['snapshot-id'] === m['current-snapshot-id']);
}

export function currentSchema(m: TableMetadata | undefined): Schema | undefined {
  return m?.schemas.find((s) => s['schema-id'] === m['current-schema-id']);
}

export interface CommitSummary {
  operation: Operation;
  commit: string;
  addedFiles: number;
  addedRows: bigint;
  deletedFiles: number;
  deletedRows: bigint;
  totalFiles: number;
  totalRows: bigint;
}

export interface NextInput {
  /** Where the table is (file:///... or s3://...), for a new table. */
  location: string;
  uuid: string;
  schema: Schema;
  spec: PartitionSpec;
  properties: Record<string, string>;
  snapshotId: number;
  manifestList: string;
  summary: CommitSummary;
  /** The path of the metadata file being replaced (for the metadata log), if any. */
  previousFile?: string;
  /** The table's files are now at `location` (a lake moved): the history before is dropped, its files being elsewhere. */
  relocated?: boolean;
  now: number;
}

/**
 * The metadata after one commit, and the snapshots it expired. A snapshot expires once the table's
 * retention has passed since a later commit removed files (at once without a retention: the files
 * such a commit removes are deleted as it lands, so no reader may be sent to them); otherwise the
 * newest MAX_SNAPSHOTS stay.
 */
export function nextMetadata(cur: TableMetadata | undefined, x: NextInput): { metadata: TableMetadata; expired: Snapshot[] } {
  const seq = (cur?.['last-sequence-number'] ?? 0) + 1;
  const parent = x.relocated ? undefined : currentSnapshot(cur);
  const s = x.summary;
  const snapshot: Snapshot = {
    'snapshot-id': x.snapshotId,
    ...(parent ? { 'parent-snapshot-id': parent['snapshot-id'] } : {}),
    'sequence-number': seq,
    'timestamp-ms': Math.max(x.now, cur?.['last-updated-ms'] ?? 0),
    'manifest-list': x.manifestList,
    summary: {
      operation: s.operation,
      'added-data-files': String(s.addedFiles),
      'deleted-data-files': String(s.deletedFiles),
      'added-records': String(s.addedRows),
      'deleted-records': String(s.deletedRows),
      'total-data-files': String(s.totalFiles),
      'total-records': String(s.totalRows),
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
      [COMMIT_KEY]: s.commit,
    },
    'schema-id': x.schema['schema-id'],
  };
  const earlier = cur?.snapshots ?? [];
  const properties = { ...(cur?.properties ?? {}), ...x.properties };
  const retainMs = retentionOf({ properties } as TableMetadata);
  const keep = x.relocated ? [] : keptSnapshots(earlier, { now: snapshot['timestamp-ms'], retainMs, removing: s.deletedFiles > 0, max: MAX_SNAPSHOTS - 1 });
  const kept = new Set(keep.map((k) => k['snapshot-id']));
  const expired = earlier.filter((e) => !kept.has(e['snapshot-id']));
  const schemas = cur ? (cur.schemas.some((k) => k['schema-id'] === x.schema['schema-id']) ? cur.schemas : [...cur.schemas, x.schema]) : [x.schema];
  const lastColumn = Math.max(cur?.['last-column-id'] ?? 0, lastColumnId(x.schema));
  const metadataLog = x.relocated ? [] : [...(cur?.['metadata-log'] ?? []), ...(x.previousFile && cur ? [{ 'metadata-file': x.previousFile, 'timestamp-ms': cur['last-updated-ms'] }] : [])].slice(-MAX_PREVIOUS_METADATA);
  const metadata: TableMetadata = {
    'format-version': 2,
    'table-uuid': cur?.['table-uuid'] ?? x.uuid,
    location: x.relocated || !cur ? x.location : cur.location,
    'last-sequence-number': seq,
    'last-updated-ms': snapshot['timestamp-ms'],
    'last-column-id': lastColumn,
    'current-schema-id': x.schema['schema-id'],
    schemas,
    'default-spec-id': x.spec['spec-id'],
    'partition-specs': [x.spec],
    'last-partition-id': Math.max(999, ...x.spec.fields.map((f) => f['field-id'])),
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties,
    'current-snapshot-id': x.snapshotId,
    snapshots: [...keep, snapshot],
    'snapshot-log': [...(cur?.['snapshot-log'] ?? []).filter((l) => kept.has(l['snapshot-id'])), { 'snapshot-id': x.snapshotId, 'timestamp-ms': snapshot['timestamp-ms'] }],
    'metadata-log': metadataLog,
    refs: { main: { 'snapshot-id': x.snapshotId, type: 'branch' } },
  };
  return { metadata, expired };
}

/** The operation Iceberg names for a commit: files added only, removed only, both, or the same rows rewritten. */
export function operationOf(added: number, removed: number, sameRows: boolean): Operation {
  if (removed === 0) return 'append';
  if (added === 0) return 'delete';
  return sameRows ? 'replace' : 'overwrite';
}

/** The metadata file of version `n` and the version a metadata file name gives. */
export function versionFile(n: number): string {
  return `v${n}.metadata.json`;
}

export function versionOf(name: string): number | undefined {
  const m = /^v(\d+)\.metadata\.json$/.exec(name.slice(name.lastIndexOf('/') + 1));
  return m ? Number(m[1]) : undefined;
}

/**
 * The metadata after expiring, at `now`, the snapshots the table's retention no longer keeps (the
 * current one stays), with `properties` set; undefined when nothing would change. No new snapshot:
 * what the current one reads is unchanged.
 */
export function expiredMetadata(cur: TableMetadata, x: { now: number; properties?: Record<string, string>; previousFile: string }): { metadata: TableMetadata; expired: Snapshot[] } | undefined {
  const properties = { ...cur.properties, ...(x.properties ?? {}) };
  const now = Math.max(x.now, cur['last-updated-ms']);
  const keep = keptSnapshots(cur.snapshots, { now, retainMs: retentionOf({ properties } as TableMetadata), removing: false, max: MAX_SNAPSHOTS });
  const kept = new Set(keep.map((k) => k['snapshot-id']));
  const expired = cur.snapshots.filter((e) => !kept.has(e['snapshot-id']));
  const same = expired.length === 0 && Object.keys(properties).length === Object.keys(cur.properties).length && Object.entries(properties).every(([k, v]) => cur.properties[k] === v);
  if (same) return undefined;
  const metadata: TableMetadata = {
    ...cur,
    'last-updated-ms': now,
    properties,
    snapshots: keep,
    'snapshot-log': cur['snapshot-log'].filter((l) => kept.has(l['snapshot-id'])),
    'metadata-log': [...cur['metadata-log'], { 'metadata-file': x.previousFile, 'timestamp-ms': cur['last-updated-ms'] }].slice(-MAX_PREVIOUS_METADATA),
  };
  return { metadata, expired };
}
