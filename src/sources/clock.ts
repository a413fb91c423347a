// The time rate control runs on. The parts that decide (ledger, pacer, quota, estimator, pause)
// take `now` as an argument; the drivers (the scheduler, the client, the shared budget) read and
// wait on a Clock given at construction, so that a test runs minutes of waits on a fake one.

export interface Clock {
  now(): number;
  /**
   * Milliseconds from any fixed start, never going back when the wall clock is set: for how long
   * something still holds (a lease). A clock without it measures that on `now`.
   */
  monotonic?(): number;
  /** Resolves after `ms`; rejects with the signal's reason on abort. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The machine's clock. Global `Date.now` and `setTimeout` are looked up at each call (not bound
 * once), so that vitest's fake timers drive code that was given this clock by default.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(t);
        reject(signal!.reason);
      };
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

export const SECOND_MS = 1000;
export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
