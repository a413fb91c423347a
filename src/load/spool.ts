// A batch in the making lives in a file, not in the heap: lines are appended page by page, so what
// a partition holds between commits is about one page, whatever the batch size (the flat
// RSS). Appends gather up to FLUSH (256 KB) bytes before a write: one write a page cost a system call and a
// string encoding each, about a tenth of a run's time.
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
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  lines = 0;

  constructor(readonly path: string) {}

  /** `bytes`: the lines hold UTF-8 bytes one char each (transform/staging.ts), written as those bytes. */
  append(lines: string[], bytes = false): void {
    if (lines.length === 0) return;
    // Not `join() + '\n'`: that concatenation is a second copy of every byte when it is encoded.
    this.push(Buffer.from(lines.join('\n'), bytes ? 'latin1' : 'utf8'));
    this.push(NEWLINE);
    this.lines += lines.length;
  }

  /** One line given as its bytes (a raw page as sent; it holds no newline). */
  appendBytes(line: Buffer): void {
    this.push(line);
    this.push(NEWLINE);
    this.lines++;
  }

  private push(b: Buffer): void {
    this.pending.push(b);
    this.pendingBytes += b.length;
    if (this.pendingBytes >= FLUSH) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    if (this.fd === undefined) {
      makeDir(dirname(this.path));
      this.fd = openSync(this.path, 'w');
    }
    const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    for (let done = 0; done < all.length; ) done += writeSync(this.fd, all, done, all.length - done);
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Writes what is pending and closes the file; it stays for the reader (DuckDB, the compressor). */
  close(): void {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  discard(): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.close();
    rmSync(this.path, { force: true });
    this.lines = 0;
  }
}
