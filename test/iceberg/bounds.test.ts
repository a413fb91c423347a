import { describe, expect, it } from 'vitest';
import { type BoundType, compareValues, decodeBound, encodeBound, truncatedBounds } from '../../src/iceberg/bounds.js';
import { seeded } from '../random.js';

const hex = (b: Buffer) => b.toString('hex');

describe('binary single-value serialization (Iceberg spec, Appendix D)', () => {
  // [type, value, bytes]: the rules of the appendix worked by hand, and the vectors the Python reference
  // implementation checks its own conversions with (1234, 1.2345, 400000 µs, 123.45, 3.45, ±123.4567, 0.011, 12.34).
  const vectors: Array<[BoundType, boolean | number | bigint | string, string]> = [
    ['boolean', false, '00'],
    ['boolean', true, '01'],
    ['int', 1234, 'd2040000'],
    ['int', 84202, 'ea480100'],
    ['int', -1, 'ffffffff'],
    ['int', -(2 ** 31), '00000080'],
    ['int', 2 ** 31 - 1, 'ffffff7f'],
    ['long', 1n, '0100000000000000'],
    ['long', 1234n, 'd204000000000000'],
    ['long', -2n, 'feffffffffffffff'],
    ['long', -(2n ** 63n), '0000000000000080'],
    ['long', 2n ** 63n - 1n, 'ffffffffffffff7f'],
    ['double', 1.2345, '8d976e1283c0f33f'],
    ['double', 6.0, '0000000000001840'],
    ['double', -0, '0000000000000080'],
    ['string', 'iceberg', Buffer.from('iceberg').toString('hex')],
    ['string', 'é', 'c3a9'],
    ['string', '😀', 'f09f9880'],
    ['string', '', ''],
    ['timestamptz', 400000n, '801a060000000000'],
    ['timestamptz', 100000000000n, '00e8764817000000'],
    // Before 1970: one microsecond and one second before the epoch.
    ['timestamptz', -1n, 'ffffffffffffffff'],
    ['timestamptz', -1_000_000n, 'c0bdf0ffffffffff'],
    [{ decimal: [5, 2] }, 12345n, '3039'],
    [{ decimal: [5, 2] }, '123.45', '3039'],
    [{ decimal: [3, 2] }, '3.45', '0159'],
    [{ decimal: [7, 4] }, '123.4567', '12d687'],
    [{ decimal: [7, 4] }, '-123.4567', 'ed2979'],
    [{ decimal: [10, 3] }, '0.011', '0b'],
    [{ decimal: [4, 2] }, '12.34', '04d2'],
    [{ decimal: [4, 2] }, 1234n, '04d2'],
    [{ decimal: [4, 2] }, '-12.34', 'fb2e'],
    [{ decimal: [4, 2] }, '1.2', '78'], // fewer fraction digits than the scale: 1.20
    [{ decimal: [9, 0] }, 0n, '00'],
    [{ decimal: [9, 0] }, 127n, '7f'],
    [{ decimal: [9, 0] }, 128n, '0080'],
    [{ decimal: [9, 0] }, -128n, '80'],
    [{ decimal: [9, 0] }, -129n, 'ff7f'],
    [{ decimal: [9, 0] }, -1n, 'ff'],
    // The largest and smallest 38-digit decimals: 16 bytes, the top byte keeps the sign without a 17th.
    [{ decimal: [38, 0] }, 10n ** 38n - 1n, '4b3b4ca85a86c47a098a223fffffffff'],
    [{ decimal: [38, 0] }, -(10n ** 38n - 1n), 'b4c4b357a5793b85f675ddc000000001'],
    [{ decimal: [38, 0] }, '99999999999999999999999999999999999999', '4b3b4ca85a86c47a098a223fffffffff'],
    // The largest uint64 needs a ninth byte so that its top bit is not read as a sign.
    [{ decimal: [20, 0] }, 18446744073709551615n, '00ffffffffffffffff'],
    [{ decimal: [20, 0] }, '18446744073709551615', '00ffffffffffffffff'],
  ];

  it.each(vectors)('%j %s -> %s', (type, value, bytes) => {
    expect(hex(encodeBound(type, value))).toBe(bytes);
  });

  it.each(vectors.filter(([type]) => typeof type === 'string'))('%j %s <- %s', (type, value, bytes) => {
    const decoded = decodeBound(type, Buffer.from(bytes, 'hex'));
    // Object.is: -0 must come back as -0.
    expect(Object.is(decoded, typeof value === 'number' && (type === 'long' || type === 'timestamptz') ? BigInt(value) : value)).toBe(true);
  });

  it('decodes a decimal to its unscaled value', () => {
    const decimals: Array<[[number, number], string, bigint]> = [
      [[5, 2], '3039', 12345n],
      [[7, 4], '12d687', 1234567n],
      [[7, 4], 'ed2979', -1234567n],
      [[4, 2], 'fb2e', -1234n],
      [[9, 0], '00', 0n],
      [[9, 0], '0080', 128n],
      [[9, 0], '80', -128n],
      [[9, 0], 'ff7f', -129n],
      [[38, 0], '4b3b4ca85a86c47a098a223fffffffff', 10n ** 38n - 1n],
      [[38, 0], 'b4c4b357a5793b85f675ddc000000001', -(10n ** 38n - 1n)],
      [[20, 0], '00ffffffffffffffff', 2n ** 64n - 1n],
    ];
    for (const [decimal, bytes, unscaled] of decimals) expect(decodeBound({ decimal }, Buffer.from(bytes, 'hex'))).toBe(unscaled);
  });

  it('takes numbers for longs and timestamps when they are safe integers', () => {
    expect(hex(encodeBound('long', 1))).toBe('0100000000000000');
    expect(hex(encodeBound('timestamptz', -1_000_000))).toBe('c0bdf0ffffffffff');
    expect(() => encodeBound('long', 2 ** 53)).toThrow(/not an integer/);
    expect(() => encodeBound('long', 1.5)).toThrow(/not an integer/);
  });

  it('decodes a decimal written with more bytes than needed (sign extension)', () => {
    expect(decodeBound({ decimal: [7, 4] }, Buffer.from('ffed2979', 'hex'))).toBe(-1234567n);
    expect(decodeBound({ decimal: [7, 4] }, Buffer.from('0012d687', 'hex'))).toBe(1234567n);
  });

  it('reads any non-zero byte as true', () => {
    expect(decodeBound('boolean', Buffer.from([2]))).toBe(true);
  });

  it('refuses values the type cannot hold', () => {
    expect(() => encodeBound('int', 2 ** 31)).toThrow(/out of range/);
    expect(() => encodeBound('int', -(2 ** 31) - 1)).toThrow(/out of range/);
    expect(() => encodeBound('long', 2n ** 63n)).toThrow(/out of range/);
    expect(() => encodeBound('timestamptz', -(2n ** 63n) - 1n)).toThrow(/out of range/);
    expect(() => encodeBound('boolean', 1)).toThrow(/not a boolean/);
    expect(() => encodeBound('double', 1n)).toThrow(/not a number/);
    expect(() => encodeBound('string', 5)).toThrow(/not a string/);
    expect(() => encodeBound('string', 'a\uD800b')).toThrow(/lone surrogate/);
    expect(() => encodeBound({ decimal: [38, 0] }, 10n ** 38n)).toThrow(/more than 38 digits/);
    expect(() => encodeBound({ decimal: [4, 2] }, '123.45')).toThrow(/more than 4 digits/);
    expect(() => encodeBound({ decimal: [4, 2] }, '1.234')).toThrow(/more than 2 digits after the point/);
    expect(() => encodeBound({ decimal: [4, 2] }, '1e3')).toThrow(/not decimal text/);
    expect(() => encodeBound({ decimal: [4, 2] }, 12.34)).toThrow(/unscaled bigint or as decimal text/);
  });

  it('refuses bytes of the wrong size or text that is not UTF-8', () => {
    expect(() => decodeBound('int', Buffer.alloc(8))).toThrow(/4 bytes, not 8/);
    expect(() => decodeBound('long', Buffer.alloc(4))).toThrow(/8 bytes, not 4/);
    expect(() => decodeBound('boolean', Buffer.alloc(0))).toThrow(/1 bytes, not 0/);
    expect(() => decodeBound({ decimal: [4, 2] }, Buffer.alloc(0))).toThrow(/empty decimal/);
    expect(() => decodeBound('string', Buffer.from([0xc3]))).toThrow();
  });

  it('round-trips random values of every type, and keeps the order of bytes for strings', () => {
    const random = seeded(20261126);
    const int = () => Math.floor(random() * 2 ** 32) - 2 ** 31;
    const long = () => (BigInt(Math.floor(random() * 2 ** 32)) << 32n) | BigInt(Math.floor(random() * 2 ** 32));
    const signedLong = () => BigInt.asIntN(64, long());
    // Code points from every UTF-8 width, surrogates excluded.
    const codePoint = () => {
      const ranges = [[0x20, 0x7f], [0x80, 0x7ff], [0x800, 0xd7ff], [0xe000, 0xffff], [0x10000, 0x10ffff]] as const;
      const [lo, hi] = ranges[Math.floor(random() * ranges.length)]!;
      return lo + Math.floor(random() * (hi - lo + 1));
    };
    const text = () => String.fromCodePoint(...Array.from({ length: Math.floor(random() * 12) }, codePoint));
    for (let i = 0; i < 500; i++) {
      const n = int();
      expect(decodeBound('int', encodeBound('int', n))).toBe(n);
      const l = signedLong();
      expect(decodeBound('long', encodeBound('long', l))).toBe(l);
      expect(decodeBound('timestamptz', encodeBound('timestamptz', l))).toBe(l);
      const d = new Float64Array(new BigInt64Array([l]).buffer)[0]!;
      if (!Number.isNaN(d)) expect(Object.is(decodeBound('double', encodeBound('double', d)), d)).toBe(true);
      const precision = 1 + Math.floor(random() * 38);
      const unscaled = (long() * long() * long()) % 10n ** BigInt(precision) * (random() < 0.5 ? -1n : 1n);
      const bytes = encodeBound({ decimal: [precision, 0] }, unscaled);
      expect(decodeBound({ decimal: [precision, 0] }, bytes)).toBe(unscaled);
      // Minimal: dropping the first byte would change the value (or leave nothing).
      if (bytes.length > 1) expect(decodeBound({ decimal: [precision, 0] }, bytes.subarray(1))).not.toBe(unscaled);
      const [a, b] = [text(), text()];
      expect(decodeBound('string', encodeBound('string', a))).toBe(a);
      expect(Math.sign(compareValues(a, b))).toBe(Math.sign(Buffer.compare(encodeBound('string', a), encodeBound('string', b))));
    }
  });
});

