// Iceberg manifests and manifest lists (format version 2) as whole Avro object container files in memory.
// The schemas are those of the Iceberg table spec ("Manifests", "Manifest Entry Fields", "Data File Fields",
// "Manifest Lists"), written to Avro as its "Appendix A: Format-specific Requirements" asks: every field carries
// its Iceberg `field-id`, optional fields are unions with null defaulting to null, maps with int keys are arrays
// of key/value records with logical type `map`, lists carry their `element-id`. Record names follow the reference
// implementation (`r<field id>` for a nested struct, `k<key id>_v<value id>` for a map entry) so that a file
// reads the same in every implementation.
import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import avsc from 'avsc';
import { compareValues, encodeBound } from './bounds.js';

export interface PartitionField {
  fieldId: number;
  name: string;
  type: 'int' | 'long' | 'string';
} // identity partitions only

export interface DataFile {
  path: string; // absolute URI (file:///..., s3://...)
  recordCount: bigint;
  fileSizeInBytes: bigint;
  partition: Record<string, string | number | bigint | null>; // by PartitionField.name
  columnSizes?: Map<number, bigint>;
  valueCounts?: Map<number, bigint>;
  nullValueCounts?: Map<number, bigint>;
  lowerBounds?: Map<number, Buffer>;
  upperBounds?: Map<number, Buffer>;
}

export interface ManifestEntry {
  status: 0 | 1 | 2; // EXISTING, ADDED, DELETED
  snapshotId: bigint | null; // null: inherited (ADDED entries of the snapshot that writes the manifest)
  sequenceNumber: bigint | null;
  fileSequenceNumber: bigint | null;
  file: DataFile;
}

export interface ManifestHeader {
  schemaJson: string; // the Iceberg schema object as JSON text
  schemaId: number;
  partitionSpecId: number;
  partitionFields: PartitionField[]; // also gives the partition-spec JSON (source ids given separately below)
  partitionSourceIds: number[]; // source-id of each partition field, same order
}

export interface FieldSummary {
  containsNull: boolean;
  containsNan: boolean | null;
  lowerBound: Buffer | null;
  upperBound: Buffer | null;
}

export interface ManifestFile {
  path: string;
  length: bigint;
  partitionSpecId: number;
  content: 0 | 1;
  sequenceNumber: bigint;
  minSequenceNumber: bigint;
  addedSnapshotId: bigint;
  addedFilesCount: number;
  existingFilesCount: number;
  deletedFilesCount: number;
  addedRowsCount: bigint;
  existingRowsCount: bigint;
  deletedRowsCount: bigint;
  partitions: FieldSummary[] | null;
}

// ---------------------------------------------------------------------------------------------------------------
// Avro types

