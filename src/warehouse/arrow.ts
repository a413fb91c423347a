// DuckDB results as Apache Arrow, for `export --format arrow`, `query --format arrow` and the
// library (src/index.ts): the one place that maps DuckDB types to Arrow types and values.
//
// A result is read a DuckDB chunk at a time (at most 2,048 rows) and each chunk becomes one Arrow
// record batch, so nothing holds a whole result. Arrays are built from the values' exact forms
// (Arrow's builders take timestamps as milliseconds and would drop the microseconds):
// - DECIMAL(p,s) -> Decimal128(p,s): the unscaled integer as 128-bit two's complement;
// - HUGEINT, UHUGEINT -> Decimal128(38,0) when the value has at most 38 digits, else an error that
//   names the column (Arrow's Decimal128 holds 38 digits; nothing is rounded or cut);
// - TIMESTAMP WITH TIME ZONE -> Timestamp(MICROSECOND, 'UTC'); TIMESTAMP -> Timestamp(MICROSECOND);
//   DATE -> Date(DAY); TIMESTAMP_S/_MS/_NS -> Timestamp(SECOND/MILLISECOND/NANOSECOND);
// - JSON -> Utf8, the text as is, its field marked with the canonical extension `arrow.json`;
// - LIST -> List, STRUCT -> Struct, of any of these; a NULL literal -> Null.
// Any other type is refused before anything is written, with the column and what to do.
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import type { DuckDBListVector, DuckDBStructVector, DuckDBDataChunk, DuckDBType, DuckDBVector } from '@duckdb/node-api';
import { DuckDBTypeId, type DuckDBConnection, type DuckDBResult } from './duckdb.js';
import {
  AsyncByteQueue,
  Bool,
  type Data,
  DataType,
  DateDay,
  Decimal,
  Field,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  List,
  makeData,
  Null,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  type RecordBatchWriter,
  Schema,
  Struct,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimestampSecond,
  Type,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
} from 'apache-arrow';
import { UsageError } from '../errors.js';

/** Field metadata of a JSON column (Arrow's canonical JSON extension type). */
export const JSON_FIELD = new Map([
  ['ARROW:extension:name', 'arrow.json'],
  ['ARROW:extension:metadata', ''],
]);

const DECIMAL128_DIGITS = 38;
const MAX_DECIMAL128 = 10n ** 38n - 1n;

/** Positions of the rows to read in a vector: the identity for a chunk, gathered ones in a list. */
type Rows = ArrayLike<number>;

/** One column: its Arrow field and how to build its Arrow data from DuckDB vectors. */
interface Column {
  field: Field;
  data(v: DuckDBVector, rows: Rows): Data;
}

/** A validity bitmap of `n` rows, and how many are NULL, from a test of each row. */
function validity(n: number, valid: (i: number) => boolean): { nullBitmap?: Uint8Array; nullCount: number } {
  const bits = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (valid(i)) bits[i >> 3]! |= 1 << (i & 7);
    else nulls++;
  }
  return nulls === 0 ? { nullCount: 0 } : { nullBitmap: bits, nullCount: nulls };
}

type Fixed = Int8Array | Int16Array | Int32Array | BigInt64Array | Uint8Array | Uint16Array | Uint32Array | BigUint64Array | Float32Array | Float64Array;

/**
 * Fixed-width types: the Arrow type, its array, and what of a DuckDB item (never NULL) goes into
 * the array (the item itself for numbers).
 */