describe('compareValues', () => {
  it('orders strings by code point, where UTF-16 order differs', () => {
    // U+FF61 sorts after U+1F600 in UTF-16 units (0xFF61 > 0xD83D) but before it by code point.
    expect('\uFF61' > '😀').toBe(true);
    expect(compareValues('\uFF61', '😀')).toBeLessThan(0);
    expect(compareValues(2n, 10n)).toBeLessThan(0);
    expect(compareValues(-3, -3)).toBe(0);
    expect(compareValues(false, true)).toBeLessThan(0);
    expect(() => compareValues('1', 1)).toThrow(/cannot order/);
  });
});

describe('truncatedBounds (truncate(16))', () => {
  it('keeps values of at most n characters as they are', () => {
    expect(truncatedBounds('abc', 'abd')).toEqual({ lower: 'abc', upper: 'abd' });
    const sixteen = 'abcdefghijklmnop';
    expect(truncatedBounds(sixteen, sixteen)).toEqual({ lower: sixteen, upper: sixteen });
  });

  it('cuts the lower bound and increments the last character of the cut upper bound', () => {
    expect(truncatedBounds('abcdefghijklmnopqrst', 'abcdefghijklmnopqrst')).toEqual({ lower: 'abcdefghijklmnop', upper: 'abcdefghijklmnoq' });
    expect(truncatedBounds('aaaa', 'zzzzzz', 3)).toEqual({ lower: 'aaa', upper: 'zz{' });
  });

  it('counts code points: multi-byte and astral characters are one character each', () => {
    // 'é' is two UTF-8 bytes, '😀' four bytes and two UTF-16 units; neither is cut in half.
    expect(truncatedBounds('ééééé', 'ééééé', 3)).toEqual({ lower: 'ééé', upper: 'ééê' });
    expect(truncatedBounds('😀😀😀😀', '😀😀😀😀', 3)).toEqual({ lower: '😀😀😀', upper: '😀😀😁' });
    expect(truncatedBounds('a😀bc', 'a😀bc', 2)).toEqual({ lower: 'a😀', upper: 'a😁' });
    // A string of 3 astral characters has 6 UTF-16 units but is within 3 characters: its own bound.
    expect(truncatedBounds('😀😀😀', '😀😀😀', 3)).toEqual({ lower: '😀😀😀', upper: '😀😀😀' });
  });

  it('steps over the surrogate block and carries past U+10FFFF; null when nothing is above', () => {
    expect(truncatedBounds('a', 'a\uD7FFz', 2).upper).toBe('a\uE000');
    expect(truncatedBounds('a', '\uFFFFz', 1).upper).toBe('\u{10000}');
    expect(truncatedBounds('a', 'b\u{10FFFF}z', 2).upper).toBe('c');
    expect(truncatedBounds('a', '\u{10FFFF}\u{10FFFF}z', 2)).toEqual({ lower: 'a', upper: null });
  });

  it('refuses lone surrogates and a length below one', () => {
    expect(() => truncatedBounds('a\uDC00', 'b')).toThrow(/lone surrogate/);
    expect(() => truncatedBounds('a', 'b', 0)).toThrow(/positive integer/);
  });

  it('gives bounds that hold every value between min and max, on random strings', () => {
    const random = seeded(7);
    const alphabet = ['a', 'z', 'é', '\uD7FF', '\uE000', '\uFFFF', '😀', '\u{10FFFF}'];
    const text = () => Array.from({ length: Math.floor(random() * 8) }, () => alphabet[Math.floor(random() * alphabet.length)]!).join('');
    for (let i = 0; i < 500; i++) {
      const values = Array.from({ length: 5 }, text).sort(compareValues);
      const [min, max] = [values[0]!, values[values.length - 1]!];
      const n = 1 + Math.floor(random() * 5);
      const { lower, upper } = truncatedBounds(min, max, n);
      expect(Array.from(lower).length).toBeLessThanOrEqual(n);
      if (upper !== null) expect(Array.from(upper).length).toBeLessThanOrEqual(n);
      for (const v of values) {
        expect(compareValues(lower, v)).toBeLessThanOrEqual(0);
        if (upper !== null) expect(compareValues(upper, v)).toBeGreaterThanOrEqual(0);
      }
      if (upper === null) expect(Array.from(max).slice(0, n).every((c) => c === '\u{10FFFF}')).toBe(true);
    }
  });
});
