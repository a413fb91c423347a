// How a row travels from the transform to DuckDB: one line of text per row.
import { isUtf8 } from 'node:buffer';
import type { StagedColumn } from './rows.js';

// Staged rows are lines of text that DuckDB's CSV reader splits in C++ (much faster than handing
// it values one by one): fields end at US (0x1f), rows at LF, NULL is SOH (0x01). A free-text value
// that holds any control character is staged as STX (0x02) + its JSON string, decoded in SQL.
export const FIELD = '\x1f';
export const NULL = '\x01';
const ENCODED = '\x02';
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f]/;

/** A free-text value as staged. */
export function stageText(v: string): string {
  return CONTROL.test(v) ? ENCODED + JSON.stringify(v) : v;
}

/** The inverse of staging, for tests and debugging: a staged line back to named values. */
export function unstage(staged: StagedColumn[], line: string): Record<string, unknown> {
  const parts = line.split(FIELD);
  const out: Record<string, unknown> = {};
  staged.forEach((c, i) => {
    const v = parts[i]!;
    if (v === NULL) out[c.name] = null;
    else if (c.type === 'INTEGER' || c.type === 'DOUBLE') out[c.name] = Number(v);
    else if (c.type === 'BOOLEAN') out[c.name] = v === 'true';
    else out[c.name] = v.startsWith(ENCODED) ? JSON.parse(v.slice(1)) : v;
  });
  return out;
}

// Replay may hand the transform a page as its UTF-8 bytes in a one-byte string (one char per
// byte, i.e. decoded as latin1): V8 parses such text about twice as fast as the two-byte string a
// page with any non-ASCII character otherwise becomes, and the staged lines are written back as
// the same bytes. Only declarations marked `bytesSafe` get pages this way (their transform copies
// free text and compares ASCII only); what leaves the transform as text (reject reasons and raw
// items, field names) is turned back into real text.
// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Whether a body may be parsed as bytes: valid UTF-8 (else its text has replacement characters
 * where the bytes would be kept) without `\u` escapes (an escape would put a char that is not a
 * byte into the text).
 */
export function bytesParsable(body: Buffer): boolean {
  return isUtf8(body) && body.indexOf('\\u') < 0;
}

/** A string of UTF-8 bytes (one char per byte) back to the text it encodes. */
export function fromBytes(s: string): string {
  return NON_ASCII.test(s) ? Buffer.from(s, 'latin1').toString('utf8') : s;
}