const FIXED: Partial<Record<DuckDBTypeId, [() => DataType, new (n: number) => Fixed, ((x: never) => number | bigint)?]>> = {
  [DuckDBTypeId.TINYINT]: [() => new Int8(), Int8Array],
  [DuckDBTypeId.SMALLINT]: [() => new Int16(), Int16Array],
  [DuckDBTypeId.INTEGER]: [() => new Int32(), Int32Array],
  [DuckDBTypeId.BIGINT]: [() => new Int64(), BigInt64Array],
  [DuckDBTypeId.UTINYINT]: [() => new Uint8(), Uint8Array],
  [DuckDBTypeId.USMALLINT]: [() => new Uint16(), Uint16Array],
  [DuckDBTypeId.UINTEGER]: [() => new Uint32(), Uint32Array],
  [DuckDBTypeId.UBIGINT]: [() => new Uint64(), BigUint64Array],
  [DuckDBTypeId.FLOAT]: [() => new Float32(), Float32Array],
  [DuckDBTypeId.DOUBLE]: [() => new Float64(), Float64Array],
  [DuckDBTypeId.DATE]: [() => new DateDay(), Int32Array, (x: { days: number }) => x.days],
  [DuckDBTypeId.TIMESTAMP]: [() => new TimestampMicrosecond(), BigInt64Array, (x: { micros: bigint }) => x.micros],
  // DuckDB keeps the instant in UTC; the zone says so, and readers show it as UTC.
  [DuckDBTypeId.TIMESTAMP_TZ]: [() => new TimestampMicrosecond('UTC'), BigInt64Array, (x: { micros: bigint }) => x.micros],
  [DuckDBTypeId.TIMESTAMP_S]: [() => new TimestampSecond(), BigInt64Array, (x: { seconds: bigint }) => x.seconds],
  [DuckDBTypeId.TIMESTAMP_MS]: [() => new TimestampMillisecond(), BigInt64Array, (x: { millis: bigint }) => x.millis],
  [DuckDBTypeId.TIMESTAMP_NS]: [() => new TimestampNanosecond(), BigInt64Array, (x: { nanos: bigint }) => x.nanos],
};

function fixed(name: string, [arrow, Array_, value]: NonNullable<(typeof FIXED)[DuckDBTypeId]>): Column {
  const type = arrow();
  return {
    field: new Field(name, type, true),
    data(v, rows) {
      const n = rows.length;
      const out = new Array_(n) as { [i: number]: number | bigint };
      const bits = validity(n, (i) => {
        const x = v.getItem(rows[i]!);
        if (x === null) return false;
        out[i] = value ? value(x as never) : (x as number | bigint);
        return true;
      });
      return makeData({ type, length: n, ...bits, data: out } as never);
    },
  };
}

/** Decimal128: each value as 128-bit two's complement, low 64 bits first (little-endian words). */
function decimal(type: Decimal, name: string, unscaled: (x: unknown) => bigint): Column {
  return {
    field: new Field(name, type, true),
    data(v, rows) {
      const n = rows.length;
      const words = new BigUint64Array(n * 2);
      const bits = validity(n, (i) => {
        const x = v.getItem(rows[i]!);
        if (x === null) return false;
        const u = unscaled(x);
        words[2 * i] = BigInt.asUintN(64, u);
        words[2 * i + 1] = BigInt.asUintN(64, u >> 64n);
        return true;
      });
      return makeData({ type, length: n, ...bits, data: new Uint32Array(words.buffer) });
    },
  };
}

function utf8(name: string, top: string, metadata?: Map<string, string>): Column {
  const type = new Utf8();
  return {
    field: new Field(name, type, true, metadata),
    data(v, rows) {
      const n = rows.length;
      const texts: string[] = new Array(n);
      const offsets = new Int32Array(n + 1);
      let bytes = 0;
      const bits = validity(n, (i) => {
        const x = v.getItem(rows[i]!) as string | null;
        if (x !== null) {
          texts[i] = x;
          bytes += Buffer.byteLength(x, 'utf8');
        }
        offsets[i + 1] = bytes;
        return x !== null;
      });
      // Utf8 offsets are 32-bit; a chunk is at most 2,048 rows, so only values of ~1 MB each reach this.
      if (bytes > 0x7fffffff) throw new UsageError(`column ${JSON.stringify(top)}: more than 2 GB of text in one batch of ${n} rows`);
      const data = Buffer.alloc(bytes);
      for (let i = 0; i < n; i++) if (texts[i] !== undefined) data.write(texts[i]!, offsets[i]!, 'utf8');
      return makeData({ type, length: n, ...bits, valueOffsets: offsets, data: new Uint8Array(data.buffer, data.byteOffset, bytes) });
    },
  };
}

/** The result's column an error names (a list's items and a struct's entries are columns here too). */
interface Top {
  name: string;
  type: DuckDBType;
}

