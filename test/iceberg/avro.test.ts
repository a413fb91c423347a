import avsc from 'avsc';
import { avroMetadata } from 'icebird/src/avro/avro.metadata.js';
import { avroRead } from 'icebird/src/avro/avro.read.js';
import { describe, expect, it } from 'vitest';
import {
  type DataFile,
  type ManifestEntry,
  type ManifestFile,
  type ManifestHeader,
  type PartitionField,
  manifestEntrySchema,
  partitionSummaries,
  readContainer,
  readManifest,
  readManifestList,
  writeContainer,
  writeManifest,
  writeManifestList,
} from '../../src/iceberg/avro.js';
import { encodeBound } from '../../src/iceberg/bounds.js';
import { seeded } from '../random.js';

// ---------------------------------------------------------------------------------------------------------------
// The spec's tables, written out here from the Iceberg table spec (format version 2 columns), sections
// "Manifest Entry Fields", "Data File Fields" (the fields chainlake writes: the deprecated and v3-only ones are
// not written in v2), "Manifest Lists" (manifest_file and field_summary). [field id, name, type, required]

type Row = [number, string, string, boolean];

const MANIFEST_ENTRY: Row[] = [
  [0, 'status', 'int', true],
  [1, 'snapshot_id', 'long', false],
  [3, 'sequence_number', 'long', false],
  [4, 'file_sequence_number', 'long', false],
  [2, 'data_file', 'struct', true],
];

const DATA_FILE: Row[] = [
  [134, 'content', 'int', true],
  [100, 'file_path', 'string', true],
  [101, 'file_format', 'string', true],
  [102, 'partition', 'struct', true],
  [103, 'record_count', 'long', true],
  [104, 'file_size_in_bytes', 'long', true],
  [108, 'column_sizes', 'map<117: int, 118: long>', false],
  [109, 'value_counts', 'map<119: int, 120: long>', false],
  [110, 'null_value_counts', 'map<121: int, 122: long>', false],
  [137, 'nan_value_counts', 'map<138: int, 139: long>', false],
  [125, 'lower_bounds', 'map<126: int, 127: binary>', false],
  [128, 'upper_bounds', 'map<129: int, 130: binary>', false],
  [131, 'key_metadata', 'binary', false],
  [132, 'split_offsets', 'list<133: long>', false],
  [135, 'equality_ids', 'list<136: int>', false],
  [140, 'sort_order_id', 'int', false],
];

const MANIFEST_FILE: Row[] = [
  [500, 'manifest_path', 'string', true],
  [501, 'manifest_length', 'long', true],
  [502, 'partition_spec_id', 'int', true],
  [517, 'content', 'int', true],
  [515, 'sequence_number', 'long', true],
  [516, 'min_sequence_number', 'long', true],
  [503, 'added_snapshot_id', 'long', true],
  [504, 'added_files_count', 'int', true],
  [505, 'existing_files_count', 'int', true],
  [506, 'deleted_files_count', 'int', true],
  [512, 'added_rows_count', 'long', true],
  [513, 'existing_rows_count', 'long', true],
  [514, 'deleted_rows_count', 'long', true],
  [507, 'partitions', 'list<508: struct>', false],
  [519, 'key_metadata', 'binary', false],
];

const FIELD_SUMMARY: Row[] = [
  [509, 'contains_null', 'boolean', true],
  [518, 'contains_nan', 'boolean', false],
  [510, 'lower_bound', 'binary', false],
  [511, 'upper_bound', 'binary', false],
];

// ---------------------------------------------------------------------------------------------------------------
// Reading the Avro schema back as Iceberg types, per the spec's "Appendix A: Format-specific Requirements" (Avro).

interface AvroField {
  name: string;
  type: unknown;
  'field-id'?: number;
  default?: unknown;
}
type AvroRecord = { type: 'record'; name: string; fields: AvroField[] };

