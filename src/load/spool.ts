// A batch in the making lives in a file, not in the heap: lines are appended page by page, so what
// a partition holds between commits is about one page, whatever the batch size (the flat
// RSS). Appends gather up to FLUSH (256 KB) bytes before a write: one write a page cost a system
// call and a string encoding each, about a tenth of a run's time.
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

const FLUSH = 256 << 10;
const NEWLINE = Buffer.from('\n');

/** Makes a folder only when it is missing: a mkdir of a folder that exists takes the folder's
 * lock, and cost 2 ms a batch while DuckDB wrote beside it. */
export function makeDir(dir: string): void {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
}

export class Spool {
  private fd: number | undefined;
  // Lines are copied into this buffer as they come, and it is reused after each write: a page's
  // encoded lines and its raw body are not held until the flush (they were, as a Buffer each), so
  // they can die young. (The run's external memory still swings by ~60 MB: see docs/benchmarks.md, CPU-bound.)
  private buf: Buffer | undefined;
  private used = 0;
  lines = 0;

  constructor(readonly path: string) {}

  /** `bytes`: the lines hold UTF-8 bytes one char each (src/bytes.ts), written as those bytes. */
  append(lines: string[], bytes = false): void {
    if (lines.length === 0) return;
    // One join, encoded straight into the buffer: no `+ '\n'` copy, no Buffer per page.
    const text = lines.join('\n');
    const encoding = bytes ? 'latin1' : 'utf8';
    const n = bytes ? text.length : Buffer.byteLength(text, 'utf8');
    this.line(n, (buf, at) => buf.write(text, at, encoding), () => Buffer.from(text, encoding));
    this.lines += lines.length;
  }

  /** One line given as its bytes (a raw page as sent; it holds no newline). */
  appendBytes(line: Buffer): void {
    this.line(line.length, (buf, at) => line.copy(buf, at), () => line);
    this.lines++;
  }

  /**
   * `n` bytes and a newline: `copy` puts the bytes into the buffer at an offset and says how many it
   * wrote; a line as long as the buffer or longer is written straight from `whole()`.
   */
  private line(n: number, copy: (buf: Buffer, at: number) => number, whole: () => Buffer): void {
    if (n < FLUSH) {
      if (this.used + n + 1 > FLUSH) this.flush();
      const buf = (this.buf ??= Buffer.allocUnsafe(FLUSH));
      this.used += copy(buf, this.used);
      buf[this.used++] = 0x0a;
    } else {
      this.flush();
      this.writeAll(whole());
      this.writeAll(NEWLINE);
    }
  }

  private flush(): void {
    if (this.used === 0) return;
    this.writeAll(this.buf!.subarray(0, this.used));
    this.used = 0;
  }

  private writeAll(b: Buffer): void {
    if (this.fd === undefined) {
      makeDir(dirname(this.path));
      this.fd = openSync(this.path, 'w');
    }
    for (let done = 0; done < b.length; ) done += writeSync(this.fd, b, done, b.length - done);
  }

  /** Writes what is pending and closes the file; it stays for the reader (DuckDB, the compressor). */
  close(): void {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.buf = undefined;
  }

  discard(): void {
    this.used = 0;
    this.close();
    rmSync(this.path, { force: true });
    this.lines = 0;
  }
}