/** The Arrow column of a DuckDB column; throws (UsageError) for a type with no mapping. */
function column(name: string, t: DuckDBType, top: Top = { name, type: t }): Column {
  const plain = FIXED[t.typeId];
  if (plain) return fixed(name, plain);
  switch (t.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return {
        field: new Field(name, new Bool(), true),
        data(v, rows) {
          const n = rows.length;
          const out = new Uint8Array((n + 7) >> 3);
          const bits = validity(n, (i) => {
            const x = v.getItem(rows[i]!) as boolean | null;
            if (x === null) return false;
            if (x) out[i >> 3]! |= 1 << (i & 7);
            return true;
          });
          return makeData({ type: new Bool(), length: n, ...bits, data: out });
        },
      };
    case DuckDBTypeId.DECIMAL:
      return decimal(new Decimal(t.scale, t.width, 128), name, (x) => (x as { value: bigint }).value);
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return decimal(new Decimal(0, DECIMAL128_DIGITS, 128), name, (x) => {
        const b = x as bigint;
        if (b > MAX_DECIMAL128 || b < -MAX_DECIMAL128)
          throw new UsageError(`column ${JSON.stringify(top.name)}: ${b} (${t.toString()}) has more than 38 digits, more than Arrow's Decimal128 holds; ${castIt(top.name)}`);
        return b;
      });
    case DuckDBTypeId.VARCHAR:
      return utf8(name, top.name, t.alias === 'JSON' ? JSON_FIELD : undefined);
    case DuckDBTypeId.SQLNULL:
      return {
        field: new Field(name, new Null(), true),
        data: (_v, rows) => makeData({ type: new Null(), length: rows.length }),
      };
    case DuckDBTypeId.LIST: {
      const item = column('item', t.valueType, top);
      const type = new List(item.field);
      return {
        field: new Field(name, type, true),
        data(v, rows) {
          const list = v as DuckDBListVector;
          const n = rows.length;
          const offsets = new Int32Array(n + 1);
          const gathered: number[] = [];
          const bits = validity(n, (i) => {
            const r = rows[i]!;
            // getItemVector is null for a NULL list (the entry's offset and length say nothing then).
            const valid = list.getItemVector(r) !== null;
            if (valid) {
              const at = list.getEntryOffset(r);
              for (let k = 0, len = list.getEntryLength(r); k < len; k++) gathered.push(at + k);
            }
            offsets[i + 1] = gathered.length;
            return valid;
          });
          return makeData({ type, length: n, ...bits, valueOffsets: offsets, child: item.data(list.childVector, gathered) });
        },
      };
    }
    case DuckDBTypeId.STRUCT: {
      const entries = t.entryNames.map((entry, k) => column(entry, t.entryTypes[k]!, top));
      const type = new Struct(entries.map((e) => e.field));
      return {
        field: new Field(name, type, true),
        data(v, rows) {
          const s = v as DuckDBStructVector;
          const bits = validity(rows.length, (i) => s.isItemValid(rows[i]!));
          return makeData({ type, length: rows.length, ...bits, children: entries.map((e, k) => e.data(s.entryVectorAt(k), rows)) });
        },
      };
    }
    default:
      throw new UsageError(`column ${JSON.stringify(top.name)}: ${top.type === t ? t.toString() : `${t.toString()} (in ${top.type.toString()})`} has no Arrow mapping here; ${castIt(top.name)}`);
  }
}

function castIt(column: string): string {
  return `cast it in the query, e.g. CAST(${JSON.stringify(column)} AS VARCHAR)`;
}

let identity = new Int32Array(0);

/** 0, 1, ... n-1 (shared: chunks are read one after the other). */
function firstRows(n: number): Rows {
  if (identity.length < n) identity = Int32Array.from({ length: Math.max(n, 2048) }, (_, i) => i);
  return identity.subarray(0, n);
}

/**
 * Arrow data of `n` values of a DuckDB type handed over one by one (NULL as null), built as a
 * result's column is (bench/arrow.mjs measures Arrow as a hand-off with it).
 */
export function arrowData(type: DuckDBType, n: number, item: (i: number) => unknown): Data {
  return column('value', type).data({ getItem: item } as unknown as DuckDBVector, firstRows(n));
}

/** A result's columns as Arrow; refuses (UsageError naming the column) a type with no mapping. */
export class ArrowResult {
  readonly schema: Schema;
  private readonly columns: Column[];

  constructor(private readonly result: DuckDBResult) {
    const names = result.deduplicatedColumnNames();
    this.columns = result.columnTypes().map((t, i) => column(names[i]!, t));
    this.schema = new Schema(this.columns.map((c) => c.field));
  }