/** The Iceberg type an Avro type stands for (required or not is the field's business). */
function icebergType(t: unknown): string {
  if (typeof t === 'string') return t === 'bytes' ? 'binary' : t;
  const o = t as { type: string; logicalType?: string; items?: unknown; 'element-id'?: number; fields?: AvroField[] };
  if (o.type === 'record') return 'struct';
  if (o.type === 'array' && o.logicalType === 'map') {
    const item = o.items as AvroRecord;
    expect(item.fields.map((f) => f.name)).toEqual(['key', 'value']);
    const [k, v] = item.fields as [AvroField, AvroField];
    // Map keys and (in manifests) values are required: no union with null.
    expect(Array.isArray(k.type) || Array.isArray(v.type)).toBe(false);
    return `map<${k['field-id']}: ${icebergType(k.type)}, ${v['field-id']}: ${icebergType(v.type)}>`;
  }
  if (o.type === 'array') {
    expect(Array.isArray(o.items)).toBe(false);
    return `list<${o['element-id']}: ${icebergType(o.items)}>`;
  }
  throw new Error(`unexpected Avro type ${JSON.stringify(t)}`);
}

function rows(record: AvroRecord): Row[] {
  return record.fields.map((f) => {
    const optional = Array.isArray(f.type);
    if (optional) {
      // The only union Iceberg allows, with null first so that the default can be null.
      expect(f.type).toHaveLength(2);
      expect((f.type as unknown[])[0]).toBe('null');
      expect(f).toHaveProperty('default', null);
    }
    return [f['field-id']!, f.name, icebergType(optional ? (f.type as unknown[])[1] : f.type), !optional];
  });
}

function field(record: AvroRecord, name: string): unknown {
  const f = record.fields.find((x) => x.name === name)!;
  return Array.isArray(f.type) ? f.type[1] : f.type;
}

/** An independent reader's view of a file: icebird's Avro decoder, on a DataView as its fetch does it. */
function icebird(buf: Buffer): { metadata: Record<string, unknown>; records: Record<string, unknown>[] } {
  const reader = { view: new DataView(buf.buffer, buf.byteOffset, buf.byteLength), offset: 0 };
  const { metadata, syncMarker } = avroMetadata(reader);
  return { metadata, records: avroRead({ reader, metadata, syncMarker }) };
}

// ---------------------------------------------------------------------------------------------------------------
// Fixtures

const FIELDS: PartitionField[] = [
  { fieldId: 1000, name: 'block_date', type: 'string' },
  { fieldId: 1001, name: 'chain_id', type: 'long' },
  { fieldId: 1002, name: 'shard', type: 'int' },
];

const SCHEMA_JSON = JSON.stringify({
  type: 'struct',
  'schema-id': 3,
  fields: [
    { id: 1, name: 'block_date', required: true, type: 'string' },
    { id: 2, name: 'chain_id', required: false, type: 'long' },
    { id: 3, name: 'shard', required: false, type: 'int' },
    { id: 4, name: 'amount', required: false, type: 'decimal(38, 0)' },
  ],
});

const HEADER: ManifestHeader = { schemaJson: SCHEMA_JSON, schemaId: 3, partitionSpecId: 2, partitionFields: FIELDS, partitionSourceIds: [1, 2, 3] };

const MAX_LONG = 2n ** 63n - 1n;

function dataFile(i: number, partition: DataFile['partition'], full: boolean): DataFile {
  const f: DataFile = { path: `s3://lake/t/data/block_date=x/${i}-ü😀.parquet`, recordCount: BigInt(i) * 1000n + 1n, fileSizeInBytes: MAX_LONG - BigInt(i), partition };
  if (!full) return f;
  return {
    ...f,
    columnSizes: new Map([[1, 10n + BigInt(i)], [4, 2n ** 40n]]),
    valueCounts: new Map([[1, 5n], [2, 5n], [4, 5n]]),
    nullValueCounts: new Map([[2, 0n], [4, 2n ** 62n]]),
    lowerBounds: new Map([[1, encodeBound('string', '2024-01-01')], [4, encodeBound({ decimal: [38, 0] }, -(10n ** 37n))]]),
    upperBounds: new Map([[1, encodeBound('string', '2024-01-0😀')], [2, encodeBound('long', -1n)]]),
  };
}