/** Avro longs as bigint both ways: Iceberg ids and counts are 64-bit and snapshot ids use all of it. */
const BIGINT_LONG = avsc.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(0),
  toBuffer: (n: unknown) => {
    if (typeof n !== 'bigint') throw new Error(`an Avro long is written from a bigint, not ${typeof n} ${String(n)}`);
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: (json: unknown) => BigInt(json as string | number),
  toJSON: (n: bigint) => n.toString(),
  isValid: (n: unknown) => typeof n === 'bigint' && n >= -(2n ** 63n) && n < 2n ** 63n,
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

/** Types made, by schema text: a table's commits write manifests of the same schema over and over. */
const TYPES = new Map<string, avsc.Type>();

function avroType(schema: object): avsc.Type {
  const text = JSON.stringify(schema);
  let type = TYPES.get(text);
  if (!type) {
    // A fresh registry each time: avsc adds the schema's named types to it.
    type = avsc.Type.forSchema(schema as avsc.Schema, { registry: { long: BIGINT_LONG }, wrapUnions: false });
    if (TYPES.size > 256) TYPES.clear();
    TYPES.set(text, type);
  }
  return type;
}

type AvroField = { name: string; type: unknown; 'field-id': number; default?: null };

function required(name: string, type: unknown, id: number): AvroField {
  return { name, type, 'field-id': id };
}

function optional(name: string, type: unknown, id: number): AvroField {
  return { name, type: ['null', type], default: null, 'field-id': id };
}

/** An Iceberg map with int keys: Avro has maps with string keys only. */
function intKeyMap(keyId: number, valueId: number, value: 'long' | 'bytes'): object {
  return {
    type: 'array',
    logicalType: 'map',
    items: {
      type: 'record',
      name: `k${keyId}_v${valueId}`,
      fields: [required('key', 'int', keyId), required('value', value, valueId)],
    },
  };
}

function list(elementId: number, items: unknown): object {
  return { type: 'array', items, 'element-id': elementId };
}

const AVRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The Avro schema of a v2 manifest's `manifest_entry` for a partition spec. */
export function manifestEntrySchema(partitionFields: PartitionField[]): object {
  for (const f of partitionFields) {
    // The reference implementation renames such fields; chainlake's partition names never need it.
    if (!AVRO_NAME.test(f.name)) throw new Error(`partition field ${JSON.stringify(f.name)} is not a valid Avro name`);
  }
  return {
    type: 'record',
    name: 'manifest_entry',
    fields: [
      required('status', 'int', 0),
      optional('snapshot_id', 'long', 1),
      optional('sequence_number', 'long', 3),
      optional('file_sequence_number', 'long', 4),
      required(
        'data_file',
        {
          type: 'record',
          name: 'r2',
          fields: [
            required('content', 'int', 134),
            required('file_path', 'string', 100),
            required('file_format', 'string', 101),
            required('partition', { type: 'record', name: 'r102', fields: partitionFields.map((f) => optional(f.name, f.type, f.fieldId)) }, 102),
            required('record_count', 'long', 103),
            required('file_size_in_bytes', 'long', 104),
            optional('column_sizes', intKeyMap(117, 118, 'long'), 108),
            optional('value_counts', intKeyMap(119, 120, 'long'), 109),
            optional('null_value_counts', intKeyMap(121, 122, 'long'), 110),
            optional('nan_value_counts', intKeyMap(138, 139, 'long'), 137),
            optional('lower_bounds', intKeyMap(126, 127, 'bytes'), 125),
            optional('upper_bounds', intKeyMap(129, 130, 'bytes'), 128),
            optional('key_metadata', 'bytes', 131),
            optional('split_offsets', list(133, 'long'), 132),
            optional('equality_ids', list(136, 'int'), 135),
            optional('sort_order_id', 'int', 140),
          ],
        },
        2,
      ),
    ],
  };
}

/** The Avro schema of a v2 manifest list's `manifest_file`. */
export function manifestFileSchema(): object {
  return {
    type: 'record',
    name: 'manifest_file',
    fields: [
      required('manifest_path', 'string', 500),
      required('manifest_length', 'long', 501),
      required('partition_spec_id', 'int', 502),
      required('content', 'int', 517),
      required('sequence_number', 'long', 515),
      required('min_sequence_number', 'long', 516),
      required('added_snapshot_id', 'long', 503),
      required('added_files_count', 'int', 504),
      required('existing_files_count', 'int', 505),
      required('deleted_files_count', 'int', 506),
      required('added_rows_count', 'long', 512),
      required('existing_rows_count', 'long', 513),
      required('deleted_rows_count', 'long', 514),
      optional(
        'partitions',
        list(508, {
          type: 'record',
          name: 'r508',
          fields: [
            required('contains_null', 'boolean', 509),
            optional('contains_nan', 'boolean', 518),
            optional('lower_bound', 'bytes', 510),
            optional('upper_bound', 'bytes', 511),
          ],
        }),
        507,
      ),
      optional('key_metadata', 'bytes', 519),
    ],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Object container files

const MAGIC = Buffer.from('Obj\x01', 'latin1');
const HEADER = avsc.Type.forSchema({
  type: 'record',
  name: 'org.apache.avro.file.Header',
  fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: 16 } },
  ],
});
const BLOCK = avsc.Type.forSchema({
  type: 'record',
  name: 'org.apache.avro.file.Block',
  fields: [
    { name: 'count', type: 'long' },
    { name: 'data', type: 'bytes' },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: 16 } },
  ],
});

/** Records are cut into blocks of about this many encoded bytes, Avro's usual sync interval. */
const BLOCK_BYTES = 64 * 1024;

/**
 * A whole Avro object container file. Manifests and manifest lists are written with codec null: they are
 * small, and some readers decode deflate as gzip rather than as Avro's raw RFC 1951 stream (icebird, for one,
 * never ends on raw deflate), so the uncompressed file is the one every reader takes. Reading takes deflate
 * too, for files written elsewhere (the reference implementation compresses by default).
 * The sync marker is a digest of the content instead of random bytes, so that the same manifest is the
 * same file (a retried commit rewrites identical bytes).
 */
