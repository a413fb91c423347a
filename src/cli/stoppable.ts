// The commands that stop at a safe point when told to (SIGINT, SIGTERM): run, worker, rebuild,
// compact, and those that wait on one request (export-op, aggregate-signatures).
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { Interrupted } from '../errors.js';

/**
 * Runs `work` with a signal that SIGINT and SIGTERM abort: the command stops at its next safe
 * point, keeps what it committed (`kept` says what that is), releases the lake's lock and exits
 * as shells report a stop by that signal (130, 143), with one line: `stopped by SIGINT; <kept>`.
 * A worker's stop is its normal end (`stopIsDone`): it exits as its work does. Without a logger
 * (a command that logs nothing: export-op, aggregate-signatures) the stop's line is the only word.
 */
export async function stoppable<T>(logger: Logger | undefined, kept: string, work: (signal: AbortSignal) => Promise<T>, o: { stopIsDone?: boolean } = {}): Promise<T> {
  const ac = new AbortController();
  // Every partition, request and wait of a run follows this signal: more than Node's 10 listeners is its normal fan-out, not a leak.
  setMaxListeners(0, ac.signal);
  let by: 'SIGINT' | 'SIGTERM' | undefined;
  const on = (sig: 'SIGINT' | 'SIGTERM') => {
    by ??= sig;
    logger?.warn({ signal: sig }, `stopping: ${kept}`);
    ac.abort(new Interrupted(sig));
  };
  process.once('SIGINT', on);
  process.once('SIGTERM', on);
  let out: T;
  try {
    out = await work(ac.signal);
  } catch (err) {
    // Whatever the stop made of the work under way (a partition's error, a lock not waited for), it was the stop.
    if (!by || o.stopIsDone) throw err;
  } finally {
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
  }
  if (by && !o.stopIsDone) throw new Interrupted(by, `stopped by ${by}; ${kept}`);
  return out!;
}