const ENTRIES: ManifestEntry[] = [
  // An added file of the snapshot writing the manifest: ids and sequence numbers inherited.
  { status: 1, snapshotId: null, sequenceNumber: null, fileSequenceNumber: null, file: dataFile(1, { block_date: '2024-01-01', chain_id: 43114n, shard: 7 }, true) },
  // Existing and deleted entries carry all three explicitly, at the far ends of a long.
  { status: 0, snapshotId: MAX_LONG, sequenceNumber: 1n, fileSequenceNumber: 2n, file: dataFile(2, { block_date: '2023-12-31', chain_id: -(2n ** 63n), shard: -(2 ** 31) }, false) },
  { status: 2, snapshotId: 5n, sequenceNumber: 0n, fileSequenceNumber: MAX_LONG, file: dataFile(3, { block_date: null, chain_id: null, shard: null }, true) },
];

/** What a reader gives back: partition longs as bigint whichever way they were given. */
function asRead(e: ManifestEntry): ManifestEntry {
  const partition = { ...e.file.partition };
  for (const f of FIELDS) if (f.type === 'long' && typeof partition[f.name] === 'number') partition[f.name] = BigInt(partition[f.name] as number);
  return { ...e, file: { ...e.file, partition } };
}

const MANIFESTS: ManifestFile[] = [
  {
    path: 's3://lake/t/metadata/a-m0.avro',
    length: 7021n,
    partitionSpecId: 2,
    content: 0,
    sequenceNumber: 9n,
    minSequenceNumber: 1n,
    addedSnapshotId: MAX_LONG,
    addedFilesCount: 1,
    existingFilesCount: 1,
    deletedFilesCount: 1,
    addedRowsCount: 1001n,
    existingRowsCount: 2n ** 40n,
    deletedRowsCount: 3001n,
    partitions: partitionSummaries(FIELDS, ENTRIES),
  },
  {
    path: 'file:///tmp/lake/t/metadata/b-m1.avro',
    length: 1n,
    partitionSpecId: 0,
    content: 1,
    sequenceNumber: 0n,
    minSequenceNumber: 0n,
    addedSnapshotId: 1n,
    addedFilesCount: 0,
    existingFilesCount: 2 ** 31 - 1,
    deletedFilesCount: 0,
    addedRowsCount: 0n,
    existingRowsCount: 0n,
    deletedRowsCount: 0n,
    partitions: null,
  },
  {
    path: 's3://lake/t/metadata/c-m2.avro',
    length: 2n,
    partitionSpecId: 1,
    content: 0,
    sequenceNumber: 3n,
    minSequenceNumber: 3n,
    addedSnapshotId: 77n,
    addedFilesCount: 3,
    existingFilesCount: 0,
    deletedFilesCount: 0,
    addedRowsCount: 3n,
    existingRowsCount: 0n,
    deletedRowsCount: 0n,
    partitions: [{ containsNull: true, containsNan: null, lowerBound: null, upperBound: null }, { containsNull: false, containsNan: true, lowerBound: Buffer.from([]), upperBound: Buffer.from([0, 255]) }],
  },
];

// ---------------------------------------------------------------------------------------------------------------

