// Shares one service's budget among the requests of every stream and partition of a run. Waiting
// requests are served by start-time fair queueing over flows (a flow is a partition's listing):
// a request's tag is its flow's CU served so far, and the lowest tag goes first, so every flow
// gets an equal share of the CU whatever its endpoint's weight. The chunks of a partition (block
// ranges fetched at once) are one flow: each of their requests takes the flow's next tag, so they
// share the partition's part, served in the order they asked. A flow whose request is under way
// still counts as active: it keeps its place rather than rejoining at the back. A flow that comes back after being idle starts level with the
// least-served active flow (no credit for the time away), and a flow that is slow to ask again
// (slow answers, slow writes) has nothing waiting, so it holds up no one. The head of the queue is
// never overtaken, so a heavy request is not starved by a stream of light ones. It reads and waits
// on the clock it is given, so that its waits run on a fake one in tests.
import { RateBudget, readRateHeaders, type Claim } from './budget.js';
import { DAY_MS, realClock, type Clock } from './clock.js';

/** One request's grant: report when it went out and what came back, then `finish` it. */
export interface Grant {
  sent(): void;
  answer(status: number, header: (name: string) => string | null): void;
  finish(): void;
}

interface Waiter {
  weight: number;
  /** Start tag: the CU its flow had been served when it asked (or the floor, if more). */
  tag: number;
  seq: number;
  /** It had to wait for the budget (the budget, not demand, was the limit). */
  held: boolean;
  resolve(g: Grant): void;
  reject(err: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** Flows remembered beyond this are dropped once they have no credit left to track. */
const FLOW_MEMORY = 4096;

/** A wait longer than this is told (onWait): a run that sits silent looks hung. */
export const LONG_WAIT_MS = 10_000;

/** Why requests wait: a 429's retry-after, the day's budget spent, or the window's. */
export type WaitCause = 'retry-after' | 'day budget' | 'rate budget';

/** A 429 asked for a longer wait than the bound (RateBudget.closedUntil): no request goes before `until`. */
export class ServiceClosed extends Error {
  constructor(readonly until: number) {
    super(`closed until ${new Date(until).toISOString()}`);
  }
}

export class FairScheduler {
  private waiting: Waiter[] = [];
  private readonly finishTags = new Map<string, number>();
  /** Tags of granted requests not finished yet. */
  private readonly underway = new Set<{ tag: number }>();
  /** The tag of the last request granted. */
  private virtual = 0;
  private seq = 0;
  /** The wait for the head's turn: when it ends, and what cancels it. */
  private timer?: { at: number; stop: AbortController };

  /** The end of the last long wait told, per cause. */
  private readonly told = new Map<WaitCause, number>();

  constructor(
    readonly budget: RateBudget,
    private readonly clock: Clock = realClock,
    /** Told once per long wait (over LONG_WAIT_MS), with its cause and end. */
    private readonly onWait?: (cause: WaitCause, until: number) => void,
  ) {}

  /** Until when the service is closed (a 429's retry-after over the bound), or undefined. */
  private closed(now: number): ServiceClosed | undefined {
    const until = this.budget.pause.closed(now);
    return until === undefined ? undefined : new ServiceClosed(until);
  }

  private now(): number {
    return this.clock.now();
  }

  /** What holds requests until `at`: a 429's pause, else the day's budget when `at` is in a later UTC day, else the window's. */
  private causeOf(at: number, now: number): WaitCause {
    if (at <= this.budget.pausedUntil) return 'retry-after';
    return Math.floor(at / DAY_MS) > Math.floor(now / DAY_MS) ? 'day budget' : 'rate budget';
  }

  /** Tells a wait that ends at `until` once, unless it is short or told already. */
  private tell(cause: WaitCause, until: number, now: number): void {
    if (until - now <= LONG_WAIT_MS || !this.onWait) return;
    // A wait that moved by less than a second is the same one.
    if (until <= (this.told.get(cause) ?? -Infinity) + 1000) return;
    this.told.set(cause, until);
    this.onWait(cause, until);
  }

  /** Waits for this flow's fair turn and for the budget; rejects with the signal's reason on abort. */
  acquire(weight: number, flow: string, signal?: AbortSignal): Promise<Grant> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const closed = this.closed(this.now());
    if (closed) return Promise.reject(closed);
    return new Promise<Grant>((resolve, reject) => {
      const tag = Math.max(this.floor(), this.finishTags.get(flow) ?? 0);
      this.finishTags.set(flow, tag + weight);
      const w: Waiter = { weight, tag, seq: this.seq++, held: false, resolve, reject, signal };
      if (signal) {
        w.onAbort = () => {
          this.waiting = this.waiting.filter((x) => x !== w);
          reject(signal.reason);
          this.pump();
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.waiting.push(w);
      this.pump();
    });
  }

  /** Resolves once no 429's retry-after holds the service back. */
  async waitPause(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const now = this.now();
      const closed = this.closed(now);
      if (closed) throw closed;
      const wait = this.budget.pausedUntil - now;
      if (wait <= 0) return;
      signal?.throwIfAborted();
      this.tell('retry-after', this.budget.pausedUntil, now);
      await this.clock.sleep(wait, signal);
    }
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  /** The least tag of any active request: where a flow that was idle comes in. */
  private floor(): number {
    let min = Infinity;
    for (const w of this.waiting) min = Math.min(min, w.tag);
    for (const u of this.underway) min = Math.min(min, u.tag);
    return min === Infinity ? this.virtual : min;
  }

  private next(): Waiter | undefined {
    let best: Waiter | undefined;
    for (const w of this.waiting) if (!best || w.tag < best.tag || (w.tag === best.tag && w.seq < best.seq)) best = w;
    return best;
  }

  private pump(): void {
    const closed = this.closed(this.now());
    if (closed) {
      this.wake(undefined);
      const waiting = this.waiting;
      this.waiting = [];
      for (const w of waiting) {
        if (w.onAbort) w.signal!.removeEventListener('abort', w.onAbort);
        w.reject(closed);
      }
      return;
    }
    for (;;) {
      const head = this.next();
      if (!head) return this.wake(undefined);
      const now = this.now();
      const at = this.budget.earliest(head.weight, now);
      if (at > now) {
        head.held = true;
        // Infinity: the budget is all in flight; the next finish pumps again.
        if (at !== Infinity) this.tell(this.causeOf(at, now), at, now);
        return this.wake(at === Infinity ? undefined : at);
      }
      this.waiting = this.waiting.filter((x) => x !== head);
      if (head.onAbort) head.signal!.removeEventListener('abort', head.onAbort);
      this.virtual = head.tag;
      this.forgetIdleFlows();
      head.resolve(this.grantFor(this.budget.grant(head.weight, now, head.held), head.tag));
    }
  }

  /** Pumps again at `at` (undefined: not before a finish), instead of when the last wait said. */
  private wake(at: number | undefined): void {
    if (this.timer?.at === at) return;
    this.timer?.stop.abort();
    this.timer = undefined;
    if (at === undefined) return;
    const timer = (this.timer = { at, stop: new AbortController() });
    this.clock.sleep(at - this.now(), timer.stop.signal).then(
      () => {
        if (this.timer !== timer) return;
        this.timer = undefined;
        this.pump();
      },
      () => {}, // cancelled: the head's turn moved
    );
  }

  private grantFor(claim: Claim, tag: number): Grant {
    const active = { tag };
    this.underway.add(active);
    return {
      sent: () => {
        claim.sentAt = this.now();
      },
      answer: (status, header) => {
        const now = this.now();
        this.budget.answer(claim, status, readRateHeaders(header, now), now);
      },
      finish: () => {
        this.underway.delete(active);
        this.budget.finish(claim, this.now());
        this.pump();
      },
    };
  }

  private forgetIdleFlows(): void {
    if (this.finishTags.size <= FLOW_MEMORY) return;
    // A flow whose finish tag is behind every active one would start at the floor anyway.
    const floor = this.floor();
    for (const [flow, tag] of this.finishTags) if (tag <= floor) this.finishTags.delete(flow);
  }
}
