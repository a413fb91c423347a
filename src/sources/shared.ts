// The budget a service shares with other processes on the same key (src/cluster implements it on
// PostgreSQL; the CLI injects it). Sources only know this port: a request takes its weight from
// it after the local scheduler's grant, a 429's pause and a budget announced or learnt go to it.
import type { Pause } from './pause.js';

/** A window's budget as the local budget knows it: the service's window and its CU. */
export interface SharedWindow {
  windowMs: number;
  cuPerWindow: number;
}

/** How a request waits for the shared budget. */
export interface SharedTake {
  /** From now until the request reaches the service: it is counted in the window it arrives in. */
  leadMs?: number;
  signal?: AbortSignal;
}

export interface SharedBudgetPort {
  /**
   * The service's pause, when the port keeps one: the local budget then uses it as its own, so a
   * pause another process wrote holds this one's requests as one written here does.
   */
  readonly paused?: Pause;
  /** Resolves when a request of `weight` CU may be sent within the shared budget of `window`. */
  take(weight: number, window: SharedWindow, o?: SharedTake): Promise<void>;
  /** A 429's retry-after: every process of the key waits `ms`; resolves when this one may go on (its clock). */
  pause(ms: number): Promise<number>;
  /** A budget announced by the service or learnt from its 429s, for every process of the key. */
  learn(window: SharedWindow): Promise<void>;
  /**
   * A request of `weight` CU that took nothing from the shared budget (sent alone, before the
   * budget was known) has reached the service in its current window: it is counted there now, or
   * the others would be granted its CU again.
   */
  counted?(window: SharedWindow, weight: number): Promise<void>;
  /** Gives back what this process holds and disconnects. */
  close(): Promise<void>;
}

/** One port per service of a run: the data service's key, or the service alone. */
export type SharedBudgetFactory = (service: string, key: string | undefined) => SharedBudgetPort;

/** `p`, or its signal's reason as soon as it is aborted (`p` goes on: other waiters may await it). */
export function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
