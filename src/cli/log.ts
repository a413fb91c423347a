// pino: JSON lines by default (cron, files), readable lines on a TTY. Keys that could hold a secret
// are redacted even though the key is never handed to the logger. Log lines carry services' text
// (error bodies, operation messages): nothing in them reaches a terminal as a control character,
// and none of their strings is longer than a line's bound (text.ts).
import { Writable } from 'node:stream';
import { pino, type Logger, type LevelWithSilent } from 'pino';
import pretty from 'pino-pretty';
import { bounded, boundedAll, inert, inertJson, LINE_CHARS } from '../text.js';

export const REDACT = ['apiKey', '*.apiKey', 'headers', '*.headers', 'key', '*.key'];

/** Keys made inert at every depth, and the message: pino-pretty prints both as they are. */
function inertNames(v: unknown, top = true): unknown {
  if (Array.isArray(v)) return v.map((x) => inertNames(x, false));
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [inert(k), top && k === 'msg' && typeof x === 'string' ? inert(x) : inertNames(x, false)]));
}

/**
 * A JSON line with each of its strings, keys too, in at most LINE_CHARS characters. Bounded as
 * pino wrote it: after its serializers (an Error's message) and its redaction, so a cut cannot
 * leave part of a redacted value. A line within the bound, nearly all, is not parsed.
 */
function boundLine(line: string): string {
  if (line.length <= LINE_CHARS) return line;
  try {
    return JSON.stringify(boundedAll(JSON.parse(line), LINE_CHARS)) + '\n';
  } catch {
    return bounded(line.replace(/\n$/, ''), LINE_CHARS) + '\n';
  }
}

/**
 * A JSON line on its way to pino-pretty. Its values are printed as JSON strings (C0 escaped) and
 * the rest of the pretty line goes through inertJson's escapes on the way out (prettyOut).
 */
function prettyIn(line: string): string {
  try {
    return JSON.stringify(inertNames(JSON.parse(line))) + '\n';
  } catch {
    return inert(line.replace(/\n$/, '')) + '\n';
  }
}

/**
 * pino-pretty's lines on their way to `out`: DEL, C1, bidi and lone surrogates escaped. Its own
 * colours are C0 escape sequences, which this leaves alone.
 */
function prettyOut(out: { write(s: string): unknown }): Writable {
  return new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      out.write(inertJson(chunk.toString()));
      cb();
    },
  });
}

/** `destination`: where lines go instead of stderr (the progress display prints them above itself). */
export function makeLogger(o: { level?: string; format?: 'json' | 'pretty'; destination?: NodeJS.WritableStream } = {}): Logger {
  const level = (o.level ?? process.env.CHAINLAKE_LOG_LEVEL ?? 'info') as LevelWithSilent;
  const usePretty = o.format ? o.format === 'pretty' : process.stderr.isTTY;
  const opts = { level, redact: { paths: REDACT, censor: '[redacted]' }, base: { pid: process.pid }, hooks: { streamWrite: usePretty ? (l: string) => prettyIn(boundLine(l)) : (l: string) => inertJson(boundLine(l)) } };
  const out = o.destination ?? pino.destination({ dest: 2, sync: true });
  if (usePretty) return pino(opts, pretty({ destination: prettyOut(out), sync: true, ignore: 'pid,hostname' }));
  return pino(opts, out);
}
