// Iceberg's binary single-value serialization (table spec, "Appendix D: Single-value serialization"),
// used for the lower and upper bounds of a data file's columns and of a manifest's partition fields,
// for the types chainlake writes.

export type BoundType = 'boolean' | 'int' | 'long' | 'double' | 'string' | 'timestamptz' | { decimal: [number, number] };

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
/** A lone surrogate: with the `u` flag a paired surrogate is one code point and does not match. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function typeName(type: BoundType): string {
  return typeof type === 'string' ? type : `decimal(${type.decimal[0]},${type.decimal[1]})`;
}

function wrong(type: BoundType, value: unknown, why: string): Error {
  return new Error(`cannot serialize ${typeof value === 'bigint' ? `${value}n` : JSON.stringify(value)} as ${typeName(type)}: ${why}`);
}

/** An integer as a bigint from a bigint or a safe-integer number, within [min, max]. */
function integer(type: BoundType, value: unknown, min: bigint, max: bigint): bigint {
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
  else throw wrong(type, value, 'not an integer');
  if (n < min || n > max) throw wrong(type, value, 'out of range');
  return n;
}

/**
 * The unscaled value of a decimal: a bigint is taken as unscaled already; a string is decimal
 * text ("-12.34") scaled by the type's scale, refused when it has more fraction digits than the scale
 * (rounding a bound would make it wrong).
 */
function unscaled(type: { decimal: [number, number] }, value: unknown): bigint {
  const [precision, scale] = type.decimal;
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'string') {
    const m = /^([+-]?)(\d+)(?:\.(\d+))?$/.exec(value);
    if (!m) throw wrong(type, value, 'not decimal text');
    const fraction = m[3] ?? '';
    if (fraction.length > scale) throw wrong(type, value, `more than ${scale} digits after the point`);
    n = BigInt(m[2]! + fraction.padEnd(scale, '0'));
    if (m[1] === '-') n = -n;
  } else throw wrong(type, value, 'a decimal is given as its unscaled bigint or as decimal text');
  if ((n < 0n ? -n : n) >= 10n ** BigInt(precision)) throw wrong(type, value, `more than ${precision} digits`);
  return n;
}

/** Two's complement big-endian in the fewest bytes that keep the sign (zero is one byte). */
function bigEndianMinimal(n: bigint): Buffer {
  const bytes: number[] = [];
  let rest = n;
  for (;;) {
    const byte = Number(rest & 0xffn);
    bytes.push(byte);
    rest >>= 8n; // arithmetic shift: a negative value ends at -1
    const signBit = (byte & 0x80) !== 0;
    if ((rest === 0n && !signBit) || (rest === -1n && signBit)) break;
  }
  return Buffer.from(bytes.reverse());
}

function fromBigEndian(buf: Buffer): bigint {
  if (buf.length === 0) throw new Error('an empty decimal bound');
  let n = 0n;
  for (const byte of buf) n = (n << 8n) | BigInt(byte);
  return buf[0]! & 0x80 ? n - (1n << BigInt(buf.length * 8)) : n;
}

/**
 * The bound's bytes. int, long and timestamptz (microseconds since the epoch) take a bigint or a
 * safe-integer number; a decimal takes its unscaled bigint or decimal text (see `unscaled`).
 */
