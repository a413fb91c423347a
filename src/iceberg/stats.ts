// What a manifest says of a data file (rows, size, and per column: values, nulls, lower and upper
// bounds), read from the Parquet footer alone: DuckDB's parquet_metadata gives each row group's
// statistics, folded here per column by its Iceberg type. Engines skip a file whose bounds rule it
// out, so a bound is only written where it is sure: a string's is truncated to 16 characters the
// safe way, a double's is left out when a group has none or a NaN.
import { statSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlString } from '../load/paths.js';
import { betweenCopies } from '../load/parquet.js';
import { encodeBound, truncatedBounds, type BoundType } from './bounds.js';
import type { DataFile } from './avro.js';
import type { IcebergPrimitive, Schema } from './schema.js';

function boundType(t: IcebergPrimitive): BoundType {
  const dec = /^decimal\((\d+), (\d+)\)$/.exec(t);
  if (dec) return { decimal: [Number(dec[1]), Number(dec[2])] };
  return t as Exclude<BoundType, { decimal: [number, number] }>;
}

/** A statistic as DuckDB prints it, as the value of its type (undefined: not usable as a bound). */
function parse(t: IcebergPrimitive, text: string): bigint | number | boolean | string | undefined {
  if (t === 'string') return text;
  if (t === 'boolean') return text === 'true' || text === '1';
  if (t === 'double') {
    const n = Number(text);
    return Number.isNaN(n) ? undefined : n;
  }
  if (t === 'int') return Number(text);
  if (t === 'long') return BigInt(text);
  if (t === 'timestamptz') return micros(text);
  const dec = /^decimal\(\d+, (\d+)\)$/.exec(t);
  if (dec) {
    const scale = Number(dec[1]);
    const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
    if (!m) return undefined;
    return BigInt(`${m[1]}${m[2]}${(m[3] ?? '').padEnd(scale, '0').slice(0, scale)}`);
  }
  return undefined;
}

/** `2024-01-01 00:00:00.123456+00` as microseconds since the epoch. */
function micros(text: string): bigint | undefined {
  const m = /^(-?\d{4,})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?(?:([+-])(\d\d)(?::?(\d\d))?)?$/.exec(text);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  const offset = m[8] ? (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10] ?? 0)) * 60_000 : 0;
  return BigInt(ms - offset) * 1000n + BigInt((m[7] ?? '').padEnd(6, '0'));
}

function less(a: bigint | number | boolean | string, b: bigint | number | boolean | string): boolean {
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b) < 0;
  return a < b;
}

/** Strings compare as Parquet and Iceberg order them: by code point (UTF-8 bytes), not UTF-16 units. */
function compareCodePoints(a: string, b: string): number {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return Buffer.compare(x, y);
}

/** The manifest's view of a Parquet file; `path` is the URI engines are given. */
export async function describeFile(conn: DuckDBConnection, local: string, path: string, schema: Schema): Promise<DataFile> {
  const file = sqlString(local);
  // One read of the footer: each row group's rows come with each of its columns.
  const meta = await betweenCopies(() => conn.runAndReadAll(
    `SELECT path_in_schema, num_values::BIGINT, stats_null_count::BIGINT, stats_min_value, stats_max_value, total_compressed_size::BIGINT, row_group_id, row_group_num_rows::BIGINT FROM parquet_metadata(${file}) ORDER BY row_group_id`,
  ));
  const groups = new Map<string, bigint>();
  for (const r of meta.getRows()) groups.set(String(r[6]), BigInt(String(r[7])));
  const recordCount = [...groups.values()].reduce((a, b) => a + b, 0n);
  const byName = new Map(schema.fields.map((f) => [f.name, f]));
  const columnSizes = new Map<number, bigint>();
  const valueCounts = new Map<number, bigint>();
  const nullValueCounts = new Map<number, bigint>();
  const low = new Map<number, bigint | number | boolean | string>();
  const high = new Map<number, bigint | number | boolean | string>();
  const unsure = new Set<number>();
  for (const [pathIn, values, nulls, min, max, size] of meta.getRows()) {
    const parts = String(pathIn).split(', ');
    const field = byName.get(parts[0]!);
    if (!field) continue;
    // A list's leaf is its element: counted under the element's id, no bounds.
    const list = typeof field.type !== 'string';
    const id = list ? (field.type as { 'element-id': number })['element-id'] : field.id;
    columnSizes.set(id, (columnSizes.get(id) ?? 0n) + BigInt(String(size ?? 0)));
    valueCounts.set(id, (valueCounts.get(id) ?? 0n) + BigInt(String(values ?? 0)));
    if (nulls === null) unsure.add(id);
    else nullValueCounts.set(id, (nullValueCounts.get(id) ?? 0n) + BigInt(String(nulls)));
    if (list) continue;
    const t = field.type as IcebergPrimitive;
    const nonNull = BigInt(String(values ?? 0)) - BigInt(String(nulls ?? 0));
    if (nonNull === 0n && nulls !== null) continue; // an all-null group bounds nothing
    const lo = min === null ? undefined : parse(t, String(min));
    const hi = max === null ? undefined : parse(t, String(max));
    if (lo === undefined || hi === undefined) {
      unsure.add(field.id);
      continue;
    }
    if (!low.has(field.id) || less(lo, low.get(field.id)!)) low.set(field.id, lo);
    if (!high.has(field.id) || less(high.get(field.id)!, hi)) high.set(field.id, hi);
  }
  for (const id of unsure) nullValueCounts.delete(id);
  const lowerBounds = new Map<number, Buffer>();
  const upperBounds = new Map<number, Buffer>();
  for (const f of schema.fields) {
    if (typeof f.type !== 'string' || unsure.has(f.id) || !low.has(f.id)) continue;
    const t = boundType(f.type);
    let lo = low.get(f.id)!;
    let hi: typeof lo | null = high.get(f.id)!;
    if (f.type === 'string') ({ lower: lo, upper: hi } = truncatedBounds(lo as string, hi as string, 16));
    lowerBounds.set(f.id, encodeBound(t, lo));
    if (hi !== null) upperBounds.set(f.id, encodeBound(t, hi));
  }
  return {
    path,
    recordCount,
    fileSizeInBytes: BigInt(statSync(local).size),
    partition: {},
    columnSizes,
    valueCounts,
    nullValueCounts,
    lowerBounds,
    upperBounds,
  };
}
