import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Spool } from '../../src/load/spool.js';

const dir = () => mkdtempSync(join(tmpdir(), 'cl-spool-'));

describe('Spool', () => {
  it('writes every line once, in order, across flushes and lines longer than its buffer', () => {
    const path = join(dir(), 'sub', 'batch.rows');
    const s = new Spool(path);
    const expected: Buffer[] = [];
    const text = (i: number, len: number) => `${i}:` + 'é€x'.repeat(len / 3);
    for (let i = 0; i < 40; i++) {
      // Pages of a few lines, of sizes that cross the 256 KB buffer at various points; every 7th is
      // bigger than the buffer itself.
      const lines = [text(i, 1000 + i * 997), text(i + 1000, i % 7 === 6 ? 300_000 : 30_000)];
      s.append(lines);
      expected.push(Buffer.from(lines.join('\n') + '\n', 'utf8'));
      // A raw page as bytes, small or bigger than the buffer.
      const raw = Buffer.from(`{"page":${i},"pad":"${'z'.repeat(i % 5 === 4 ? 270_000 : 5_000)}"}`);
      s.appendBytes(raw);
      expected.push(raw, Buffer.from('\n'));
      // A page of UTF-8 bytes one char per byte (replay's form) goes out as those same bytes.
      const utf8 = Buffer.from(`ü${i}`, 'utf8');
      s.append([utf8.toString('latin1')], true);
      expected.push(utf8, Buffer.from('\n'));
    }
    expect(s.lines).toBe(40 * 4);
    s.close();
    expect(readFileSync(path).equals(Buffer.concat(expected))).toBe(true);
  });

  it('creates no file for nothing, and discard removes what it wrote', () => {
    const d = dir();
    const empty = new Spool(join(d, 'a.rows'));
    empty.append([]);
    empty.close();
    expect(existsSync(join(d, 'a.rows'))).toBe(false);
    const s = new Spool(join(d, 'b.rows'));
    s.append(['x'.repeat(300_000)]);
    s.append(['y']);
    s.discard();
    expect(existsSync(join(d, 'b.rows'))).toBe(false);
    expect(s.lines).toBe(0);
  });
});
