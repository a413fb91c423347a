// A batch in the making lives in a file, not in the heap: lines are appended page by page, so what
// a partition holds between commits is one page, whatever the batch size (the flat RSS).
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export class Spool {
  private fd: number | undefined;
  lines = 0;

  constructor(readonly path: string) {}

  /** `latin1` for lines that hold UTF-8 bytes one char each (transform/staging.ts): written as those bytes. */
  append(lines: string[], encoding: 'utf8' | 'latin1' = 'utf8'): void {
    if (lines.length === 0) return;
    if (this.fd === undefined) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.fd = openSync(this.path, 'w');
    }
    writeSync(this.fd, lines.join('\n') + '\n', null, encoding);
    this.lines += lines.length;
  }

  /** Closes the file; it stays for the reader (DuckDB, the compressor). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  discard(): void {
    this.close();
    rmSync(this.path, { force: true });
    this.lines = 0;
  }
}
