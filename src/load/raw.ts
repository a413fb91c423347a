// Raw pages: every answer as the service sent it, one per line, brotli-compressed (quality 1: about
// 350 MB/s here and 24x smaller on transfer pages), so that a table can be re-derived without
// refetching (`chainlake rebuild`). Pages made of several requests keep their items as JSON.
import { createReadStream, createWriteStream, mkdirSync, rmSync } from 'node:fs';
import type { TransformOptions } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate } from 'node:timers/promises';
import { join } from 'node:path';
import { constants, createBrotliCompress, createBrotliDecompress } from 'node:zlib';
import type { WrittenFile } from './parquet.js';
import { fileName, RAW_EXT, writerMark } from '../state/names.js';
import { bytesParsable } from '../bytes.js';
import { RunError, UsageError } from '../errors.js';
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
 * Output chunks of the decompression. Each chunk's decompression is started from the event loop,
 * so while the caller transforms pages only the one under way goes on: 64 KB chunks (under glibc's
 * mmap threshold as the CLI sets it) left a rebuild's main thread waiting on the next one for a
 * tenth of its time, 1 MB ones take a tenth less wall time for the same CPU and peak
 * (docs/benchmarks.md). A whole file at once would hold three copies of it (zlib's chunks, their
 * concatenation, the text) and fault in fresh pages for each.
 */
export const RAW_CHUNK = 1 << 20;
/** How far the decompression runs ahead of the pages parsed: a few chunks, so neither waits on the other. */
const AHEAD = 4 << 20;

/**
 * The pages of a raw file, read as a stream: it is decompressed on libuv's threads while the
 * caller transforms the pages before, and what is held is a chunk and a page. With `bytes`, a
 * page that allows it is parsed as bytes, one char per byte (decided page by page, as the client
 * decides for each body); with `exact`, numbers a double would change are kept as sent (src/json.ts).
 */
export async function* readRawPages(file: string, o: { bytes?: boolean; exact?: Exactness } = {}): AsyncGenerator<RawPage> {
  const parse = parserFor(o.exact);
  const pageOf = (b: Buffer): RawPage => {
    const bytes = o.bytes === true && bytesParsable(b);
    return { page: parse(b.toString(bytes ? 'latin1' : 'utf8')), bytes };
  };
  // A page that spans chunks is gathered here; the buffer is reused and grows to the longest page.
  let line = Buffer.allocUnsafe(64 << 10);
  let used = 0;
  const gather = (chunk: Buffer, from: number, to: number) => {
    if (used + to - from > line.length) {
      const grown = Buffer.allocUnsafe(Math.max(line.length * 2, used + to - from));
      line.copy(grown, 0, 0, used);
      line = grown;
    }
    used += chunk.copy(line, used, from, to);
  };
  const source = createReadStream(file);
  // The stream's own options reach zlib's Transform, though the type of its options leaves them out.
  const stream: Pick<TransformOptions, 'readableHighWaterMark'> = { readableHighWaterMark: AHEAD };
  const pages = createBrotliDecompress({ chunkSize: RAW_CHUNK, ...stream });
  source.on('error', (e) => pages.destroy(e));
  source.pipe(pages);
  try {
    for await (const chunk of pages as AsyncIterable<Buffer>) {
      let start = 0;
      for (let end = chunk.indexOf(0x0a); end >= 0; end = chunk.indexOf(0x0a, start)) {
        if (used === 0) {
          if (end > start) yield pageOf(chunk.subarray(start, end));
        } else {
          gather(chunk, start, end);
          const whole = line.subarray(0, used);
          used = 0;
          yield pageOf(whole);
        }
        start = end + 1;
      }
      if (start < chunk.length) gather(chunk, start, chunk.length);
      // Each chunk's decompression is started from the event loop when the one before completes:
      // reading on through chunks already decompressed would leave the decompression idle meanwhile.
      await setImmediate();
    }
    if (used > 0) yield pageOf(line.subarray(0, used));
  } catch (err) {
    // A file gone or damaged (zlib says only "Decompression failed", a parser where in the page):
    // which one, for the user.
    if (!(err instanceof Error) || err instanceof UsageError || err instanceof RunError) throw err;
    const code = 'code' in err && err.code ? ` (${String(err.code)})` : '';
    throw new RunError(`raw file ${file}: ${err.message}${code}; its raw pages cannot be read back`);
  } finally {
    source.destroy();
    pages.destroy();
  }
}
