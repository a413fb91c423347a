// Raw pages: every answer as the service sent it, one per line, brotli-compressed (quality 1: about
// 350 MB/s here and 24x smaller on transfer pages), so that a table can be re-derived without
// refetching (`chainlake rebuild`). Pages made of several requests keep their items as JSON.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import type { WrittenFile } from './parquet.js';

export const RAW_SUFFIX = '.ndjson.br';
let seq = 0;

/** A raw page as one line: a body is JSON, whose strings cannot hold a raw newline, but the body
 * itself may be pretty-printed; re-serialising only then keeps the common path free. */
export function rawLine(page: string): string {
  return page.includes('\n') ? JSON.stringify(JSON.parse(page)) : page;
}

/** Compresses a spooled file of raw page lines into `dir`, and removes the spool. */
export function compressRawPages(spool: string, dir: string, prefix: string): WrittenFile[] {
  mkdirSync(dir, { recursive: true });
  const name = `${prefix}-${process.pid}-${Date.now()}-${seq++}${RAW_SUFFIX}`;
  writeFileSync(join(dir, name), brotliCompressSync(readFileSync(spool), { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } }));
  rmSync(spool, { force: true });
  return [{ staged: join(dir, name), rel: name }];
}

/** The pages of a raw file, each the parsed answer (or the items, for multi-request pages). */
export function* readRawPages(file: string): Generator<unknown> {
  const text = brotliDecompressSync(readFileSync(file)).toString('utf8');
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end > start) yield JSON.parse(text.slice(start, end));
    start = end + 1;
  }
}
