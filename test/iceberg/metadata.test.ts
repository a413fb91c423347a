// The pure parts of the lake's Iceberg tables: a declaration's schema with ids kept for life, the
// partition spec, and the next metadata after a commit (sequence numbers, history, expiry).
import { describe, expect, it } from 'vitest';
import { STREAM_BY_TABLE } from '../../src/streams/index.js';
import type { StreamDecl } from '../../src/decl/stream.js';
import { fieldIdEntries, icebergType, lastColumnId, nameMapping, partitionSpecOf, schemaOf } from '../../src/iceberg/schema.js';
import { COMMIT_KEY, currentSnapshot, expiredMetadata, MAX_SNAPSHOTS, nextMetadata, operationOf, RETENTION_KEY, retentionOf, versionOf, type NextInput, type TableMetadata } from '../../src/iceberg/metadata.js';

const transfers = STREAM_BY_TABLE.get('erc_transfers')!;

describe('schema', () => {
  it('maps every landed type exactly: amounts decimal(38, 0), uint64 decimal(20, 0), lists with element ids', () => {
    expect(icebergType('DECIMAL(38,0)')).toBe('decimal(38, 0)');
    expect(icebergType('DECIMAL(20,0)')).toBe('decimal(20, 0)');
    expect(icebergType('TIMESTAMPTZ')).toBe('timestamptz');
    expect(icebergType('JSON')).toBe('string');
    expect(icebergType('VARCHAR[]')).toEqual({ list: 'string' });
    expect(() => icebergType('HUGEINT')).toThrow(/no Iceberg type/);
    for (const d of STREAM_BY_TABLE.values()) expect(() => schemaOf(d), d.table).not.toThrow();
  });

  it('ids are 1..n for a new table, unique across columns and list elements', () => {
    for (const d of STREAM_BY_TABLE.values()) {
      const s = schemaOf(d);
      const ids = s.fields.flatMap((f) => [f.id, ...(typeof f.type === 'string' ? [] : [f.type['element-id']])]);
      expect(new Set(ids).size, d.table).toBe(ids.length);
      expect(Math.max(...ids), d.table).toBe(ids.length);
      expect(s['schema-id']).toBe(0);
    }
  });

  it('a declaration that gains a column keeps every id and gives the new one the next; a dropped id is never given again', () => {
    const v0 = schemaOf(transfers);
    const grown = { ...transfers, columns: [{ name: 'gas_used', type: 'bigint', doc: '' }, ...transfers.columns] } as StreamDecl;
    const v1 = schemaOf(grown, v0);
    expect(v1['schema-id']).toBe(1);
    for (const f of v0.fields) expect(v1.fields.find((x) => x.name === f.name)!.id).toBe(f.id);
    expect(v1.fields.find((x) => x.name === 'gas_used')!.id).toBe(lastColumnId(v0) + 1);
    // Dropped, then added back: a new id, after the last ever given.
    const shrunk = schemaOf(transfers, v1);
    expect(shrunk.fields.some((f) => f.name === 'gas_used')).toBe(false);
    const again = schemaOf(grown, shrunk, lastColumnId(v1));
    expect(again.fields.find((x) => x.name === 'gas_used')!.id).toBe(lastColumnId(v1) + 1);
    // The same declaration again: the same schema id.
    expect(schemaOf(transfers, v0)['schema-id']).toBe(0);
  });

  it('a column whose type changes is a new column to Iceberg (a new id)', () => {
    const v0 = schemaOf(transfers);
    const changed = { ...transfers, columns: transfers.columns.map((c) => (c.name === 'log_index' ? { ...c, type: 'bigint' } : c)) } as StreamDecl;
    const v1 = schemaOf(changed, v0);
    expect(v1.fields.find((f) => f.name === 'log_index')!.id).not.toBe(v0.fields.find((f) => f.name === 'log_index')!.id);
  });

  it('block-ranged tables are partitioned by chain_id; the field ids option and name mapping name every column', () => {
    const s = schemaOf(transfers);
    const spec = partitionSpecOf(transfers, s);
    expect(spec.fields).toEqual([{ 'source-id': s.fields.find((f) => f.name === 'chain_id')!.id, 'field-id': 1000, name: 'chain_id', transform: 'identity' }]);
    expect(partitionSpecOf(STREAM_BY_TABLE.get('delegators')!, schemaOf(STREAM_BY_TABLE.get('delegators')!)).fields).toEqual([]);
    const ids = fieldIdEntries(schemaOf(STREAM_BY_TABLE.get('validators')!));
    expect(ids.get('reward_addresses')).toMatch(/^\{__duckdb_field_id: \d+, element: \d+\}$/);
    const mapping = JSON.parse(nameMapping(s)) as Array<{ 'field-id': number; names: string[] }>;
    expect(mapping.map((m) => m.names[0])).toEqual(s.fields.map((f) => f.name));
  });
});

