// A clock for rate tests (src/sources/clock.ts): time moves only when the test moves it, so a
// retry-after of a minute takes no time and a test does not depend on a quiet machine.
import type { Clock } from '../../src/sources/clock.js';

interface Sleeper {
  at: number;
  resolve(): void;
}

/** One turn of the real event loop: answers from a loopback server come in. */
const loopTurn = () => new Promise<void>((r) => setTimeout(r, 1));
/** With nothing outside the process (every party on this clock), the promises settled are all there is to wait for. */
const promisesTurn = () => new Promise<void>((r) => setImmediate(r));

export class FakeClock implements Clock {
  private sleepers: Sleeper[] = [];

  private readonly turn: () => Promise<void>;
  /** Turns of the event loop without a sleeper woken that `run` takes as quiet. */
  private readonly quietTurns: number;

  /** `inMemory`: every party of the test runs on this clock (no server, no socket), so time moves as soon as the promises settle. */
  constructor(
    public time = Date.UTC(2025, 0, 1),
    o: { inMemory?: boolean } = {},
  ) {
    this.turn = o.inMemory ? promisesTurn : loopTurn;
    this.quietTurns = o.inMemory ? 1 : 3;
  }

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const s: Sleeper = {
        at: this.time + Math.max(0, ms),
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((x) => x !== s);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push(s);
    });
  }

  /** How many sleep on this clock. */
  get pending(): number {
    return this.sleepers.length;
  }

  /** The time the next sleeper wakes at, if any. */
  get next(): number | undefined {
    return this.sleepers.length === 0 ? undefined : Math.min(...this.sleepers.map((s) => s.at));
  }

  /** Moves the time on by `ms`, waking the sleepers due in time order, each with the time at its due. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (let at = this.next; at !== undefined && at <= end; at = this.next) await this.wake(at);
    this.time = end;
    await this.turn();
  }

  private async wake(at: number): Promise<void> {
    this.time = Math.max(this.time, at);
    const due = this.sleepers.filter((s) => s.at <= at);
    this.sleepers = this.sleepers.filter((s) => s.at > at);
    for (const s of due) s.resolve();
    await this.turn();
  }

  /**
   * Settles `p`, moving the time to the next sleeper's due whenever the real event loop has been
   * quiet for a few turns (no request of the test's client is on its way): a request sent when it
   * should have waited is seen at the time it was sent, not at a later one.
   */
  async run<T>(p: Promise<T>): Promise<T> {
    let settled = false;
    p.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let quiet = 0; !settled; ) {
      await this.turn();
      if (settled || this.next === undefined) quiet = 0;
      else if (++quiet >= this.quietTurns) {
        quiet = 0;
        await this.wake(this.next);
      }
    }
    return p;
  }
}