describe('a manifest', () => {
  const buf = writeManifest(HEADER, ENTRIES);

  it('has the schema of the spec, field by field (read from the file header by an independent reader)', () => {
    const schema = icebird(buf).metadata['avro.schema'] as AvroRecord;
    expect(schema.name).toBe('manifest_entry');
    expect(rows(schema)).toEqual(MANIFEST_ENTRY);
    const dataFileRecord = field(schema, 'data_file') as AvroRecord;
    expect(rows(dataFileRecord)).toEqual(DATA_FILE);
    // The partition tuple: the spec's partition field ids and types, every field optional.
    expect(rows(field(dataFileRecord, 'partition') as AvroRecord)).toEqual([
      [1000, 'block_date', 'string', false],
      [1001, 'chain_id', 'long', false],
      [1002, 'shard', 'int', false],
    ]);
    // Record names as the reference implementation gives them.
    expect((dataFileRecord as { name: string }).name).toBe('r2');
    expect((field(dataFileRecord, 'partition') as AvroRecord).name).toBe('r102');
    expect(((field(dataFileRecord, 'column_sizes') as { items: AvroRecord }).items).name).toBe('k117_v118');
  });

  it('carries the key/value metadata the spec requires of a v2 manifest', () => {
    const { metadata } = readManifest(buf);
    expect(metadata).toMatchObject({
      schema: SCHEMA_JSON,
      'schema-id': '3',
      'partition-spec-id': '2',
      'format-version': '2',
      content: 'data',
      'avro.codec': 'null',
    });
    expect(JSON.parse(metadata['partition-spec']!)).toEqual([
      { name: 'block_date', transform: 'identity', 'source-id': 1, 'field-id': 1000 },
      { name: 'chain_id', transform: 'identity', 'source-id': 2, 'field-id': 1001 },
      { name: 'shard', transform: 'identity', 'source-id': 3, 'field-id': 1002 },
    ]);
    expect(icebird(buf).metadata['schema']).toEqual(JSON.parse(SCHEMA_JSON));
  });

  it('reads back as written', () => {
    expect(readManifest(buf).entries).toEqual(ENTRIES.map(asRead));
  });

  it('takes a long partition value given as a number and reads it back as bigint', () => {
    const e: ManifestEntry = { ...ENTRIES[0]!, file: { ...ENTRIES[0]!.file, partition: { block_date: 'd', chain_id: 43114, shard: 1n } } };
    expect(readManifest(writeManifest(HEADER, [e])).entries[0]!.file.partition).toEqual({ block_date: 'd', chain_id: 43114n, shard: 1 });
  });

  it('decodes with the same values in an independent reader (icebird), maps and bigint longs included', () => {
    const { records } = icebird(buf);
    expect(records).toHaveLength(ENTRIES.length);
    const kv = <V>(m: Map<number, V> | undefined) => (m === undefined ? undefined : [...m].sort(([a], [b]) => a - b).map(([key, value]) => ({ key, value })));
    const bytes = (m: Map<number, Buffer> | undefined) => kv(m)?.map(({ key, value }) => ({ key, value: new Uint8Array(value) }));
    records.forEach((r, i) => {
      const e = ENTRIES[i]!;
      const d = r['data_file'] as Record<string, unknown>;
      // icebird reads null as undefined.
      expect(r).toMatchObject({ status: e.status });
      expect(r['snapshot_id']).toBe(e.snapshotId ?? undefined);
      expect(r['sequence_number']).toBe(e.sequenceNumber ?? undefined);
      expect(r['file_sequence_number']).toBe(e.fileSequenceNumber ?? undefined);
      expect(d['content']).toBe(0);
      expect(d['file_path']).toBe(e.file.path);
      expect(d['file_format']).toBe('PARQUET');
      expect(d['record_count']).toBe(e.file.recordCount);
      expect(d['file_size_in_bytes']).toBe(e.file.fileSizeInBytes);
      const p = e.file.partition;
      expect(d['partition']).toEqual({ block_date: p['block_date'] ?? undefined, chain_id: p['chain_id'] ?? undefined, shard: p['shard'] ?? undefined });
      expect(d['column_sizes']).toEqual(kv(e.file.columnSizes));
      expect(d['value_counts']).toEqual(kv(e.file.valueCounts));
      expect(d['null_value_counts']).toEqual(kv(e.file.nullValueCounts));
      expect(d['lower_bounds']).toEqual(bytes(e.file.lowerBounds));
      expect(d['upper_bounds']).toEqual(bytes(e.file.upperBounds));
      for (const absent of ['nan_value_counts', 'key_metadata', 'split_offsets', 'equality_ids', 'sort_order_id']) expect(d[absent]).toBeUndefined();
    });
  });

  it('with no partition fields and no entries is still a valid file', () => {
    const empty = writeManifest({ ...HEADER, partitionFields: [], partitionSourceIds: [] }, []);
    expect(readManifest(empty).entries).toEqual([]);
    expect(icebird(empty).records).toEqual([]);
    expect(readManifest(empty).metadata['partition-spec']).toBe('[]');
    const one = writeManifest({ ...HEADER, partitionFields: [], partitionSourceIds: [] }, [{ ...ENTRIES[0]!, file: { ...ENTRIES[0]!.file, partition: {} } }]);
    expect(readManifest(one).entries[0]!.file.partition).toEqual({});
    expect((icebird(one).records[0]!['data_file'] as Record<string, unknown>)['partition']).toEqual({});
  });

  it('spreads many entries over several blocks, and both readers read them all in order', () => {
    const random = seeded(99);
    const many: ManifestEntry[] = Array.from({ length: 2000 }, (_, i) => ({
      status: (i % 3) as 0 | 1 | 2,
      snapshotId: i % 3 === 1 ? null : BigInt.asIntN(64, BigInt(Math.floor(random() * 2 ** 52)) << 11n),
      sequenceNumber: i % 3 === 1 ? null : BigInt(i),
      fileSequenceNumber: i % 3 === 1 ? null : BigInt(i),
      file: dataFile(i, { block_date: `2024-01-${i}`, chain_id: BigInt(i), shard: i % 5 === 0 ? null : i }, i % 2 === 0),
    }));
    const big = writeManifest(HEADER, many);
    const sync = icebird(big);
    const { syncMarker } = avroMetadata({ view: new DataView(big.buffer, big.byteOffset, big.byteLength), offset: 0 });
    let markers = 0;
    for (let at = big.indexOf(Buffer.from(syncMarker)); at >= 0; at = big.indexOf(Buffer.from(syncMarker), at + 1)) markers++;
    expect(markers).toBeGreaterThan(3); // the header's and one per block
    expect(readManifest(big).entries).toEqual(many.map(asRead));
    expect(sync.records.map((r) => (r['data_file'] as Record<string, unknown>)['file_path'])).toEqual(many.map((e) => e.file.path));
    expect(sync.records.map((r) => r['snapshot_id'])).toEqual(many.map((e) => e.snapshotId ?? undefined));
  });

  it('is the same bytes for the same content, and another file (and sync marker) for other content', () => {
    expect(writeManifest(HEADER, ENTRIES).equals(buf)).toBe(true);
    const other = writeManifest(HEADER, ENTRIES.slice(1));
    expect(other.equals(buf)).toBe(false);
    const head = (b: Buffer) => avroMetadata({ view: new DataView(b.buffer, b.byteOffset, b.byteLength), offset: 0 }).syncMarker;
    expect(Buffer.from(head(other)).equals(Buffer.from(head(buf)))).toBe(false);
  });

  it('refuses partitions that do not fit the spec', () => {
    const withPartition = (partition: DataFile['partition']) => [{ ...ENTRIES[0]!, file: { ...ENTRIES[0]!.file, partition } }];
    expect(() => writeManifest(HEADER, withPartition({ block_date: 'd', chain_id: 1n }))).toThrow(/no value for field shard/);
    expect(() => writeManifest(HEADER, withPartition({ block_date: 'd', chain_id: 1n, shard: 1, extra: 1 }))).toThrow(/has extra, not a field of the spec/);
    expect(() => writeManifest(HEADER, withPartition({ block_date: 1, chain_id: 1n, shard: 1 }))).toThrow(/block_date \(string\) cannot hold number/);
    expect(() => writeManifest(HEADER, withPartition({ block_date: 'd', chain_id: 1.5, shard: 1 }))).toThrow(/chain_id \(long\) cannot hold/);
    expect(() => writeManifest(HEADER, withPartition({ block_date: 'd', chain_id: 1n, shard: 2 ** 31 }))).toThrow(/shard \(int\) cannot hold/);
    expect(() => writeManifest({ ...HEADER, partitionSourceIds: [1] }, ENTRIES)).toThrow(/3 partition fields but 1 source ids/);
    expect(() => writeManifest({ ...HEADER, partitionFields: [{ fieldId: 1000, name: 'block-date', type: 'string' }], partitionSourceIds: [1] }, [])).toThrow(/not a valid Avro name/);
    expect(() => writeManifest(HEADER, [{ ...ENTRIES[0]!, file: { ...ENTRIES[0]!.file, recordCount: 5 as unknown as bigint } }])).toThrow();
  });

  it('refuses a damaged file', () => {
    expect(() => readManifest(buf.subarray(0, 10))).toThrow(/header is cut short/);
    expect(() => readManifest(buf.subarray(0, buf.length - 20))).toThrow(/cut short/);
    const wrongSync = Buffer.from(buf);
    wrongSync[wrongSync.length - 1]! ^= 0xff;
    expect(() => readManifest(wrongSync)).toThrow(/sync marker/);
    const wrongMagic = Buffer.from(buf);
    wrongMagic[0] = 0x50;
    expect(() => readManifest(wrongMagic)).toThrow(/magic/);
  });

  it('refuses a manifest of delete files', () => {
    const schema = manifestEntrySchema([]);
    const record = { status: 1, snapshot_id: null, sequence_number: null, file_sequence_number: null, data_file: { content: 1, file_path: 'x', file_format: 'PARQUET', partition: {}, record_count: 1n, file_size_in_bytes: 1n } };
    expect(() => readManifest(writeContainer(schema, { content: 'deletes' }, []))).toThrow(/manifest of deletes/);
    expect(() => readManifest(writeContainer(schema, { content: 'data' }, [record]))).toThrow(/holds deletes \(content 1\)/);
  });
});