function input(x: Partial<NextInput> & { id: number; now: number }): NextInput {
  const schema = schemaOf(transfers);
  return {
    location: 'file:///lake/erc_transfers',
    uuid: 'u',
    schema,
    spec: partitionSpecOf(transfers, schema),
    properties: {},
    snapshotId: x.id,
    manifestList: `file:///lake/erc_transfers/metadata/snap-${x.id}.avro`,
    summary: { operation: 'append', commit: `c${x.id}`, addedFiles: 1, addedRows: 10n, deletedFiles: 0, deletedRows: 0n, totalFiles: 1, totalRows: 10n },
    ...x,
  } as NextInput;
}

describe('next metadata', () => {
  it('chains snapshots with sequence numbers, parent ids and the log; time never goes back', () => {
    const a = nextMetadata(undefined, input({ id: 1, now: 1000 })).metadata;
    const b = nextMetadata(a, input({ id: 2, now: 500, previousFile: 'file:///lake/erc_transfers/metadata/v1.metadata.json' })).metadata;
    expect(b['last-sequence-number']).toBe(2);
    expect(currentSnapshot(b)!['parent-snapshot-id']).toBe(1);
    expect(currentSnapshot(b)!['timestamp-ms']).toBe(1000);
    expect(currentSnapshot(b)!.summary[COMMIT_KEY]).toBe('c2');
    expect(b['metadata-log']).toEqual([{ 'metadata-file': 'file:///lake/erc_transfers/metadata/v1.metadata.json', 'timestamp-ms': 1000 }]);
    expect(b.refs.main!['snapshot-id']).toBe(2);
  });

  it('appends keep the newest snapshots; a commit that removes files expires all earlier ones', () => {
    let m: TableMetadata | undefined;
    let expired = 0;
    for (let i = 1; i <= MAX_SNAPSHOTS + 5; i++) {
      const r = nextMetadata(m, input({ id: i, now: i }));
      m = r.metadata;
      expired += r.expired.length;
    }
    expect(m!.snapshots.length).toBe(MAX_SNAPSHOTS);
    expect(expired).toBe(5);
    expect(m!['snapshot-log'].length).toBe(MAX_SNAPSHOTS);
    const r = nextMetadata(m, input({ id: 999, now: 999, summary: { operation: 'overwrite', commit: 'x', addedFiles: 1, addedRows: 5n, deletedFiles: 1, deletedRows: 10n, totalFiles: 1, totalRows: 5n } }));
    expect(r.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual([999]);
    expect(r.expired.length).toBe(MAX_SNAPSHOTS);
    expect(r.metadata.snapshots[0]!['parent-snapshot-id']).toBe(MAX_SNAPSHOTS + 5);
  });

  it('with a retention, a snapshot stays until the retention has passed since a later commit removed files; then it expires, with every older one', () => {
    const HOUR = 3_600_000;
    const removing = { operation: 'replace' as const, commit: 'r', addedFiles: 1, addedRows: 10n, deletedFiles: 2, deletedRows: 10n, totalFiles: 1, totalRows: 10n };
    const ids = (m: TableMetadata) => m.snapshots.map((s) => s['snapshot-id']);
    let m = nextMetadata(undefined, input({ id: 1, now: 0, properties: { [RETENTION_KEY]: String(HOUR) } })).metadata;
    m = nextMetadata(m, input({ id: 2, now: 10 })).metadata;
    expect(retentionOf(m)).toBe(HOUR);
    // A compaction at 20: 1 and 2 name files it removes, which stay on disk for an hour.
    m = nextMetadata(m, input({ id: 3, now: 20, summary: removing })).metadata;
    expect(ids(m)).toEqual([1, 2, 3]);
    m = nextMetadata(m, input({ id: 4, now: 20 + HOUR - 1 })).metadata;
    expect(ids(m)).toEqual([1, 2, 3, 4]);
    // A second removal an hour after the first: 1 and 2 go (the first's hour is over), 3 stays for its own.
    const r = nextMetadata(m, input({ id: 5, now: 20 + HOUR, summary: { ...removing, commit: 'r2' } }));
    expect(ids(r.metadata)).toEqual([3, 4, 5]);
    expect(r.expired.map((s) => s['snapshot-id'])).toEqual([1, 2]);
    expect(r.metadata['snapshot-log'].map((l) => l['snapshot-id'])).toEqual([3, 4, 5]);
    // Expiring with no commit: nothing before its time; then 3 and 4, the current snapshot never.
    const file = 'file:///lake/erc_transfers/metadata/v5.metadata.json';
    expect(expiredMetadata(r.metadata, { now: 20 + 2 * HOUR - 1, previousFile: file })).toBeUndefined();
    const x = expiredMetadata(r.metadata, { now: 20 + 2 * HOUR, previousFile: file })!;
    expect(ids(x.metadata)).toEqual([5]);
    expect(x.expired.map((s) => s['snapshot-id'])).toEqual([3, 4]);
    expect(x.metadata['current-snapshot-id']).toBe(5);
    expect(x.metadata['metadata-log'].at(-1)).toEqual({ 'metadata-file': file, 'timestamp-ms': r.metadata['last-updated-ms'] });
    // A retention set to 0: what a removal superseded expires at once.
    const zero = expiredMetadata(r.metadata, { now: 20 + HOUR, properties: { [RETENTION_KEY]: '0' }, previousFile: file })!;
    expect(ids(zero.metadata)).toEqual([5]);
    expect(retentionOf(zero.metadata)).toBe(0);
    expect(retentionOf({ ...zero.metadata, properties: { [RETENTION_KEY]: 'soon' } })).toBe(0);
  });

  it('a lake that moved starts a new history at its new location, schema kept', () => {
    const a = nextMetadata(undefined, input({ id: 1, now: 1 })).metadata;
    const b = nextMetadata(a, input({ id: 2, now: 2, location: 'file:///elsewhere/erc_transfers', relocated: true })).metadata;
    expect(b.location).toBe('file:///elsewhere/erc_transfers');
    expect(b.snapshots.length).toBe(1);
    expect(currentSnapshot(b)!['parent-snapshot-id']).toBeUndefined();
    expect(b['table-uuid']).toBe(a['table-uuid']);
  });

  it('names the operation by what a commit did', () => {
    expect(operationOf(1, 0, false)).toBe('append');
    expect(operationOf(1, 3, true)).toBe('replace');
    expect(operationOf(1, 3, false)).toBe('overwrite');
    expect(operationOf(0, 2, false)).toBe('delete');
    expect(versionOf('s3://b/l/t/metadata/v12.metadata.json')).toBe(12);
    expect(versionOf('x/snap-1.avro')).toBeUndefined();
  });
});
