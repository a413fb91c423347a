// pino: JSON lines by default (cron, files), readable lines on a TTY. Keys that could hold a secret
// are redacted even though the key is never handed to the logger.
import { pino, type Logger, type LevelWithSilent } from 'pino';
import pretty from 'pino-pretty';

export const REDACT = ['apiKey', '*.apiKey', 'headers', '*.headers', 'key', '*.key'];

/** `destination`: where lines go instead of stderr (the progress display prints them above itself). */
export function makeLogger(o: { level?: string; format?: 'json' | 'pretty'; destination?: NodeJS.WritableStream } = {}): Logger {
  const level = (o.level ?? process.env.CHAINLAKE_LOG_LEVEL ?? 'info') as LevelWithSilent;
  const usePretty = o.format ? o.format === 'pretty' : process.stderr.isTTY;
  const opts = { level, redact: { paths: REDACT, censor: '[redacted]' }, base: { pid: process.pid } };
  if (usePretty) return pino(opts, pretty({ destination: o.destination ?? 2, sync: true, ignore: 'pid,hostname' }));
  return pino(opts, o.destination ?? pino.destination({ dest: 2, sync: true }));
}
