// A 429's retry-after holds back every request to a service until it ends, so that a limited
// service gets no burst when it reopens; one asking for longer than the pipeline's bound closes
// the service instead, and every request fails at once saying until when. A service has one
// Pause: the local budget, the scheduler and the budget shared with other processes all read and
// extend the same one, so a pause learnt from any of them holds every request.

export class Pause {
  /** No request starts before this. */
  until = 0;
  /** A retry-after longer than the bound: no request is sent before this. */
  closedUntil = 0;

  /** A retry-after of `ms` read at `now`: false if, longer than `maxMs`, it closed the service instead. */
  hold(ms: number, now: number, maxMs = Infinity): boolean {
    if (ms > maxMs) {
      this.closedUntil = Math.max(this.closedUntil, now + ms);
      return false;
    }
    this.extend(now + ms);
    return true;
  }

  /** A pause that ends at `until` (another process's, read from the shared budget). */
  extend(until: number): void {
    this.until = Math.max(this.until, until);
  }

  /** Until when the service is closed, or undefined if it is not at `now`. */
  closed(now: number): number | undefined {
    return this.closedUntil > now ? this.closedUntil : undefined;
  }
}
