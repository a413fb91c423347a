// DuckDB results as Apache Arrow, for `export --format arrow`, `query --format arrow` and the
// library (src/index.ts): the one place that maps DuckDB types to Arrow types and values.
//
// A result is read a DuckDB chunk at a time (at most 2,048 rows) and each chunk becomes one Arrow
// record batch, so nothing holds a whole result. Each column is built from its DuckDB vector's
// buffers as DuckDB's C API hands them over (@duckdb/node-bindings copies them out of DuckDB):
// numbers, dates and timestamps are the copy itself, validity masks are Arrow's bitmaps as they
// are, decimals are widened to 128-bit words and text is copied as UTF-8 bytes, with no JavaScript
// value made per cell (issue 24: that took 5x DuckDB's own time). The values keep their exact
// forms (Arrow's builders take timestamps as milliseconds and would drop the microseconds):
// - DECIMAL(p,s) -> Decimal128(p,s): the unscaled integer as 128-bit two's complement;
// - HUGEINT, UHUGEINT -> Decimal128(38,0) when the value has at most 38 digits, else an error that
//   names the column (Arrow's Decimal128 holds 38 digits; nothing is rounded or cut);
// - TIMESTAMP WITH TIME ZONE -> Timestamp(MICROSECOND, 'UTC'); TIMESTAMP -> Timestamp(MICROSECOND);
//   DATE -> Date(DAY); TIMESTAMP_S/_MS/_NS -> Timestamp(SECOND/MILLISECOND/NANOSECOND);
// - BIGNUM (the views' amounts, exact: warehouse/amounts.ts) -> Utf8 of its digits;
// - JSON -> Utf8, the text as is, its field marked with the canonical extension `arrow.json`;
// - LIST -> List, STRUCT -> Struct, of any of these; a NULL literal -> Null.
// Any other type is refused before anything is written, with the column and what to do.
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import type { DuckDBListVector, DuckDBStructVector, DuckDBDataChunk, DuckDBType, DuckDBVector } from '@duckdb/node-api';
import { checkStreamEnd, DuckDBTypeId, type DuckDBConnection, type DuckDBResult } from './duckdb.js';
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
// DuckDB's C API under @duckdb/node-api, pinned to its version (package.json) so that both are one
// copy: a chunk of node-api's is a handle of this module's.
import duckdb from '@duckdb/node-bindings';
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

/**
 * One column: its Arrow field and how to build its Arrow data from a DuckDB vector, either from
 * the vector's buffers (`read`: `size` items, all of them or those at `rows`) or value by value
 * from @duckdb/node-api's items (`data`: arrowData's way, and the reference the tests hold `read` to).
 */
interface Column {
  field: Field;
  read(v: duckdb.Vector, size: number, rows?: Rows): Data;
  data(v: DuckDBVector, rows: Rows): Data;
}

interface Validity {
  nullBitmap?: Uint8Array;
  nullCount: number;
}

/** A validity bitmap of `n` rows, and how many are NULL, from a test of each row. */
function validity(n: number, valid: (i: number) => boolean): Validity {
  const bits = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (valid(i)) bits[i >> 3]! |= 1 << (i & 7);
    else nulls++;
  }
  return nulls === 0 ? { nullCount: 0 } : { nullBitmap: bits, nullCount: nulls };
}

const ONES = Uint8Array.from({ length: 256 }, (_, b) => b.toString(2).replace(/0/g, '').length);

/**
 * A vector's validity mask as Arrow's bitmap. DuckDB's mask is 64-bit words, 1 = valid, lowest bit
 * first; on a little-endian machine (every platform the bindings ship for) its bytes are Arrow's
 * bitmap byte for byte. No mask means no NULL.
 */
