// Pages as UTF-8 bytes in one-byte strings. Replay may hand the transform a page as its UTF-8
// bytes in a one-byte string (one char per byte, i.e. decoded as latin1): V8 parses such text
// about twice as fast as the two-byte string a page with any non-ASCII character otherwise
// becomes, and the staged lines are written back as the same bytes. Only declarations marked
// `bytesSafe` get pages this way (their transform copies free text and compares ASCII only); what
// leaves the transform as text (reject reasons and raw items, field names) is turned back into
// real text. The client, the paginator, the transform and raw pages all share this form.
import { isUtf8 } from 'node:buffer';

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