export function writeContainer(schema: object, meta: Record<string, string>, records: unknown[], codec: 'null' | 'deflate' = 'null'): Buffer {
  const type = avroType(schema);
  const schemaJson = JSON.stringify(schema);
  const encoded = records.map((r) => type.toBuffer(r));
  const blocks: Buffer[][] = [];
  let current: Buffer[] = [];
  let size = 0;
  for (const e of encoded) {
    current.push(e);
    size += e.length;
    if (size >= BLOCK_BYTES) {
      blocks.push(current);
      current = [];
      size = 0;
    }
  }
  if (current.length > 0) blocks.push(current);

  const hash = createHash('sha256').update(schemaJson).update(JSON.stringify(meta)).update(codec);
  for (const e of encoded) hash.update(e);
  const sync = hash.digest().subarray(0, 16);

  const metaBytes: Record<string, Buffer> = { 'avro.schema': Buffer.from(schemaJson), 'avro.codec': Buffer.from(codec) };
  for (const [k, v] of Object.entries(meta)) metaBytes[k] = Buffer.from(v, 'utf8');
  const out = [HEADER.toBuffer({ magic: MAGIC, meta: metaBytes, sync })];
  for (const b of blocks) out.push(BLOCK.toBuffer({ count: b.length, data: codec === 'deflate' ? deflateRawSync(Buffer.concat(b)) : Buffer.concat(b), sync }));
  return Buffer.concat(out);
}

/** The key/value metadata and the records of an Avro object container file (codec null or deflate). */
export function readContainer(buf: Buffer): { metadata: Record<string, string>; records: unknown[] } {
  const head = HEADER.decode(buf, 0);
  if (head.offset < 0) throw new Error('not an Avro file: its header is cut short');
  const header = head.value as { magic: Buffer; meta: Record<string, Buffer>; sync: Buffer };
  if (!header.magic.equals(MAGIC)) throw new Error('not an Avro file: wrong magic bytes');
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(header.meta)) metadata[k] = v.toString('utf8');
  const schemaJson = metadata['avro.schema'];
  if (schemaJson === undefined) throw new Error('an Avro file without avro.schema');
  const codec = metadata['avro.codec'] ?? 'null';
  if (codec !== 'null' && codec !== 'deflate') throw new Error(`Avro codec ${codec} is not supported (null or deflate)`);
  const type = avroType(JSON.parse(schemaJson) as object);
  const records: unknown[] = [];
  let pos = head.offset;
  while (pos < buf.length) {
    const b = BLOCK.decode(buf, pos);
    if (b.offset < 0) throw new Error(`the Avro block at byte ${pos} is cut short`);
    const block = b.value as { count: number; data: Buffer; sync: Buffer };
    if (!block.sync.equals(header.sync)) throw new Error(`the Avro block at byte ${pos} does not end with the file's sync marker`);
    const data = codec === 'deflate' ? inflateRawSync(block.data) : block.data;
    let at = 0;
    for (let i = 0; i < block.count; i++) {
      const r = type.decode(data, at);
      if (r.offset < 0) throw new Error(`the Avro block at byte ${pos} holds fewer than its ${block.count} records`);
      records.push(r.value);
      at = r.offset;
    }
    if (at !== data.length) throw new Error(`the Avro block at byte ${pos} has bytes after its ${block.count} records`);
    pos = b.offset;
  }
  return { metadata, records };
}

// ---------------------------------------------------------------------------------------------------------------
// Manifests

type KeyValue<V> = Array<{ key: number; value: V }>;

function mapOut<V>(m: Map<number, V> | undefined): KeyValue<V> | null {
  if (m === undefined) return null;
  // By key, so that the bytes do not depend on the order a map was filled in.
  return [...m.entries()].sort(([a], [b]) => a - b).map(([key, value]) => ({ key, value }));
}

function mapIn<V>(a: KeyValue<V> | null | undefined): Map<number, V> | undefined {
  return a == null ? undefined : new Map(a.map((kv) => [kv.key, kv.value]));
}

function partitionValue(f: PartitionField, v: string | number | bigint | null | undefined): string | number | bigint | null {
  if (v === undefined) throw new Error(`the partition has no value for field ${f.name} (null is written as null)`);
  if (v === null) return null;
  const bad = () => new Error(`partition field ${f.name} (${f.type}) cannot hold ${typeof v} ${String(v)}`);
  switch (f.type) {
    case 'string':
      if (typeof v !== 'string') throw bad();
      return v;
    case 'int':
      if (typeof v === 'bigint' && v >= -(2n ** 31n) && v < 2n ** 31n) return Number(v);
      if (typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31) return v;
      throw bad();
    case 'long':
      if (typeof v === 'bigint') return v;
      if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
      throw bad();
  }
}

