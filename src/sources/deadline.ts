// A request's abort signal: the caller's signal or a timeout, whichever comes first. Not
// `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: on Node 20 every signal `any` makes stays
// in its parent's set of dependants (as a WeakRef) for as long as the parent lives, so a run's
// signal gathered one per request (35,000 after 75 s of a 5M-row run, and growing).
export class Deadline {
  private readonly ctl = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = () => this.ctl.abort(this.parent!.reason);
  /** The time ran out (rather than the caller's signal firing). */
  timedOut = false;

  constructor(
    ms: number,
    private readonly parent?: AbortSignal,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.ctl.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError'));
    }, ms);
    if (parent?.aborted) this.ctl.abort(parent.reason);
    else parent?.addEventListener('abort', this.onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.ctl.signal;
  }

  /** The request is over: stops the clock and lets go of the caller's signal. */
  done(): void {
    clearTimeout(this.timer);
    this.parent?.removeEventListener('abort', this.onAbort);
  }
}
