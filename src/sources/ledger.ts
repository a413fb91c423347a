// The window's ledger of claims: what may land in one of the service's windows with the next
// request. A claim lasts from its grant until one window after its answer. The services count
// fixed windows by arrival; an arrival lies between our grant and our answer, so whatever lands
// in any one of their windows was all claimed at once here, and a budget that is right is never
// exceeded, whatever the phase of their clock or the latency. Pure: every method takes the time.

/** One request's claim on the budget: from its grant until one window after its answer. */
export interface Claim {
  weight: number;
  /** When the request actually went out (after any wait for a connection slot). */
  sentAt: number;
  doneAt?: number;
  /** The service counted it (any answer but a 429 or a 5xx). */
  counted: boolean;
}

/** What got through lately, as the estimator reads it. */
export interface Throughput {
  /** CU the service counted of the requests answered after `t` (at most a window ago). */
  gotSince(t: number): number;
  /** CU the service counted of the requests that reached it at `from` or later (midway between send and answer). */
  arrivedSince(from: number): number;
}

/**
 * Answered claims in answer order, as columns in a ring that grows by doubling. As objects, a
 * minute of answers was tens of thousands of claims in V8's old generation well into a long run,
 * a heap V8 sizes at twice its live data; a run under a minute never gets there, so the peak RSS
 * depended on the run's length.
 */
class Answers {
  private cap = 1024;
  private weights = new Float64Array(this.cap);
  private sent = new Float64Array(this.cap);
  private done = new Float64Array(this.cap);
  private counts = new Uint8Array(this.cap);
  private start = 0;
  size = 0;

  push(weight: number, sentAt: number, doneAt: number, counted: boolean): void {
    if (this.size === this.cap) this.grow();
    const i = this.slot(this.size++);
    this.weights[i] = weight;
    this.sent[i] = sentAt;
    this.done[i] = doneAt;
    this.counts[i] = counted ? 1 : 0;
  }

  /** Drops the oldest. */
  shift(): void {
    this.start = (this.start + 1) & (this.cap - 1);
    this.size--;
  }

  /** The ring's index of the k-th answer, counted from the oldest (0). */
  private slot(k: number): number {
    return (this.start + k) & (this.cap - 1);
  }
  weight(k: number): number {
    return this.weights[this.slot(k)]!;
  }
  sentAt(k: number): number {
    return this.sent[this.slot(k)]!;
  }
  doneAt(k: number): number {
    return this.done[this.slot(k)]!;
  }
  counted(k: number): boolean {
    return this.counts[this.slot(k)] === 1;
  }

  private grow(): void {
    const cap = this.cap * 2;
    const order = <T extends Float64Array | Uint8Array>(a: T, b: T): T => {
      const tail = a.subarray(this.start);
      b.set(tail);
      b.set(a.subarray(0, this.start), tail.length);
      return b;
    };
    this.weights = order(this.weights, new Float64Array(cap));
    this.sent = order(this.sent, new Float64Array(cap));
    this.done = order(this.done, new Float64Array(cap));
    this.counts = order(this.counts, new Uint8Array(cap));
    this.start = 0;
    this.cap = cap;
  }
}

export class Ledger implements Throughput {
  private readonly inflight = new Set<Claim>();
  private inflightCU = 0;
  /** Answered claims in answer order; a window after its answer a claim drops out. */
  private readonly answered = new Answers();
  private answeredCU = 0;
  /**
   * The service's own count, from the latest answer that said what is left of its window
   * (`ratelimit-remaining`): a second bound, beside the claims, on what can land in one of its
   * windows with the next request. That answer's request (R) arrived between its send and its
   * answer, and a request granted now arrives after R did, so in R's window or a later one. What
   * can share its window is then at most what the service had counted at R's arrival (R
   * included), plus what may have arrived after R: every request in flight, and every answer
   * that came after R was sent (one answered before R was sent arrived before R). The claims must
   * allow for a whole window of latency (they hold until a window after the answer), which costs
   * about latency / window of the budget; this bound frees that as soon as an answer shows the
   * service's window has turned.
   */
  private anchor?: { counted: number; weight: number; sentAt: number; since: number };