describe('an Avro container file with codec deflate (written elsewhere)', () => {
  /** A bigint long for avsc, written here separately from the module's. */
  const longType = avsc.types.LongType.__with({
    fromBuffer: (b: Buffer) => b.readBigInt64LE(0),
    toBuffer: (n: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigInt64LE(n);
      return b;
    },
    fromJSON: BigInt,
    toJSON: String,
    isValid: (n: unknown) => typeof n === 'bigint',
    compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
  });
  const parse = (s: unknown) => avsc.Type.forSchema(s as avsc.Schema, { registry: { long: longType }, wrapUnions: false });

  /** avsc's own container encoder: another writer's blocks, sync marker and deflate. */
  async function avscFile(schema: object, meta: Record<string, string>, records: unknown[]): Promise<Buffer> {
    const metadata = Object.fromEntries(Object.entries(meta).map(([k, v]) => [k, Buffer.from(v)]));
    const encoder = new avsc.streams.BlockEncoder(parse(schema), { codec: 'deflate', blockSize: 256, metadata } as never);
    const chunks: Buffer[] = [];
    encoder.on('data', (c: Buffer) => chunks.push(c));
    const done = new Promise((resolve, reject) => encoder.on('end', resolve).on('error', reject));
    for (const r of records) encoder.write(r);
    encoder.end();
    await done;
    return Buffer.concat(chunks);
  }

  async function avscRead(buf: Buffer): Promise<unknown[]> {
    const decoder = new avsc.streams.BlockDecoder({ parseHook: parse });
    const out: unknown[] = [];
    decoder.on('data', (r: unknown) => out.push(r));
    const done = new Promise((resolve, reject) => decoder.on('end', resolve).on('error', reject));
    decoder.end(buf);
    await done;
    return out;
  }

  it('reads a manifest that avsc wrote with deflate in many blocks', async () => {
    const mine = readContainer(writeManifest(HEADER, ENTRIES));
    const meta = Object.fromEntries(Object.entries(mine.metadata).filter(([k]) => !k.startsWith('avro.')));
    const theirs = await avscFile(manifestEntrySchema(FIELDS), meta, [...mine.records, ...mine.records, ...mine.records]);
    expect(readContainer(theirs).metadata['avro.codec']).toBe('deflate');
    expect(readManifest(theirs).entries).toEqual([...ENTRIES, ...ENTRIES, ...ENTRIES].map(asRead));
  });

  it('writes deflate that avsc reads back', async () => {
    const { records } = readContainer(writeManifest(HEADER, ENTRIES));
    const deflated = writeContainer(manifestEntrySchema(FIELDS), { content: 'data' }, records, 'deflate');
    expect(await avscRead(deflated)).toEqual(records);
    expect(readContainer(deflated).records).toEqual(records);
  });
});

