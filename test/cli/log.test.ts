// Log lines quote services' text (error bodies, page tokens in URLs): each string in a line is
// bounded (text.ts), as JSON and pretty, after pino's redaction; a line within the bound is
// written as pino wrote it.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { makeLogger } from '../../src/cli/log.js';
import { LINE_CHARS } from '../../src/text.js';

function capture(format: 'json' | 'pretty'): { lines: string[]; log: ReturnType<typeof makeLogger> } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter((l) => l !== ''));
      cb();
    },
  });
  return { lines, log: makeLogger({ level: 'info', format, destination }) };
}

const MB4 = 4 * 1024 * 1024;

describe('log lines quoting text of megabytes', () => {
  it('JSON: every string bounded, saying its length; the rest as written', () => {
    const { lines, log } = capture('json');
    log.error({ err: `GET /v1/x?pageToken=${'t'.repeat(MB4)}`, rows: 7, ['k'.repeat(MB4)]: 1 }, 'partition failed');
    log.info({ rows: 5 }, 'partition done');
    expect(lines).toHaveLength(2);
    expect(lines[0]!.length).toBeLessThan(3 * LINE_CHARS);
    const o = JSON.parse(lines[0]!) as Record<string, any>;
    expect(o.err).toMatch(/^GET \/v1\/x\?pageToken=t+…\[cut: 4,194,324 chars\]$/);
    expect(o.err.length).toBeLessThanOrEqual(LINE_CHARS);
    expect(o.msg).toBe('partition failed');
    expect(o.rows).toBe(7);
    expect(Object.keys(o).some((k) => /^k+…\[cut: 4,194,304 chars\]$/.test(k))).toBe(true);
    expect(JSON.parse(lines[1]!)).toMatchObject({ rows: 5, msg: 'partition done' });
  });

  it('an Error logged whole: its message bounded, its redacted keys still redacted', () => {
    const { lines, log } = capture('json');
    log.warn({ err: new Error('e'.repeat(MB4)), apiKey: 'sk-SECRET-VALUE-0123' }, 'failed');
    expect(lines[0]!.length).toBeLessThan(3 * LINE_CHARS);
    expect(lines[0]).toContain('…[cut: 4,194,304 chars]');
    expect(lines[0]).not.toContain('sk-SECRET');
    expect(lines[0]).toContain('"apiKey":"[redacted]"');
  });

  it('pretty: the line is bounded too', () => {
    const { lines, log } = capture('pretty');
    log.error({ err: 'e'.repeat(MB4) }, 'partition failed');
    const all = lines.join('\n');
    expect(all.length).toBeLessThan(3 * LINE_CHARS);
    expect(all).toContain('…[cut: 4,194,304 chars]');
  });
});
