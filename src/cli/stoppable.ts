// The commands that stop at a safe point when told to (SIGINT, SIGTERM): run, worker, rebuild, compact.
import type { Logger } from 'pino';
import { RunError } from '../errors.js';

/**
 * Runs `work` with a signal that SIGINT and SIGTERM abort: the command stops at its next safe
 * point, keeps what it committed (`kept` says what that is), releases the lake's lock and exits 1
 * with `stopped by SIGTERM`.
 */
export async function stoppable<T>(logger: Logger, kept: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const on = (sig: string) => {
    logger.warn({ signal: sig }, `stopping: ${kept}`);
    ac.abort(new RunError(`stopped by ${sig}`));
  };
  process.once('SIGINT', on);
  process.once('SIGTERM', on);
  try {
    return await work(ac.signal);
  } finally {
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
  }
}