  constructor(private windowMs: number) {}

  /** Claims count over a window of another length from now on; the service's count of the old one says nothing of it. */
  setWindow(ms: number): void {
    this.windowMs = ms;
    this.anchor = undefined;
  }

  /** A request granted at `now`. */
  open(weight: number, now: number): Claim {
    const claim: Claim = { weight, sentAt: now, counted: false };
    this.inflight.add(claim);
    this.inflightCU += weight;
    return claim;
  }

  /** A request answered (or given up) at `now`: its claim holds a window more. */
  close(claim: Claim, now: number): void {
    if (!this.inflight.delete(claim)) return;
    this.inflightCU -= claim.weight;
    claim.doneAt = now;
    this.add(claim.weight, claim.sentAt, now, claim.counted);
  }

  private add(weight: number, sentAt: number, doneAt: number, counted: boolean): void {
    this.answered.push(weight, sentAt, doneAt, counted);
    this.answeredCU += weight;
    if (this.anchor && doneAt > this.anchor.sentAt) this.anchor.since += weight;
  }

  /** Drops the claims a window past their answer. */
  prune(now: number): void {
    const a = this.answered;
    while (a.size > 0 && a.doneAt(0) <= now - this.windowMs) {
      this.answeredCU -= a.weight(0);
      a.shift();
    }
  }

  /** CU claimed in the window ending now: in flight, or answered less than a window ago. */
  used(now: number): number {
    this.prune(now);
    return this.inflightCU + this.answeredCU;
  }

  /**
   * The service counted `limit - remaining` of its window when it answered `claim` at `now`. What
   * it counted beyond our own claims (another process on the same key, a run that just ended) is
   * claimed too, for a window: it got through. An answer under 400 also becomes the anchor of the
   * service's own count, if it is the latest sent.
   */
  serviceCount(claim: Claim, status: number, limit: number, remaining: number, now: number): void {
    const beyond = limit - remaining - this.used(now);
    if (beyond > 0) this.add(beyond, now, now, true);
    if (status >= 400 || claim.sentAt < (this.anchor?.sentAt ?? -Infinity)) return;
    let since = 0;
    const a = this.answered;
    for (let k = 0; k < a.size; k++) if (a.doneAt(k) > claim.sentAt) since += a.weight(k);
    this.anchor = { counted: limit - remaining, weight: claim.weight, sentAt: claim.sentAt, since };
  }

  /** Whether the service's own count (see `anchor`) lets a request of this weight start at t. */
  private fitsServiceCount(weight: number, t: number, limit: number): boolean {
    const r = this.anchor;
    // Answers older than a window are dropped, so `since` is whole only while R was sent within one.
    if (!r || r.sentAt <= t - this.windowMs) return false;
    return r.counted - r.weight + this.inflightCU + r.since + weight <= limit;
  }

  /**
   * The earliest time from `t` on that a request of this weight fits `limit` CU per window by the
   * claims; Infinity when that depends on answers still to come.
   */
  earliest(weight: number, t: number, limit: number): number {
    const a = this.answered;
    let i = 0;
    let live = this.answeredCU;
    while (i < a.size && a.doneAt(i) <= t - this.windowMs) live -= a.weight(i++);
    // A request heavier than the whole budget goes alone rather than never.
    let excess = this.inflightCU + live + (weight >= limit ? 0 : weight - limit);
    if (excess <= 0 || this.fitsServiceCount(weight, t, limit)) return t;
    for (; i < a.size; i++) {
      excess -= a.weight(i);
      if (excess <= 0) return Math.max(t, a.doneAt(i) + this.windowMs);
    }
    return Infinity;
  }

  gotSince(t: number): number {
    let n = 0;
    const a = this.answered;
    for (let k = 0; k < a.size; k++) if (a.counted(k) && a.doneAt(k) > t) n += a.weight(k);
    return n;
  }

  arrivedSince(from: number): number {
    let n = 0;
    const a = this.answered;
    for (let k = 0; k < a.size; k++) if (a.counted(k) && (a.sentAt(k) + a.doneAt(k)) / 2 >= from) n += a.weight(k);
    return n;
  }
}