describe('a manifest list', () => {
  const buf = writeManifestList({ snapshotId: MAX_LONG, parentSnapshotId: 12n, sequenceNumber: 9n }, MANIFESTS);

  it('has the schema of the spec, field by field', () => {
    const schema = icebird(buf).metadata['avro.schema'] as AvroRecord;
    expect(schema.name).toBe('manifest_file');
    expect(rows(schema)).toEqual(MANIFEST_FILE);
    const summary = (field(schema, 'partitions') as { items: AvroRecord }).items;
    expect(summary.name).toBe('r508');
    expect(rows(summary)).toEqual(FIELD_SUMMARY);
  });

  it('carries the snapshot in its metadata, "null" for a first snapshot as the reference implementation writes it', () => {
    expect(readContainer(buf).metadata).toMatchObject({ 'snapshot-id': String(MAX_LONG), 'parent-snapshot-id': '12', 'sequence-number': '9', 'format-version': '2' });
    const first = writeManifestList({ snapshotId: 1n, parentSnapshotId: null, sequenceNumber: 1n }, []);
    expect(readContainer(first).metadata['parent-snapshot-id']).toBe('null');
    expect(readManifestList(first)).toEqual([]);
  });

  it('reads back as written', () => {
    expect(readManifestList(buf)).toEqual(MANIFESTS);
  });

  it('decodes with the same values in icebird', () => {
    const { records } = icebird(buf);
    const u8 = (b: Buffer | null) => (b === null ? undefined : new Uint8Array(b));
    expect(records).toEqual(
      MANIFESTS.map((m) => ({
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
        partitions: m.partitions?.map((s) => ({ contains_null: s.containsNull, contains_nan: s.containsNan ?? undefined, lower_bound: u8(s.lowerBound), upper_bound: u8(s.upperBound) })),
        key_metadata: undefined,
      })),
    );
  });
});

