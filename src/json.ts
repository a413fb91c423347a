// JSON numbers kept as sent. A node writes uint64 fields as JSON numbers (an amount of
// 18446744073709551615, a weight of 9007199254740993) and the data service writes prices as JSON
// numbers: JSON.parse rounds anything a double cannot hold, and String() of a double is not the
// text that was sent (0.00000012 becomes 1.2e-7). parseExact keeps such a number as an
// ExactNumber, its text as sent; stringifyExact writes it back as that text. A page whose numbers
// all survive a double (the usual case) is parsed by JSON.parse, so only pages that need it pay
// for the exact parser.
import { parse } from 'lossless-json';

/** When JSON.stringify met an ExactNumber (its toJSON ran): that text must be written exactly. */
let inexact = false;

/** A JSON number whose text a double would not give back, kept as that text. */
export class ExactNumber {
  constructor(readonly text: string) {}

  /** The nearest double, for arithmetic and comparisons that do not need every digit. */
  valueOf(): number {
    return Number(this.text);
  }

  toString(): string {
    return this.text;
  }

  /** Plain JSON.stringify can only write a double; stringifyExact sees this and writes the text. */
  toJSON(): number {
    inexact = true;
    return Number(this.text);
  }
}

const INTEGER = /^-?[0-9]+$/;

/**
 * Whether JSON.parse gives this number back as sent: a safe integer, or a fraction whose double
 * writes this text. An integer past 2^53 is kept as text even where a double happens to hold it
 * (10925074219523490): digits are read only from safe integers or text.
 */
function survives(text: string): boolean {
  const n = Number(text);
  return INTEGER.test(text) ? Number.isSafeInteger(n) : String(n) === text;
}

function numberOf(text: string): number | ExactNumber {
  return survives(text) ? Number(text) : new ExactNumber(text);
}

/**
 * Number tokens that may not survive a double: 16 digits or more, or a fraction or an exponent.
 * A JSON number inside an object or a list follows `:`, `,` or `[` (and whitespace); text inside
 * strings may match too, which only costs the exact parse. A pattern led by that character is the
 * fast one: the regex engine skips to it.
 */
const SUSPECT = /[:,[][ \t\n\r]*(-?[0-9](?:[0-9]{15}|[0-9]*[.eE])[0-9.eE+-]*)/g;
const NUMBER_FIRST = /^[ \t\n\r]*-?[0-9]/;

/** The numbers under these keys only (`"value": 27.41`): a literal the regex engine finds fast. */
const keyed = new Map<string, RegExp>();

function keyedNumbers(keys: readonly string[]): RegExp {
  const id = keys.join(',');
  let re = keyed.get(id);
  if (!re) {
    re = new RegExp(`"(?:${keys.map((k) => k.replace(/[^A-Za-z0-9_]/g, '\\$&')).join('|')})":[ \\t\\n\\r]*(-?[0-9][0-9.eE+-]*)`, 'g');
    keyed.set(id, re);
  }
  return re;
}

function allSurvive(text: string, keys?: readonly string[]): boolean {
  if (NUMBER_FIRST.test(text)) return survives(text.trim());
  const re = keys ? keyedNumbers(keys) : SUSPECT;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) if (!survives(m[1]!)) return false;
  return true;
}

/**
 * JSON.parse, but a number a double would change is an ExactNumber with its text as sent. With
 * `keys`, only the numbers under those keys are looked at first (a price's `value`): a page whose
 * other numbers a double changes is still parsed by JSON.parse when those keys' numbers survive.
 * Throws a SyntaxError for text that is not JSON, as JSON.parse does.
 */
export function parseExact(text: string, keys?: readonly string[]): unknown {
  if (allSurvive(text, keys)) return JSON.parse(text);
  // As JSON.parse: the last of a repeated key wins (lossless-json keeps `__proto__` an own field too).
  return parse(text, null, { parseNumber: numberOf, onDuplicateKey: ({ newValue }) => newValue });
}

/**
 * Which numbers of a page to keep as sent: all that a double would change (true), or those under
 * the given keys (a price's `value`); false or absent: JSON.parse.
 */
export type Exactness = boolean | readonly string[];

/** The parser of pages read with this exactness. */
export function parserFor(exact: Exactness | undefined): (text: string) => unknown {
  if (!exact) return JSON.parse;
  const keys = exact === true ? undefined : exact;
  return (text) => parseExact(text, keys);
}

/** JSON text of `v` without space, as JSON.stringify writes it, an ExactNumber as its text. */
function write(v: unknown): string | undefined {
  if (v instanceof ExactNumber) return v.text;
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  const o = v as Record<string, unknown> & { toJSON?: () => unknown };
  if (typeof o.toJSON === 'function') return write(o.toJSON());
  if (Array.isArray(v)) return `[${v.map((x: unknown) => write(x) ?? 'null').join(',')}]`;
  const parts: string[] = [];
  for (const k of Object.keys(o)) {
    const s = write(o[k]);
    if (s !== undefined) parts.push(`${JSON.stringify(k)}:${s}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * JSON.stringify, but an ExactNumber is written as its text. (Not one that another object's toJSON
 * returns as itself: JSON.stringify writes what a toJSON returns without asking it again.)
 */
export function stringifyExact(v: unknown): string | undefined {
  inexact = false;
  const s = JSON.stringify(v);
  return inexact ? write(v) : s;
}
