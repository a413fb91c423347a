// A table's Iceberg schema and partition spec from its declaration. Field ids are what Iceberg
// readers match columns by (names may change), so they are kept from the table's previous schema:
// a column keeps its id for life, a new column takes the next unused id, and no file is rewritten
// when a declaration gains a column. The Parquet writer stamps the same ids into each file.
import type { StreamDecl } from '../decl/stream.js';
import { landedColumns } from '../transform/columns.js';

export type IcebergPrimitive = 'boolean' | 'int' | 'long' | 'double' | 'string' | 'timestamptz' | `decimal(${number}, ${number})`;

export interface ListType {
  type: 'list';
  'element-id': number;
  element: IcebergPrimitive;
  'element-required': boolean;
}

export interface SchemaField {
  id: number;
  name: string;
  required: boolean;
  type: IcebergPrimitive | ListType;
  doc?: string;
}

export interface Schema {
  type: 'struct';
  'schema-id': number;
  fields: SchemaField[];
}

export interface PartitionSpec {
  'spec-id': number;
  fields: Array<{ 'source-id': number; 'field-id': number; name: string; transform: 'identity' }>;
}

/**
 * The Iceberg type of a landed DuckDB type. Exact both ways: DECIMAL(38,0) is decimal(38,0), a
 * uint64 lands as DECIMAL(20,0) (Iceberg has no unsigned long, and a long would wrap the top
 * half), TIMESTAMPTZ is microseconds with a zone, and JSON is the text it is.
 */
export function icebergType(duck: string): IcebergPrimitive | { list: IcebergPrimitive } {
  const list = /^(.*)\[\]$/.exec(duck);
  if (list) {
    const element = icebergType(list[1]!);
    if (typeof element !== 'string') throw new Error(`no Iceberg type for ${duck}`);
    return { list: element };
  }
  const dec = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(duck);
  if (dec) return `decimal(${Number(dec[1])}, ${Number(dec[2])})`;
  const simple: Record<string, IcebergPrimitive> = {
    VARCHAR: 'string',
    JSON: 'string',
    BIGINT: 'long',
    INTEGER: 'int',
    DOUBLE: 'double',
    BOOLEAN: 'boolean',
    TIMESTAMPTZ: 'timestamptz',
  };
  const t = simple[duck];
  if (!t) throw new Error(`no Iceberg type for the landed type ${duck}`);
  return t;
}

/** The largest field id a schema uses (list elements included). */
export function lastColumnId(schema: Schema | undefined): number {
  let n = 0;
  for (const f of schema?.fields ?? []) n = Math.max(n, f.id, typeof f.type === 'string' ? 0 : f.type['element-id']);
  return n;
}

/**
 * The declaration's schema, ids kept from `previous` by name and new ones after `lastId` (the
 * table's last-column-id, which never goes down: an id once given is not given again). The
 * schema id is the previous one when nothing changed, else the next.
 */
export function schemaOf(decl: StreamDecl, previous?: Schema, lastId = lastColumnId(previous)): Schema {
  const old = new Map((previous?.fields ?? []).map((f) => [f.name, f]));
  let next = lastId;
  const fields = landedColumns(decl).map(([name, duck]): SchemaField => {
    const t = icebergType(duck);
    const was = old.get(name);
    // A column whose type changed is a new column to Iceberg (no promotion from one to the other here).
    const same = was && JSON.stringify(typeOnly(was.type)) === JSON.stringify(typeof t === 'string' ? t : { list: t.list });
    const id = same ? was.id : ++next;
    const type: SchemaField['type'] = typeof t === 'string' ? t : { type: 'list', 'element-id': same && typeof was.type !== 'string' ? was.type['element-id'] : ++next, element: t.list, 'element-required': false };
    return { id, name, required: false, type };
  });
  const changed = !previous || JSON.stringify(previous.fields.map(strip)) !== JSON.stringify(fields.map(strip));
  return { type: 'struct', 'schema-id': previous ? previous['schema-id'] + (changed ? 1 : 0) : 0, fields };
}

function typeOnly(t: SchemaField['type']): IcebergPrimitive | { list: IcebergPrimitive } {
  return typeof t === 'string' ? t : { list: t.element };
}

function strip(f: SchemaField): unknown {
  return { id: f.id, name: f.name, type: f.type, required: f.required };
}

/** Partition field ids start at 1000 (the spec's convention, apart from column ids). */
const PARTITION_FIELD_ID = 1000;

/** Block-ranged tables are partitioned by the column their folders are named after (`chain_id`). */
export function partitionSpecOf(decl: StreamDecl, schema: Schema): PartitionSpec {
  if (!decl.folder) return { 'spec-id': 0, fields: [] };
  const column = decl.columns.find((c) => c.partition === decl.folder!.partition);
  const field = column && schema.fields.find((f) => f.name === column.name);
  if (!field) throw new Error(`${decl.table}: no column holds the folder's partition value ${decl.folder.partition}`);
  return { 'spec-id': 0, fields: [{ 'source-id': field.id, 'field-id': PARTITION_FIELD_ID, name: field.name, transform: 'identity' }] };
}

/** Per column, its entry in DuckDB's FIELD_IDS option (a list's element gets its own id too). */
export function fieldIdEntries(schema: Schema): Map<string, string> {
  return new Map(schema.fields.map((f) => [f.name, typeof f.type === 'string' ? String(f.id) : `{__duckdb_field_id: ${f.id}, element: ${f.type['element-id']}}`]));
}

/**
 * The name mapping (`schema.name-mapping.default`) of a schema: how a reader finds a column in a
 * file written without field ids (files landed before the lake was an Iceberg table).
 */
export function nameMapping(schema: Schema): string {
  return JSON.stringify(
    schema.fields.map((f) => (typeof f.type === 'string' ? { 'field-id': f.id, names: [f.name] } : { 'field-id': f.id, names: [f.name], fields: [{ 'field-id': f.type['element-id'], names: ['element'] }] })),
  );
}
