// JSON numbers kept as sent (src/json.ts): what a double would change stays its text, the rest is
// JSON.parse's; written back, the text is the text that came.
import { describe, expect, it } from 'vitest';
import { ExactNumber, parseExact, stringifyExact } from '../../src/json.js';

/** An ExactNumber's text, or undefined for anything else. */
const exactText = (v: unknown) => (v instanceof ExactNumber ? v.text : undefined);

const texts = (v: unknown): unknown => (v instanceof ExactNumber ? `#${v.text}` : Array.isArray(v) ? v.map(texts) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, texts(x)])) : v);

describe('parseExact', () => {
  it('keeps every number a double would change as its text: past 2^53, past 17 digits, a form String() would not give back', () => {
    const v = parseExact('{"amount":18446744073709551615,"weight":9007199254740993,"price":0.000000123456789012345678,"small":0.00000012,"one":1.0,"exp":1e3,"neg":-9007199254740993}');
    expect(texts(v)).toEqual({
      amount: '#18446744073709551615',
      weight: '#9007199254740993',
      price: '#0.000000123456789012345678',
      small: '#0.00000012',
      one: '#1.0',
      exp: '#1e3',
      neg: '#-9007199254740993',
    });
  });

  it('keeps what a double holds as a number: safe integers, 2^53 - 1, decimals whose text it gives back', () => {
    const v = parseExact('[9007199254740991,-5,0,-0,27.41,0.0042,1e+21,123456789012345678901234567890123,{"x":12.5}]') as unknown[];
    expect(v.slice(0, 7)).toEqual([9007199254740991, -5, 0, -0, 27.41, 0.0042, 1e21]);
    expect(exactText(v[7])).toBe('123456789012345678901234567890123');
    expect(v[8]).toEqual({ x: 12.5 });
  });

  it('is JSON.parse where nothing would change: digits inside strings are not numbers', () => {
    for (const text of ['{"a":"12345678901234567890","b":":99999999999999999","c":[1,2.5,"x,1.00"]}', '{"t":"2025-01-02T03:04:05.999999999Z","n":null,"b":true}', '[]', '"only"']) {
      expect(parseExact(text)).toEqual(JSON.parse(text));
    }
    // A string that looks like an unsafe number makes the exact parser read the page: same result.
    const page = '{"memo":"x:0.10000000000000001","n":3}';
    expect(parseExact(page)).toEqual(JSON.parse(page));
  });

  it('as JSON.parse: the last of a repeated key wins, __proto__ is an own field, bad JSON is a SyntaxError', () => {
    const v = parseExact('{"a":1,"a":18446744073709551615,"__proto__":{"polluted":18446744073709551616}}') as Record<string, unknown>;
    expect(exactText(v.a)).toBe('18446744073709551615');
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['a', '__proto__']);
    expect((v as { polluted?: unknown }).polluted).toBeUndefined();
    expect(() => parseExact('{"a":18446744073709551615')).toThrow(SyntaxError);
    expect(() => parseExact('{"a":1')).toThrow(SyntaxError);
  });
});

describe('ExactNumber and stringifyExact', () => {
  it('writes each number as the text it came as, and everything else as JSON.stringify does', () => {
    const text = '{"amount":18446744073709551615,"price":0.000000123456789012345678,"list":[1,0.5,"s",null,true],"nested":{"w":9007199254740993}}';
    expect(stringifyExact(parseExact(text))).toBe(text);
    const plain = { a: [1, 'two', { b: null }], c: undefined, d: () => 1, e: new Date(0) };
    expect(stringifyExact(plain)).toBe(JSON.stringify(plain));
    // Inside an object that has a toJSON, as in any other.
    expect(stringifyExact({ m: { toJSON: () => ({ w: new ExactNumber('12345678901234567890') }) } })).toBe('{"m":{"w":12345678901234567890}}');
  });

  it('reads as its text and, for arithmetic, as the nearest double', () => {
    const n = new ExactNumber('18446744073709551615');
    expect(String(n)).toBe('18446744073709551615');
    expect(`${n}`).toBe('18446744073709551615');
    expect(Number(n)).toBe(18446744073709551615);
    expect(n.valueOf() > 1e19).toBe(true);
    // Plain JSON.stringify can only write the double: stringifyExact exists for that.
    expect(JSON.stringify({ n })).toBe('{"n":18446744073709552000}');
    expect(stringifyExact({ n })).toBe('{"n":18446744073709551615}');
  });
});

describe('an integer past 2^53 that a double happens to hold', () => {
  it('is kept as text too: a column of digits reads only safe integers or text', () => {
    expect(Number('10925074219523490')).toBe(10925074219523490);
    expect(exactText((parseExact('{"amount":10925074219523490}') as { amount: unknown }).amount)).toBe('10925074219523490');
  });
});

describe('a number alone', () => {
  it('is kept as text too when a double would change it', () => {
    expect(exactText(parseExact(' 18446744073709551615 '))).toBe('18446744073709551615');
    expect(parseExact('27.41')).toBe(27.41);
    expect(() => parseExact('12 13')).toThrow(SyntaxError);
  });
});

describe('parseExact with keys (a price stream: Money.value)', () => {
  it('looks at the numbers under those keys only: a page whose prices a double holds is JSON.parse\'s', () => {
    const fine = '{"price":{"value":27.41},"value":"5","blockTimestamp":1700000000,"other":0.10000000000000001}';
    expect(parseExact(fine, ['value'])).toEqual(JSON.parse(fine));
    const dust = '{"price":{"value":0.000000123456789012345678},"value":"5","other":0.10000000000000001}';
    const v = parseExact(dust, ['value']) as { price: { value: unknown }; value: unknown; other: unknown };
    expect(exactText(v.price.value)).toBe('0.000000123456789012345678');
    // Read exactly, the page keeps the other numbers' text too; strings stay strings.
    expect(exactText(v.other)).toBe('0.10000000000000001');
    expect(v.value).toBe('5');
  });
});