  /** One DuckDB chunk as one record batch. */
  batch(chunk: DuckDBDataChunk): RecordBatch {
    const n = chunk.rowCount;
    const rows = firstRows(n);
    const children = this.columns.map((c, i) => c.data(chunk.getColumnVector(i), rows));
    return new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: n, nullCount: 0, children }));
  }

  /** The record batches, a chunk at a time (nothing holds the whole result). */
  async *batches(): AsyncGenerator<RecordBatch> {
    for (;;) {
      const chunk = await this.result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) return;
      yield this.batch(chunk);
    }
  }
}

/** Streams the result of `sql` (its last statement) from DuckDB; the types are checked first. */
export async function arrowResult(conn: DuckDBConnection, sql: string): Promise<ArrowResult> {
  return new ArrowResult(await conn.stream(sql));
}

/**
 * A writer's sink that hands its bytes over after each batch, so that they go out (with the
 * output's backpressure) before the next batch is read. Arrow's own queue would buffer every batch
 * written until a reader drains it.
 */
class Pending extends AsyncByteQueue {
  private parts: Uint8Array[] = [];

  override write(value: ArrayBufferView | ArrayBufferLike | ArrayLike<number> | Iterable<number> | string | null | undefined): void {
    const v = value as ArrayBufferView;
    if (v.byteLength > 0) this.parts.push(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  }

  override close(): void {}

  take(): Buffer {
    const b = Buffer.concat(this.parts);
    this.parts = [];
    return b;
  }
}

export type ArrowFormat = 'stream' | 'file';

/**
 * Writes a result as Arrow IPC, batch by batch: the stream format (schema, batches, end marker)
 * or the file format (the same between magic bytes, with a footer for random access). `out`
 * receives the bytes, after each batch, and may return a promise to hold the next one back.
 * Returns the rows written.
 */
export async function writeArrow(result: ArrowResult, format: ArrowFormat, out: (bytes: Buffer) => void | Promise<void>): Promise<number> {
  const sink = new Pending();
  const writer: RecordBatchWriter = format === 'file' ? new RecordBatchFileWriter() : new RecordBatchStreamWriter();
  // The schema goes first even when no row follows, so an empty result is still a readable one.
  writer.reset(sink, result.schema);
  let rows = 0;
  for await (const batch of result.batches()) {
    writer.write(batch);
    rows += batch.numRows;
    await out(sink.take());
  }
  writer.finish();
  await out(sink.take());
  return rows;
}

/** `out` for a Node stream: waits for it to drain when it asks to. */
export function toStream(stream: Writable): (bytes: Buffer) => Promise<void> {
  return async (bytes) => {
    if (bytes.length > 0 && !stream.write(bytes)) await once(stream, 'drain');
  };
}

/** Arrow IPC is binary: a terminal would show garbage and could be left in a strange state. */
export function refuseTerminal(isTTY: boolean | undefined): void {
  if (isTTY) throw new UsageError('--format arrow writes binary Arrow IPC; send it to a file or a program (e.g. `> result.arrows`, or `| python3 read.py`), not to the terminal');
}

/** The TypeScript name of an Arrow type, as apache-arrow names its classes: for the types of the lake's columns (src/tables.ts). */
export function arrowTypeName(t: DataType): string {
  switch (t.typeId) {
    case Type.Int: {
      const i = t as Int8;
      return `${i.isSigned ? 'Int' : 'Uint'}${i.bitWidth}`;
    }
    case Type.Float:
      return (t as Float64).precision === 2 ? 'Float64' : (t as Float64).precision === 1 ? 'Float32' : 'Float16';
    case Type.Timestamp:
      return ['TimestampSecond', 'TimestampMillisecond', 'TimestampMicrosecond', 'TimestampNanosecond'][(t as TimestampMicrosecond).unit]!;
    case Type.Date:
      return 'DateDay';
    case Type.List:
      return `List<${arrowTypeName((t as List).valueType)}>`;
    case Type.Decimal:
      return 'Decimal';
    case Type.Utf8:
      return 'Utf8';
    case Type.Bool:
      return 'Bool';
    default:
      throw new Error(`no TypeScript name for the Arrow type ${String(t)}`);
  }
}
