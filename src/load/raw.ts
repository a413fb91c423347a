// Raw pages: every answer as the service sent it, one per line, brotli-compressed (quality 1: about
// 350 MB/s here and 24x smaller on transfer pages), so that a table can be re-derived without
// refetching (`chainlake rebuild`). Pages made of several requests keep their items as JSON.
import { createReadStream, createWriteStream, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import { brotliDecompressSync, constants, createBrotliCompress } from 'node:zlib';
import type { WrittenFile } from './parquet.js';
import { fileName, RAW_EXT, writerMark } from '../state/names.js';
import { bytesParsable } from '../bytes.js';
import { parseExact, parserFor, stringifyExact, type Exactness } from '../json.js';


/** A raw page as one line: a body is JSON, whose strings cannot hold a raw newline, but the body
 * itself may be pretty-printed; re-serialising only then keeps the common path free. Numbers keep
 * the digits they were sent with. */
export function rawLine(page: string): string {
  return page.includes('\n') ? stringifyExact(parseExact(page))! : page;
}

/**
 * Compresses a spooled file of raw page lines into `dir`, and removes the spool. A stream through
 * zlib runs on libuv's threads, so the run transforms and writes meanwhile, and holds a chunk at a
 * time rather than the whole batch.
 */
export async function compressRawPages(spool: string, dir: string, stem: string): Promise<WrittenFile[]> {
  mkdirSync(dir, { recursive: true });
  const name = fileName(stem, writerMark(), RAW_EXT);
  await pipeline(createReadStream(spool), createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 1 } }), createWriteStream(join(dir, name)));
  rmSync(spool, { force: true });
  return [{ staged: join(dir, name), rel: name }];
}

/** A page of a raw file: the parsed answer (or its items), and whether it was parsed as bytes. */
export interface RawPage {
  page: unknown;
  /** Parsed from its UTF-8 bytes as a one-byte string (src/bytes.ts). */
  bytes: boolean;
}

/**
 * The pages of a raw file. With `bytes`, a file that allows it is parsed as bytes, one char per
 * byte; with `exact`, numbers a double would change are kept as sent (src/json.ts).
 */
export function* readRawPages(file: string, o: { bytes?: boolean; exact?: Exactness } = {}): Generator<RawPage> {
  const buf = brotliDecompressSync(readFileSync(file));
  const bytes = o.bytes === true && bytesParsable(buf);
  const text = bytes ? buf.toString('latin1') : buf.toString('utf8');
  const parse = parserFor(o.exact);
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end > start) yield { page: parse(text.slice(start, end)), bytes };
    start = end + 1;
  }
}