function maskOf(v: duckdb.Vector, size: number, rows?: Rows): Validity {
  const mask = duckdb.vector_get_validity(v, Math.ceil(size / 64) * 8);
  if (!mask) return { nullCount: 0 };
  if (rows) {
    return validity(rows.length, (i) => ((mask[rows[i]! >> 3]! >> (rows[i]! & 7)) & 1) === 1);
  }
  const bits = mask.subarray(0, (size + 7) >> 3);
  // Bits past the last row are DuckDB's; Arrow's are zero there.
  if (size & 7) bits[bits.length - 1]! &= (1 << (size & 7)) - 1;
  let valid = 0;
  for (let i = 0; i < bits.length; i++) valid += ONES[bits[i]!]!;
  return valid === size ? { nullCount: 0 } : { nullBitmap: bits, nullCount: size - valid };
}

function isValid(mask: Validity, i: number): boolean {
  return !mask.nullBitmap || ((mask.nullBitmap[i >> 3]! >> (i & 7)) & 1) === 1;
}

/**
 * The bytes of `size` items of `width` bytes (a copy of DuckDB's, ours to keep), or of the items
 * at `rows` in their order.
 */
function itemBytes(v: duckdb.Vector, size: number, width: number, rows?: Rows): Uint8Array {
  const all = duckdb.vector_get_data(v, size * width);
  if (!rows) return all;
  const n = rows.length;
  const out = new Uint8Array(n * width);
  if (width % 4 === 0) {
    // Whole 32-bit words: BigInt64Array would make a BigInt of each item.
    const w = width / 4;
    const from = new Int32Array(all.buffer, all.byteOffset, size * w);
    const to = new Int32Array(out.buffer);
    for (let i = 0; i < n; i++) for (let k = 0, a = rows[i]! * w, b = i * w; k < w; k++) to[b + k] = from[a + k]!;
  } else {
    for (let i = 0; i < n; i++) for (let k = 0, a = rows[i]! * width, b = i * width; k < width; k++) out[b + k] = all[a + k]!;
  }
  return out;
}

type Fixed = Int8Array | Int16Array | Int32Array | BigInt64Array | Uint8Array | Uint16Array | Uint32Array | BigUint64Array | Float32Array | Float64Array;

interface FixedArray {
  new (n: number): Fixed;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): Fixed;
  readonly BYTES_PER_ELEMENT: number;
}

/**
 * Fixed-width types: the Arrow type, its array (the layout of DuckDB's items too: dates are days
 * as int32, timestamps int64 in their unit), and what of a @duckdb/node-api item (never NULL) goes
 * into the array (the item itself for numbers).
 */