describe('partitionSummaries', () => {
  it('gives the least and greatest value of each field, and whether one was null', () => {
    expect(partitionSummaries(FIELDS, ENTRIES)).toEqual([
      { containsNull: true, containsNan: false, lowerBound: encodeBound('string', '2023-12-31'), upperBound: encodeBound('string', '2024-01-01') },
      { containsNull: true, containsNan: false, lowerBound: encodeBound('long', -(2n ** 63n)), upperBound: encodeBound('long', 43114n) },
      { containsNull: true, containsNan: false, lowerBound: encodeBound('int', -(2 ** 31)), upperBound: encodeBound('int', 7) },
    ]);
  });

  it('orders numbers by value (not by their bytes) and strings by code point', () => {
    const entry = (p: DataFile['partition']): ManifestEntry => ({ ...ENTRIES[0]!, file: { ...ENTRIES[0]!.file, partition: p } });
    const entries = [entry({ block_date: '\uFF61', chain_id: 10n, shard: -1 }), entry({ block_date: '😀', chain_id: 9, shard: 2 }), entry({ block_date: '\uFF62', chain_id: 100n, shard: -3 })];
    const [s, l, i] = partitionSummaries(FIELDS, entries);
    // By code point U+FF61 < U+FF62 < U+1F600; in UTF-16 units U+1F600 (0xD83D 0xDE00) would come first.
    expect(s).toEqual({ containsNull: false, containsNan: false, lowerBound: encodeBound('string', '\uFF61'), upperBound: encodeBound('string', '😀') });
    expect(l).toMatchObject({ lowerBound: encodeBound('long', 9n), upperBound: encodeBound('long', 100n) });
    expect(i).toMatchObject({ lowerBound: encodeBound('int', -3), upperBound: encodeBound('int', 2) });
  });

  it('has no bounds for a field whose values are all null, and none at all without entries', () => {
    const allNull = partitionSummaries(FIELDS, [ENTRIES[2]!]);
    expect(allNull.every((s) => s.containsNull && s.lowerBound === null && s.upperBound === null)).toBe(true);
    expect(partitionSummaries(FIELDS, [])).toEqual(FIELDS.map(() => ({ containsNull: false, containsNan: false, lowerBound: null, upperBound: null })));
  });
});
