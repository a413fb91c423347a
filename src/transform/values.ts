// Conversions of single values as the services send them. Each returns the value to stage, or a
// Bad with the reason the row breaks its schema. Nothing is rounded: big integers stay text, and a
// JSON number a double would change arrives as an ExactNumber (src/json.ts) whose text is used.
import { ExactNumber, stringifyExact } from '../json.js';

export class Bad {
  constructor(readonly reason: string) {}
}

const DIGITS = /^[0-9]+$/;
const INT64_MAX = 9223372036854775807n;
const UINT64_MAX = 18446744073709551615n;
const EVM = /^0x[0-9a-fA-F]{40}$/;

function show(v: unknown): string {
  const s = stringifyExact(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** Digits of a non-negative integer sent as a string (or as a number small enough to be exact). */
function integerText(v: unknown): string | Bad {
  if (typeof v === 'string' && DIGITS.test(v)) return v;
  if (v instanceof ExactNumber && DIGITS.test(v.text)) return v.text;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  return new Bad(`expected a non-negative integer as decimal digits, got ${show(v)}`);
}

/**
 * An amount: `raw` keeps the digits exactly as received; `decimal` is the same number without
 * leading zeros when it fits DECIMAL(38,0), else null (uint256 allows 78 digits).
 */
export function amount(v: unknown): { raw: string; decimal: string | null } | Bad {
  const raw = integerText(v);
  if (raw instanceof Bad) return raw;
  const trimmed = raw.charCodeAt(0) === 48 ? raw.replace(/^0+(?=.)/, '') : raw;
  return { raw, decimal: trimmed.length <= 38 ? trimmed : null };
}

/** BIGINT staged as its digits; DuckDB casts it. */
export function bigint(v: unknown): string | Bad {
  const t = integerText(v);
  if (t instanceof Bad) return t;
  // Fewer than 19 digits fit whatever they are: no BigInt a row for a block number.
  return t.length < 19 || BigInt(t) <= INT64_MAX ? t : new Bad(`${show(v)} does not fit BIGINT`);
}

/** UBIGINT (a uint64 of the node: a locktime) staged as its digits; DuckDB casts it. */
export function ubigint(v: unknown): string | Bad {
  const t = integerText(v);
  if (t instanceof Bad) return t;
  return t.length < 20 || BigInt(t) <= UINT64_MAX ? t : new Bad(`${show(v)} does not fit UBIGINT (uint64)`);
}

export function integer(v: unknown): number | Bad {
  const n = (typeof v === 'string' && /^-?[0-9]+$/.test(v)) || v instanceof ExactNumber ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= -2147483648 && n <= 2147483647 ? n : new Bad(`expected a 32-bit integer, got ${show(v)}`);
}

export function double(v: unknown): number | Bad {
  const n = (typeof v === 'string' && v.trim() !== '') || v instanceof ExactNumber ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : new Bad(`expected a number, got ${show(v)}`);
}

export function boolean(v: unknown): boolean | Bad {
  return typeof v === 'boolean' ? v : new Bad(`expected true or false, got ${show(v)}`);
}

/** Unix seconds; staged as a number for to_timestamp(). */
export function timestamp(v: unknown): number | Bad {
  const t = integerText(v);
  if (t instanceof Bad) return new Bad(`expected Unix seconds, got ${show(v)}`);
  const n = Number(t);
  // Year 9999: a bigger value is not seconds (milliseconds, most likely).
  return n <= 253402300799 ? n : new Bad(`${show(v)} is not Unix seconds (after year 9999)`);
}

export function evmAddress(v: unknown): string | Bad {
  return typeof v === 'string' && EVM.test(v) ? v.toLowerCase() : new Bad(`expected an EVM address, got ${show(v)}`);
}

export function varchar(v: unknown): string | Bad {
  if (typeof v === 'string') return v;
  // A number as sent: an ExactNumber's text, or a double whose text is what was sent.
  if (v instanceof ExactNumber) return v.text;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return new Bad(`expected a string, got ${show(v)}`);
}

export function varcharList(v: unknown): string[] | Bad {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : new Bad(`expected a list of strings, got ${show(v)}`);
}

export function integerList(v: unknown): number[] | Bad {
  if (!Array.isArray(v)) return new Bad(`expected a list of integers, got ${show(v)}`);
  const out: number[] = [];
  for (const x of v) {
    const n = integer(x);
    if (n instanceof Bad) return new Bad(`expected a list of 32-bit integers, got ${show(v)}`);
    out.push(n);
  }
  return out;
}

/** JSON text, numbers with the digits they were sent with (an ExactNumber alone is a JSON number). */
export function json(v: unknown): string | Bad {
  if (v instanceof ExactNumber) return v.text;
  return v !== null && typeof v === 'object' ? stringifyExact(v)! : new Bad(`expected an object, got ${show(v)}`);
}