/** The partition-spec JSON of a manifest's metadata: only the fields array (spec "Manifests"). */
function partitionSpecJson(fields: PartitionField[], sourceIds: number[]): string {
  if (sourceIds.length !== fields.length) throw new Error(`${fields.length} partition fields but ${sourceIds.length} source ids`);
  return JSON.stringify(fields.map((f, i) => ({ name: f.name, transform: 'identity', 'source-id': sourceIds[i], 'field-id': f.fieldId })));
}

export function writeManifest(h: ManifestHeader, entries: ManifestEntry[]): Buffer {
  const names = new Set(h.partitionFields.map((f) => f.name));
  const records = entries.map((e) => {
    const f = e.file;
    for (const k of Object.keys(f.partition)) if (!names.has(k)) throw new Error(`the partition of ${f.path} has ${k}, not a field of the spec`);
    const partition: Record<string, unknown> = {};
    for (const p of h.partitionFields) partition[p.name] = partitionValue(p, f.partition[p.name]);
    return {
      status: e.status,
      snapshot_id: e.snapshotId,
      sequence_number: e.sequenceNumber,
      file_sequence_number: e.fileSequenceNumber,
      data_file: {
        content: 0, // data, not deletes: chainlake only appends and replaces files
        file_path: f.path,
        // Upper case as the reference implementation and pyiceberg write it; readers take either case.
        file_format: 'PARQUET',
        partition,
        record_count: f.recordCount,
        file_size_in_bytes: f.fileSizeInBytes,
        column_sizes: mapOut(f.columnSizes),
        value_counts: mapOut(f.valueCounts),
        null_value_counts: mapOut(f.nullValueCounts),
        nan_value_counts: null,
        lower_bounds: mapOut(f.lowerBounds),
        upper_bounds: mapOut(f.upperBounds),
        key_metadata: null,
        split_offsets: null,
        equality_ids: null,
        sort_order_id: null,
      },
    };
  });
  const meta = {
    schema: h.schemaJson,
    'schema-id': String(h.schemaId),
    'partition-spec': partitionSpecJson(h.partitionFields, h.partitionSourceIds),
    'partition-spec-id': String(h.partitionSpecId),
    'format-version': '2',
    content: 'data',
  };
  return writeContainer(manifestEntrySchema(h.partitionFields), meta, records);
}

interface EntryRecord {
  status: number;
  snapshot_id?: bigint | null;
  sequence_number?: bigint | null;
  file_sequence_number?: bigint | null;
  data_file: {
    content?: number;
    file_path: string;
    partition: Record<string, string | number | bigint | null>;
    record_count: bigint;
    file_size_in_bytes: bigint;
    column_sizes?: KeyValue<bigint> | null;
    value_counts?: KeyValue<bigint> | null;
    null_value_counts?: KeyValue<bigint> | null;
    lower_bounds?: KeyValue<Buffer> | null;
    upper_bounds?: KeyValue<Buffer> | null;
  };
}

export function readManifest(buf: Buffer): { metadata: Record<string, string>; entries: ManifestEntry[] } {
  const { metadata, records } = readContainer(buf);
  if (metadata['content'] !== undefined && metadata['content'] !== 'data') throw new Error(`a manifest of ${metadata['content']}, not data files`);
  const entries = (records as EntryRecord[]).map((r): ManifestEntry => {
    const d = r.data_file;
    if (r.status !== 0 && r.status !== 1 && r.status !== 2) throw new Error(`manifest entry status ${r.status} is none of 0, 1, 2`);
    if ((d.content ?? 0) !== 0) throw new Error(`${d.file_path} holds deletes (content ${d.content}), not data`);
    const file: DataFile = {
      path: d.file_path,
      recordCount: d.record_count,
      fileSizeInBytes: d.file_size_in_bytes,
      partition: { ...d.partition },
    };
    const maps = {
      columnSizes: mapIn(d.column_sizes),
      valueCounts: mapIn(d.value_counts),
      nullValueCounts: mapIn(d.null_value_counts),
      lowerBounds: mapIn(d.lower_bounds),
      upperBounds: mapIn(d.upper_bounds),
    };
    for (const [k, v] of Object.entries(maps)) if (v !== undefined) Object.assign(file, { [k]: v });
    return {
      status: r.status,
      snapshotId: r.snapshot_id ?? null,
      sequenceNumber: r.sequence_number ?? null,
      fileSequenceNumber: r.file_sequence_number ?? null,
      file,
    };
  });
  return { metadata, entries };
}

