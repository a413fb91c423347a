// Service text printed to a terminal is inert (escapes instead of control characters); CSV cells a
// spreadsheet would run as formulas get a quote.
import { describe, expect, it } from 'vitest';
import { addNames, bounded, boundedAll, csvSafe, inert, inertAll, inertJson, LINE_CHARS, MAX_NAMES, OTHER_NAMES, TEXT_CHARS } from '../../src/text.js';

/** Whether `s` holds a character a terminal acts on. */
const active = (s: string) => /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(s);

describe('inert', () => {
  it('escapes every C0 character, DEL and every C1 character', () => {
    for (let c = 0; c < 0x20; c++) expect(inert(String.fromCharCode(c))).toBe(`\\x${c.toString(16).padStart(2, '0')}`);
    expect(inert('\x7f')).toBe('\\x7f');
    for (let c = 0x80; c < 0xa0; c++) expect(inert(String.fromCharCode(c))).toBe(`\\u${c.toString(16).padStart(4, '0')}`);
    expect(inert('\u009b31m')).toBe('\\u009b31m');
  });

  it('escapes the bidi embeddings, overrides and isolates', () => {
    for (const c of [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]) expect(inert(`a${String.fromCharCode(c)}b`)).toBe(`a\\u${c.toString(16)}b`);
    expect(inert('invoice\u202egpj.exe')).toBe('invoice\\u202egpj.exe');
  });

  it('escapes lone surrogates and keeps pairs', () => {
    expect(inert('a\ud800b')).toBe('a\\ud800b');
    expect(inert('a\udc00')).toBe('a\\udc00');
    expect(inert('\udc00\ud800')).toBe('\\udc00\\ud800');
    expect(inert('🦆 \ud83e\udd86')).toBe('🦆 🦆');
  });

  it('a message with a title change, a clipboard write, an erase-line and a fake green line becomes printable', () => {
    const hostile = 'not found\x1b]0;pwned\x07\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b[2K\r\x1b[32mrun finished: 0 errors\x1b[0m\n';
    const s = inert(hostile);
    expect(active(s)).toBe(false);
    expect(s).toBe('not found\\x1b]0;pwned\\x07\\x1b]52;c;Y3VybCBldmlsfHNo\\x07\\x1b[2K\\x0d\\x1b[32mrun finished: 0 errors\\x1b[0m\\x0a');
  });

  it('leaves ordinary text alone, non-ASCII letters and emoji included', () => {
    for (const s of ['', 'USD Coin (USDC.e)', 'café é', '中文代币', 'Ωmega ß ø', '🚀 to the moon 👍🏽', 'back\\slash \\x1b as text', '\u00a0nbsp and \u200b zero width'])
      expect(inert(s)).toBe(s);
  });

  it('keeps newlines and tabs when asked, and nothing else', () => {
    expect(inert('a\n\tb\r\x1b', { lines: true })).toBe('a\n\tb\\x0d\\x1b');
    expect(inert('a\n\tb')).toBe('a\\x0a\\x09b');
  });
});

describe('inertAll', () => {
  it('every string and key of plain data, on one line each; other values as they are', () => {
    const v = { errors: ['a\x1b[2K\nb'], n: 1.5, ok: true, none: null, fields: { 'k\u009b': 2 } };
    expect(inertAll(v)).toEqual({ errors: ['a\\x1b[2K\\x0ab'], n: 1.5, ok: true, none: null, fields: { 'k\\u009b': 2 } });
    expect(v.errors[0]).toBe('a\x1b[2K\nb');
  });
});

describe('inertJson', () => {
  it('writes DEL, C1, bidi and lone surrogates as \\u escapes: the same value, inert to a terminal', () => {
    const value = { msg: 'x\u009b2K\u202e\x7f\ud800 é 中 🦆', n: 1 };
    const line = inertJson(JSON.stringify(value));
    expect(active(line)).toBe(false);
    expect(line).toContain('\\u009b2K\\u202e\\u007f\\ud800 é 中 🦆');
    expect(JSON.parse(line)).toEqual(value);
  });
});