const FIXED: Partial<Record<DuckDBTypeId, [() => DataType, FixedArray, ((x: never) => number | bigint)?]>> = {
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
    read(v, size, rows) {
      const bytes = itemBytes(v, size, Array_.BYTES_PER_ELEMENT, rows);
      const n = rows ? rows.length : size;
      return makeData({ type, length: n, ...maskOf(v, size, rows), data: new Array_(bytes.buffer, bytes.byteOffset, n) } as never);
    },
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

/** The 32-bit words of a Decimal128's values: each 128-bit two's complement, low word first. */
function decimalData(type: Decimal, n: number, mask: Validity, words: Int32Array): Data {
  return makeData({ type, length: n, ...mask, data: new Uint32Array(words.buffer, words.byteOffset, n * 4) });
}

/**
 * Decimal128 from the unscaled integers DuckDB stores: int16, int32 or int64 for a width of up to
 * 4, 9 or 18 digits, sign-extended to 128 bits here, or int128, the layout of Decimal128 already.
 */
function decimal(type: Decimal, name: string, width: number): Column {
  const bytes = width <= 4 ? 2 : width <= 9 ? 4 : width <= 18 ? 8 : 16;
  return {
    ...decimalItems(type, name, (x) => (x as { value: bigint }).value),
    read(v, size, rows) {
      const n = rows ? rows.length : size;
      const mask = maskOf(v, size, rows);
      const from = itemBytes(v, size, bytes, rows);
      if (bytes === 16) return decimalData(type, n, mask, new Int32Array(from.buffer, from.byteOffset, n * 4));
      const words = new Int32Array(n * 4);
      if (bytes === 8) {
        const x = new Int32Array(from.buffer, from.byteOffset, n * 2);
        for (let i = 0; i < n; i++) {
          const high = x[2 * i + 1]!;
          words[4 * i] = x[2 * i]!;
          words[4 * i + 1] = high;
          words[4 * i + 2] = words[4 * i + 3] = high >> 31;
        }
      } else {
        const x = bytes === 4 ? new Int32Array(from.buffer, from.byteOffset, n) : new Int16Array(from.buffer, from.byteOffset, n);
        for (let i = 0; i < n; i++) {
          const u = x[i]!;
          words[4 * i] = u;
          words[4 * i + 1] = words[4 * i + 2] = words[4 * i + 3] = u >> 31;
        }
      }
      return decimalData(type, n, mask, words);
    },
  };
}

/** Decimal128 value by value: each value as 128-bit two's complement, low 64 bits first (little-endian words). */
function decimalItems(type: Decimal, name: string, unscaled: (x: unknown) => bigint): Omit<Column, 'read'> {
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

/** The top 32 bits of 10^38 - 1: a value whose top word is nearer zero than this has at most 38 digits. */
const MAX_DECIMAL128_TOP = 0x4b3b4ca8;

/**
 * HUGEINT and UHUGEINT as Decimal128(38,0): DuckDB's 128-bit items are Decimal128's words as they
 * are. A value only needs a BigInt when its top word is near the limit of 38 digits.
 */
function huge(name: string, t: DuckDBType, top: Top): Column {
  const type = new Decimal(0, DECIMAL128_DIGITS, 128);
  const signed = t.typeId === DuckDBTypeId.HUGEINT;
  const check = (b: bigint) => {
    if (b > MAX_DECIMAL128 || b < -MAX_DECIMAL128)
      throw new UsageError(`column ${JSON.stringify(top.name)}: ${b} (${t.toString()}) has more than 38 digits, more than Arrow's Decimal128 holds; ${castIt(top.name)}`);
    return b;
  };
  return {
    ...decimalItems(type, name, (x) => check(x as bigint)),
    read(v, size, rows) {
      const n = rows ? rows.length : size;
      const mask = maskOf(v, size, rows);
      const from = itemBytes(v, size, 16, rows);
      const words = new Int32Array(from.buffer, from.byteOffset, n * 4);
      for (let i = 0; i < n; i++) {
        const high = words[4 * i + 3]!;
        if (signed ? high > -MAX_DECIMAL128_TOP && high < MAX_DECIMAL128_TOP : high >>> 0 < MAX_DECIMAL128_TOP) continue;
        // A NULL's slot holds whatever DuckDB left there.
        if (!isValid(mask, i)) continue;
        const x = new BigUint64Array(from.buffer, from.byteOffset + 16 * i, 2);
        const b = (x[1]! << 64n) | x[0]!;
        check(signed ? BigInt.asIntN(128, b) : b);
      }
      return decimalData(type, n, mask, words);
    },
  };
}

/** Utf8 offsets are 32-bit; a chunk is at most 2,048 rows, so only values of ~1 MB each reach this. */
function checkBytes(top: string, n: number, bytes: number): void {
  if (bytes > 0x7fffffff) throw new UsageError(`column ${JSON.stringify(top)}: more than 2 GB of text in one batch of ${n} rows`);
}

/**
 * A vector of 16-byte entries (strings, list entries) as 32-bit words, how many rows are read,
 * their validity, and the offsets to fill.
 */
function entries(v: duckdb.Vector, size: number, rows?: Rows) {
  const n = rows ? rows.length : size;
  const data = duckdb.vector_get_data(v, size * 16);
  return { n, mask: maskOf(v, size, rows), data, words: new Uint32Array(data.buffer, data.byteOffset, size * 4), offsets: new Int32Array(n + 1) };
}

function utf8(name: string, top: string, metadata?: Map<string, string>): Column {
  const type = new Utf8();
  return {
    field: new Field(name, type, true, metadata),
    read(v, size, rows) {
      // DuckDB's strings are 16 bytes each: the length (uint32), then up to 12 bytes of the text
      // itself, or else 4 bytes of it and a pointer to the whole.
      const { n, mask, data: items, words, offsets } = entries(v, size, rows);
      let bytes = 0;
      for (let i = 0; i < n; i++) {
        if (isValid(mask, i)) bytes += words[4 * (rows ? rows[i]! : i)]!;
        offsets[i + 1] = bytes;
      }
      checkBytes(top, n, bytes);
      // Texts that follow each other in DuckDB's memory, each starting where the one before ends
      // (as DuckDB mostly writes them), are copied in one call: every byte it reads is a text's.
      // A chunk's texts in one such run are the column's bytes as they come.
      let data: Uint8Array | undefined;
      let first = -1;
      let high = 0;
      let end = 0;
      let at = 0;
      let length = 0;
      const copy = () => {
        if (length === 0) return;
        const run = duckdb.get_data_from_pointer(items.buffer as ArrayBuffer, items.byteOffset + 16 * first + 8, length);
        if (length === bytes) data = run;
        else (data ??= new Uint8Array(bytes)).set(run, at);
        length = 0;
      };
      for (let i = 0; i < n; i++) {
        if (!isValid(mask, i)) continue;
        const r = rows ? rows[i]! : i;
        const len = words[4 * r]!;
        if (len === 0) continue;
        if (len <= 12) {
          copy();
          data ??= new Uint8Array(bytes);
          for (let k = 0, from = 16 * r + 4, to = offsets[i]!; k < len; k++) data[to + k] = items[from + k]!;
          continue;
        }
        const low = words[4 * r + 2]!;
        const up = words[4 * r + 3]!;
        if (length > 0 && low === end && up === high) {
          length += len;
          end += len;
          continue;
        }
        copy();
        first = r;
        high = up;
        end = low + len;
        at = offsets[i]!;
        length = len;
      }
      copy();
      return makeData({ type, length: n, ...mask, valueOffsets: offsets, data: data ?? new Uint8Array(0) });
    },
    data: (v, rows) => textData(type, top, rows.length, (i) => v.getItem(rows[i]!) as string | null),
  };
}

/** Utf8 data of `n` texts, one by one (null: NULL). */
function textData(type: Utf8, top: string, n: number, text: (i: number) => string | null): Data {
  const texts: string[] = new Array(n);
  const offsets = new Int32Array(n + 1);
  let bytes = 0;
  const bits = validity(n, (i) => {
    const x = text(i);
    if (x !== null) {
      texts[i] = x;
      bytes += Buffer.byteLength(x, 'utf8');
    }
    offsets[i + 1] = bytes;
    return x !== null;
  });
  checkBytes(top, n, bytes);
  const data = Buffer.alloc(bytes);
  for (let i = 0; i < n; i++) if (texts[i] !== undefined) data.write(texts[i]!, offsets[i]!, 'utf8');
  return makeData({ type, length: n, ...bits, valueOffsets: offsets, data: new Uint8Array(data.buffer, data.byteOffset, bytes) });
}

/**
 * The digits of one of DuckDB's BIGNUM values: a 3-byte header whose top bit is set for a value
 * of 0 or more, then the magnitude's bytes, most significant first; a negative value has every
 * byte inverted.
 */
function bignumText(b: Uint8Array): string {
  const positive = (b[0]! & 0x80) !== 0;
  let hex = '';
  for (let i = 3; i < b.length; i++) hex += ((positive ? b[i]! : ~b[i]! & 0xff) | 0x100).toString(16).slice(1);
  const x = BigInt(`0x${hex || '0'}`);
  return (positive ? x : -x).toString();
}

/**
 * BIGNUM (an amount of the views, and its sums) as Utf8 of its digits: Arrow's widest decimal,
 * Decimal256, holds 76 digits and a uint256 has up to 78.
 */
function bignum(name: string, top: string): Column {
  const type = new Utf8();
  return {
    field: new Field(name, type, true),
    read(v, size, rows) {
      // Stored as DuckDB stores text (utf8's read): the bytes inline when 12 or fewer, else behind a pointer.
      const { n, mask, data: items, words } = entries(v, size, rows);
      return textData(type, top, n, (i) => {
        if (!isValid(mask, i)) return null;
        const r = rows ? rows[i]! : i;
        const len = words[4 * r]!;
        const bytes = len <= 12 ? items.subarray(16 * r + 4, 16 * r + 4 + len) : duckdb.get_data_from_pointer(items.buffer as ArrayBuffer, items.byteOffset + 16 * r + 8, len);
        return bignumText(bytes);
      });
    },
    data: (v, rows) => textData(type, top, rows.length, (i) => (v.getItem(rows[i]!) as bigint | null)?.toString() ?? null),
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
    case DuckDBTypeId.BOOLEAN: {
      const type = new Bool();
      return {
        field: new Field(name, type, true),
        read(v, size, rows) {
          const n = rows ? rows.length : size;
          const items = itemBytes(v, size, duckdb.sizeof_bool, rows);
          const out = new Uint8Array((n + 7) >> 3);
          for (let i = 0, w = duckdb.sizeof_bool; i < n; i++) {
            let yes = 0;
            for (let k = 0; k < w; k++) yes |= items[i * w + k]!;
            if (yes) out[i >> 3]! |= 1 << (i & 7);
          }
          return makeData({ type, length: n, ...maskOf(v, size, rows), data: out });
        },
        data(v, rows) {
          const n = rows.length;
          const out = new Uint8Array((n + 7) >> 3);
          const bits = validity(n, (i) => {
            const x = v.getItem(rows[i]!) as boolean | null;
            if (x === null) return false;
            if (x) out[i >> 3]! |= 1 << (i & 7);
            return true;
          });
          return makeData({ type, length: n, ...bits, data: out });
        },
      };
    }
    case DuckDBTypeId.DECIMAL:
      return decimal(new Decimal(t.scale, t.width, 128), name, t.width);
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return huge(name, t, top);
    case DuckDBTypeId.VARCHAR:
      return utf8(name, top.name, t.alias === 'JSON' ? JSON_FIELD : undefined);
    case DuckDBTypeId.BIGNUM:
      return bignum(name, top.name);
    case DuckDBTypeId.SQLNULL: {
      const data = (n: number) => makeData({ type: new Null(), length: n });
      return {
        field: new Field(name, new Null(), true),
        read: (_v, size, rows) => data(rows ? rows.length : size),
        data: (_v, rows) => data(rows.length),
      };
    }
    case DuckDBTypeId.LIST: {
      const item = column('item', t.valueType, top);
      const type = new List(item.field);
      return {
        field: new Field(name, type, true),
        read(v, size, rows) {
          // Each entry is its offset and length in the child vector (two uint64).
          const { n, mask, words, offsets } = entries(v, size, rows);
          let count = 0;
          // The common case, entries one after the other from the child's start, reads the child
          // whole; otherwise its items are gathered in the lists' order.
          let inOrder = true;
          for (let i = 0; i < n; i++) {
            if (isValid(mask, i)) {
              const r = rows ? rows[i]! : i;
              if (words[4 * r]! + words[4 * r + 1]! * 2 ** 32 !== count) inOrder = false;
              count += words[4 * r + 2]! + words[4 * r + 3]! * 2 ** 32;
            }
            offsets[i + 1] = count;
          }
          if (count > 0x7fffffff) throw new UsageError(`column ${JSON.stringify(top.name)}: more than 2^31 list items in one batch of ${n} rows`);
          const child = duckdb.list_vector_get_child(v);
          const childSize = duckdb.list_vector_get_size(v);
          let gathered: Int32Array | undefined;
          if (!inOrder || count !== childSize) {
            gathered = new Int32Array(count);
            for (let i = 0, g = 0; i < n; i++) {
              if (!isValid(mask, i)) continue;
              const r = rows ? rows[i]! : i;
              for (let k = 0, at = words[4 * r]! + words[4 * r + 1]! * 2 ** 32, len = offsets[i + 1]! - offsets[i]!; k < len; k++) gathered[g++] = at + k;
            }
          }
          return makeData({ type, length: n, ...mask, valueOffsets: offsets, child: item.read(child, childSize, gathered) });
        },
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
        read(v, size, rows) {
          const children = entries.map((e, k) => e.read(duckdb.struct_vector_get_child(v, k), size, rows));
          return makeData({ type, length: rows ? rows.length : size, ...maskOf(v, size, rows), children });
        },
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

  /** `conn` and `sql`: what the result streams from, for the reason of a failure midway (checkStreamEnd). */
  constructor(
    private readonly result: DuckDBResult,
    private readonly conn: DuckDBConnection,
    private readonly sql: string,
  ) {
    const names = result.deduplicatedColumnNames();
    this.columns = result.columnTypes().map((t, i) => column(names[i]!, t));
    this.schema = new Schema(this.columns.map((c) => c.field));
  }

  /** One DuckDB chunk as one record batch, from its vectors' buffers. */
  batch(chunk: DuckDBDataChunk): RecordBatch {
    const n = chunk.rowCount;
    return this.of(n, this.columns.map((c, i) => c.read(duckdb.data_chunk_get_vector(chunk.chunk, i), n)));
  }

  /** The same batch built value by value from @duckdb/node-api's items: what the tests hold batch() to. */
  batchByItems(chunk: DuckDBDataChunk): RecordBatch {
    const rows = firstRows(chunk.rowCount);
    return this.of(chunk.rowCount, this.columns.map((c, i) => c.data(chunk.getColumnVector(i), rows)));
  }

  private of(n: number, children: Data[]): RecordBatch {
    return new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: n, nullCount: 0, children }));
  }

  /**
   * The record batches, a chunk at a time (nothing holds the whole result). DuckDB fetches the
   * next chunk, on its own thread, while this one is converted: a sorted result's chunks are
   * gathered at each fetch, which cost about half as much as their conversion. So at most two
   * chunks are held.
   */
  async *batches(): AsyncGenerator<RecordBatch> {
    let next: Promise<DuckDBDataChunk | null> | undefined = this.result.fetchChunk();
    let rows = 0;
    try {
      for (;;) {
        const chunk = await next;
        next = undefined;
        if (!chunk || chunk.rowCount === 0) {
          // Ended, or failed midway: DuckDB's client ends both alike.
          await checkStreamEnd(this.conn, this.result, rows, this.sql);
          return;
        }
        rows += chunk.rowCount;
        next = this.result.fetchChunk();
        // Its failure is met by the await above once the reader asks for the next batch; until
        // then (the reader may take its time) it must not count as a rejection nobody handles.
        next.catch(() => undefined);
        yield this.batch(chunk);
      }
    } finally {
      // A reader that stops early: the fetch under way ends before the result is let go, and its
      // failure (the reader asked for no more) is not one.
      if (next) await next.catch(() => undefined);
    }
  }
}

/** Streams the result of `sql` (its last statement) from DuckDB; the types are checked first. */
export async function arrowResult(conn: DuckDBConnection, sql: string): Promise<ArrowResult> {
  return new ArrowResult(await conn.stream(sql), conn, sql);
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
