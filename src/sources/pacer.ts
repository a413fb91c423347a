// Paces requests evenly over the window (GCRA), after a burst of a few seconds' worth. Spent in
// one burst a window, the budget would go to whichever partitions happen to ask first; paced,
// every partition is waiting when a slot comes and the fair queue decides. Pacing also keeps few
// requests in flight when a 429 comes, which makes what the estimator measures sharp. Pure: every
// method takes the time.

/** Pacing lets this share of a window's budget go at once after a quiet spell (short runs finish sooner). */
export const BURST = 1 / 12;

export class Pacer {
  /** The theoretical start of the next request. */
  private nextStart = 0;
  /** The run's first grant. */
  firstGrantAt?: number;

  /** The earliest time from `t` on that pacing lets a request start, while a budget is known. */
  earliest(t: number, windowMs: number): number {
    return Math.max(t, this.nextStart - windowMs * BURST);
  }

  /** A request of this weight granted at `now`, against `limit` CU per window (Infinity: unpaced). */
  grant(weight: number, now: number, windowMs: number, limit: number): void {
    if (limit < Infinity) this.nextStart = Math.max(this.nextStart, now) + (weight * windowMs) / limit;
    this.firstGrantAt ??= now;
  }

  /** A budget became known after `used` CU went out unpaced: they count as paced already, with no second burst. */
  catchUp(used: number, windowMs: number, limit: number): void {
    this.nextStart = Math.max(this.nextStart, this.firstGrantAt! + (used * windowMs) / limit);
  }

  /** After a decrease the window reopens at `at` paced, not with a burst. */
  reopen(at: number, windowMs: number): void {
    this.nextStart = Math.max(this.nextStart, at + windowMs * BURST);
  }
}
