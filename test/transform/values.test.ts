import { describe, expect, it } from 'vitest';
import * as V from '../../src/transform/values.js';
import { ExactNumber } from '../../src/json.js';

const UINT256_MAX = '115792089237316195423570985008687907853269984665640564039457584007913129639935';

describe('amount', () => {
  it('keeps uint256 max exactly in raw and leaves the DECIMAL null', () => {
    expect(V.amount(UINT256_MAX)).toEqual({ raw: UINT256_MAX, decimal: null });
  });
  it('fits 38 digits and not 39', () => {
    const d38 = '9'.repeat(38);
    const d39 = '1' + '0'.repeat(38);
    expect(V.amount(d38)).toEqual({ raw: d38, decimal: d38 });
    expect(V.amount(d39)).toEqual({ raw: d39, decimal: null });
  });
  it('zero, and leading zeros kept in raw but not counted as digits', () => {
    expect(V.amount('0')).toEqual({ raw: '0', decimal: '0' });
    expect(V.amount('000')).toEqual({ raw: '000', decimal: '0' });
    const padded = '00' + '9'.repeat(38);
    expect(V.amount(padded)).toEqual({ raw: padded, decimal: '9'.repeat(38) });
  });
  it('takes an exact JSON number but rejects one that may have been rounded', () => {
    expect(V.amount(42)).toEqual({ raw: '42', decimal: '42' });
    expect(V.amount(2 ** 60)).toBeInstanceOf(V.Bad);
    expect(V.amount(1.5)).toBeInstanceOf(V.Bad);
  });
  it('rejects signs, decimals, hex and empty strings', () => {
    for (const v of ['-1', '1.0', '0x10', '', ' 1', '1e3', null, true]) expect(V.amount(v)).toBeInstanceOf(V.Bad);
  });
});

describe('other values', () => {
  it('bigint stays text within int64', () => {
    expect(V.bigint('9223372036854775807')).toBe('9223372036854775807');
    expect(V.bigint('9223372036854775808')).toBeInstanceOf(V.Bad);
    expect(V.bigint(123)).toBe('123');
  });
  it('lowercases mixed-case EVM addresses and refuses malformed ones', () => {
    expect(V.evmAddress('0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E')).toBe('0xb97ef9ef8734c71904d8002f8b6bc66dd9c48a6e');
    expect(V.evmAddress('0x12')).toBeInstanceOf(V.Bad);
    expect(V.evmAddress('b97ef9ef8734c71904d8002f8b6bc66dd9c48a6e')).toBeInstanceOf(V.Bad);
  });
  it('timestamps are Unix seconds', () => {
    expect(V.timestamp(1700000000)).toBe(1700000000);
    expect(V.timestamp('1700000000')).toBe(1700000000);
    expect(V.timestamp(1700000000000)).toBeInstanceOf(V.Bad);
    expect(V.timestamp(-1)).toBeInstanceOf(V.Bad);
  });
  it('integers are 32-bit, doubles finite, booleans strict', () => {
    expect(V.integer(7)).toBe(7);
    expect(V.integer(2 ** 31)).toBeInstanceOf(V.Bad);
    expect(V.double(0.25)).toBe(0.25);
    expect(V.double('abc')).toBeInstanceOf(V.Bad);
    expect(V.boolean('true')).toBeInstanceOf(V.Bad);
  });
});

describe('numbers kept exact (ExactNumber, src/json.ts)', () => {
  const big = new ExactNumber('18446744073709551615');
  it('land their digits as sent where a column takes digits, text or JSON', () => {
    expect(V.amount(big)).toEqual({ raw: '18446744073709551615', decimal: '18446744073709551615' });
    expect(V.bigint(new ExactNumber('9007199254740993'))).toBe('9007199254740993');
    expect(V.bigint(big)).toBeInstanceOf(V.Bad);
    expect(V.timestamp(new ExactNumber('9007199254740993'))).toBeInstanceOf(V.Bad);
    expect(V.varchar(new ExactNumber('0.000000123456789012345678'))).toBe('0.000000123456789012345678');
    expect(V.json({ amount: big, list: [new ExactNumber('1.0')] })).toBe('{"amount":18446744073709551615,"list":[1.0]}');
    expect(V.json(big)).toBe('18446744073709551615');
  });
  it('read as the nearest double where a column is one, and are refused as what they are not', () => {
    expect(V.double(new ExactNumber('0.000000123456789012345678'))).toBe(1.2345678901234568e-7);
    expect(V.integer(new ExactNumber('1.0'))).toBe(1);
    expect(V.integer(big)).toBeInstanceOf(V.Bad);
    expect(V.amount(new ExactNumber('1.5e30'))).toBeInstanceOf(V.Bad);
    const bad = V.boolean(big) as V.Bad;
    expect(bad.reason).toBe('expected true or false, got 18446744073709551615');
  });
  it('integer lists: numbers of 32 bits, as AvalancheGo writes its ACP sets', () => {
    expect(V.integerList([23, 176, 194])).toEqual([23, 176, 194]);
    expect(V.integerList([])).toEqual([]);
    expect(V.integerList([1, 'x'])).toBeInstanceOf(V.Bad);
    expect(V.integerList([2 ** 40])).toBeInstanceOf(V.Bad);
    expect(V.integerList('1,2')).toBeInstanceOf(V.Bad);
  });
});