// ---------------------------------------------------------------------------------------------------------------
// Manifest lists

export function writeManifestList(o: { snapshotId: bigint; parentSnapshotId: bigint | null; sequenceNumber: bigint }, manifests: ManifestFile[]): Buffer {
  const records = manifests.map((m) => ({
    manifest_path: m.path,
    manifest_length: m.length,
    partition_spec_id: m.partitionSpecId,
    content: m.content,
    sequence_number: m.sequenceNumber,
    min_sequence_number: m.minSequenceNumber,
    added_snapshot_id: m.addedSnapshotId,
    added_files_count: m.addedFilesCount,
    existing_files_count: m.existingFilesCount,
    deleted_files_count: m.deletedFilesCount,
    added_rows_count: m.addedRowsCount,
    existing_rows_count: m.existingRowsCount,
    deleted_rows_count: m.deletedRowsCount,
    partitions:
      m.partitions === null
        ? null
        : m.partitions.map((s) => ({ contains_null: s.containsNull, contains_nan: s.containsNan, lower_bound: s.lowerBound, upper_bound: s.upperBound })),
    key_metadata: null,
  }));
  const meta = {
    'snapshot-id': String(o.snapshotId),
    // "null" for a first snapshot, as the reference implementation writes it.
    'parent-snapshot-id': o.parentSnapshotId === null ? 'null' : String(o.parentSnapshotId),
    'sequence-number': String(o.sequenceNumber),
    'format-version': '2',
  };
  return writeContainer(manifestFileSchema(), meta, records);
}

interface ManifestFileRecord {
  manifest_path: string;
  manifest_length: bigint;
  partition_spec_id: number;
  content: number;
  sequence_number: bigint;
  min_sequence_number: bigint;
  added_snapshot_id: bigint;
  added_files_count: number;
  existing_files_count: number;
  deleted_files_count: number;
  added_rows_count: bigint;
  existing_rows_count: bigint;
  deleted_rows_count: bigint;
  partitions?: Array<{ contains_null: boolean; contains_nan?: boolean | null; lower_bound?: Buffer | null; upper_bound?: Buffer | null }> | null;
}

export function readManifestList(buf: Buffer): ManifestFile[] {
  return (readContainer(buf).records as ManifestFileRecord[]).map((r) => {
    if (r.content !== 0 && r.content !== 1) throw new Error(`manifest ${r.manifest_path} has content ${r.content}, neither data (0) nor deletes (1)`);
    return {
      path: r.manifest_path,
      length: r.manifest_length,
      partitionSpecId: r.partition_spec_id,
      content: r.content,
      sequenceNumber: r.sequence_number,
      minSequenceNumber: r.min_sequence_number,
      addedSnapshotId: r.added_snapshot_id,
      addedFilesCount: r.added_files_count,
      existingFilesCount: r.existing_files_count,
      deletedFilesCount: r.deleted_files_count,
      addedRowsCount: r.added_rows_count,
      existingRowsCount: r.existing_rows_count,
      deletedRowsCount: r.deleted_rows_count,
      partitions:
        r.partitions == null
          ? null
          : r.partitions.map((s) => ({
              containsNull: s.contains_null,
              containsNan: s.contains_nan ?? null,
              lowerBound: s.lower_bound ?? null,
              upperBound: s.upper_bound ?? null,
            })),
    };
  });
}

/** The summaries of a manifest's partition fields from its entries (bounds as in bounds.ts). */
export function partitionSummaries(fields: PartitionField[], entries: ManifestEntry[]): FieldSummary[] {
  return fields.map((f) => {
    let containsNull = false;
    let min: string | number | bigint | null = null;
    let max: string | number | bigint | null = null;
    for (const e of entries) {
      const v = partitionValue(f, e.file.partition[f.name]);
      if (v === null) {
        containsNull = true;
        continue;
      }
      if (min === null || compareValues(v, min) < 0) min = v;
      if (max === null || compareValues(v, max) > 0) max = v;
    }
    return {
      containsNull,
      // int, long and string have no NaN; false (not null) says so, as the reference implementation does.
      containsNan: false,
      // Partition values are whole (identity), never truncated like column bounds.
      lowerBound: min === null ? null : encodeBound(f.type, min),
      upperBound: max === null ? null : encodeBound(f.type, max),
    };
  });
}