describe('csvSafe (OWASP CSV injection)', () => {
  it('quotes a cell that begins with =, +, -, @, tab or carriage return', () => {
    expect(csvSafe('=HYPERLINK("http://evil.example","click")')).toBe(`'=HYPERLINK("http://evil.example","click")`);
    expect(csvSafe('@SUM(A1:A2)')).toBe(`'@SUM(A1:A2)`);
    expect(csvSafe('+1+cmd|x')).toBe(`'+1+cmd|x`);
    expect(csvSafe('-2+3')).toBe(`'-2+3`);
    expect(csvSafe('\t=1')).toBe(`'\t=1`);
    expect(csvSafe('\r=1')).toBe(`'\r=1`);
  });

  it('leaves other cells alone', () => {
    for (const s of ['', 'USD Coin', 'a=b', ' =1', "'=1", '0x12', 'é=', '中'] as const) expect(csvSafe(s)).toBe(s);
  });
});

describe('bounded (service text of megabytes)', () => {
  const MB4 = 4 * 1024 * 1024;

  it('leaves text within the bound as it is', () => {
    expect(bounded('page token abc')).toBe('page token abc');
    const edge = 'x'.repeat(TEXT_CHARS);
    expect(bounded(edge)).toBe(edge);
  });

  it('cuts longer text to the bound, its head kept and its length said', () => {
    const s = 'ab'.repeat(MB4 / 2);
    const b = bounded(s);
    expect(b.length).toBeLessThanOrEqual(TEXT_CHARS);
    expect(b.endsWith('…[cut: 4,194,304 chars]')).toBe(true);
    expect(s.startsWith(b.slice(0, b.indexOf('…')))).toBe(true);
    expect(b.indexOf('…')).toBeGreaterThan(TEXT_CHARS - 40);
    expect(bounded('y'.repeat(TEXT_CHARS + 1))).toMatch(/^y+…\[cut: 2,001 chars\]$/);
    expect(bounded('z'.repeat(1000), 100)).toHaveLength(100);
  });

  it('never splits a surrogate pair at the cut', () => {
    for (let pad = 0; pad < 2; pad++) {
      const b = bounded('a'.repeat(pad) + '🦆'.repeat(5000));
      expect(b).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
      expect(b.length).toBeLessThanOrEqual(TEXT_CHARS);
    }
  });

  it('boundedAll bounds every string of plain data, keys too, and leaves the rest', () => {
    const long = 'k'.repeat(MB4);
    const out = boundedAll({ [long]: [long, 5, null, { token: long }], n: 1 }, LINE_CHARS);
    expect(JSON.stringify(out).length).toBeLessThan(4 * LINE_CHARS);
    const [key] = Object.keys(out);
    expect(key).toMatch(/…\[cut: 4,194,304 chars\]$/);
    expect((out as Record<string, unknown[]>)[key!]![1]).toBe(5);
    expect(out.n).toBe(1);
  });
});

describe('addNames (a tally of service names)', () => {
  it('adds counts by name', () => {
    const into: Record<string, number> = { a: 1 };
    addNames(into, { a: 2, b: 3 });
    expect(into).toEqual({ a: 3, b: 3 });
  });

  it('thousands of distinct names: MAX_NAMES of them kept, the rest counted under one entry', () => {
    const into: Record<string, number> = {};
    for (let batch = 0; batch < 10; batch++) addNames(into, Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`f${batch}_${i}`, 1])));
    expect(Object.keys(into)).toHaveLength(MAX_NAMES + 1);
    expect(into[OTHER_NAMES]).toBe(20_000 - MAX_NAMES);
    expect(Object.values(into).reduce((a, b) => a + b, 0)).toBe(20_000);
  });

  it('a name of megabytes is bounded; names like constructor and __proto__ count as any other', () => {
    const into: Record<string, number> = {};
    addNames(into, { ['f'.repeat(4_000_000)]: 1, constructor: 2 });
    addNames(into, JSON.parse('{"__proto__": 3, "constructor": 1}') as Record<string, number>);
    expect(Object.keys(into).every((k) => k.length <= TEXT_CHARS)).toBe(true);
    expect(into.constructor).toBe(3);
    expect(Object.getOwnPropertyDescriptor(into, '__proto__')?.value).toBe(3);
    expect(JSON.parse(JSON.stringify(into))).toMatchObject({ constructor: 3 });
  });
});