export function encodeBound(type: BoundType, value: boolean | number | bigint | string): Buffer {
  if (typeof type === 'object') return bigEndianMinimal(unscaled(type, value));
  switch (type) {
    case 'boolean': {
      if (typeof value !== 'boolean') throw wrong(type, value, 'not a boolean');
      return Buffer.from([value ? 1 : 0]);
    }
    case 'int': {
      const buf = Buffer.alloc(4);
      buf.writeInt32LE(Number(integer(type, value, BigInt(INT_MIN), BigInt(INT_MAX))));
      return buf;
    }
    case 'long':
    case 'timestamptz': {
      const buf = Buffer.alloc(8);
      buf.writeBigInt64LE(integer(type, value, LONG_MIN, LONG_MAX));
      return buf;
    }
    case 'double': {
      if (typeof value !== 'number') throw wrong(type, value, 'not a number');
      const buf = Buffer.alloc(8);
      buf.writeDoubleLE(value);
      return buf;
    }
    case 'string': {
      if (typeof value !== 'string') throw wrong(type, value, 'not a string');
      // UTF-8 has no form for a lone surrogate; Buffer.from would put U+FFFD in its place silently.
      if (LONE_SURROGATE.test(value)) throw wrong(type, value, 'a lone surrogate is not Unicode text');
      return Buffer.from(value, 'utf8');
    }
  }
}

/** The value of a bound's bytes: boolean, int and double as numbers/booleans, long and timestamptz as
 *  bigint, string as text, decimal as its unscaled bigint. */
export function decodeBound(type: BoundType, buf: Buffer): boolean | number | bigint | string {
  const size = (n: number): void => {
    if (buf.length !== n) throw new Error(`a ${typeName(type)} bound has ${n} bytes, not ${buf.length}`);
  };
  if (typeof type === 'object') return fromBigEndian(buf);
  switch (type) {
    case 'boolean':
      size(1);
      return buf[0] !== 0;
    case 'int':
      size(4);
      return buf.readInt32LE(0);
    case 'long':
    case 'timestamptz':
      size(8);
      return buf.readBigInt64LE(0);
    case 'double':
      size(8);
      return buf.readDoubleLE(0);
    case 'string':
      return new TextDecoder('utf-8', { fatal: true }).decode(buf);
  }
}

const MAX_CODE_POINT = 0x10ffff;

/** The code point after `cp`, skipping the surrogate block (no string holds those), or null after the last. */
function nextCodePoint(cp: number): number | null {
  if (cp === 0xd7ff) return 0xe000;
  return cp === MAX_CODE_POINT ? null : cp + 1;
}

/**
 * Bounds of a string column truncated to `n` characters (Iceberg's default metrics mode truncate(16)):
 * the lower bound is the prefix; the upper bound the prefix with its last code point incremented (null when no
 * such bound exists); values of at most n characters are their own bounds.
 *
 * Characters are code points, as in the reference implementation, so an astral character counts once and is
 * never cut in half. When the last code point is U+10FFFF it cannot be incremented, so it is dropped and the one
 * before it incremented instead (a shorter upper bound is still above every value with the longer prefix);
 * null only when every code point of the prefix is U+10FFFF.
 */
export function truncatedBounds(min: string, max: string, n = 16): { lower: string; upper: string | null } {
  if (!Number.isInteger(n) || n < 1) throw new Error(`a truncation length is a positive integer, not ${n}`);
  for (const s of [min, max]) if (LONE_SURROGATE.test(s)) throw new Error(`a bound is Unicode text; ${JSON.stringify(s)} has a lone surrogate`);
  const lower = Array.from(min).slice(0, n).join('');
  const maxPoints = Array.from(max);
  if (maxPoints.length <= n) return { lower, upper: max };
  const prefix = maxPoints.slice(0, n).map((c) => c.codePointAt(0)!);
  for (let i = prefix.length - 1; i >= 0; i--) {
    const next = nextCodePoint(prefix[i]!);
    if (next !== null) return { lower, upper: String.fromCodePoint(...prefix.slice(0, i), next) };
  }
  return { lower, upper: null };
}

/**
 * Orders two values of one bound type as Iceberg does: numbers and bigints by value, booleans false first,
 * strings by code point (the order of their UTF-8 bytes, which is not JavaScript's UTF-16 order for astral
 * characters). Decimals compare as their unscaled bigints.
 */
export function compareValues(a: boolean | number | bigint | string, b: boolean | number | bigint | string): number {
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) return a < b ? -1 : a > b ? 1 : 0;
  throw new Error(`cannot order ${typeof a} against ${typeof b}`);
}
