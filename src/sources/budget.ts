// The compute-unit (CU) budget of one service, counted the way the services count it: so many CU
// per window (a minute, or the window the service's `ratelimit-policy` names) and per day, each
// request costing its endpoint's weight (docs/services.md, Rate limits). It answers one question,
// "from when may a request of this weight start?", and learns from the answers.
//
// The window's budget is kept over a sliding window whose claims last from the grant until one
// window after the answer. The services count fixed windows by arrival; an arrival lies between
// our grant and our answer, so whatever lands in any one of their windows was all claimed at once
// here, and a budget that is right is never exceeded, whatever the phase of their clock or the
// latency. Requests are also paced evenly over the window (after a burst of a few seconds' worth):
// spent in one burst a minute, the budget would go to whichever partitions happen to ask first,
// while paced, every partition is waiting when a slot comes and the fair queue decides; pacing
// also keeps few requests in flight when a 429 comes, and makes the measurement below sharp.
//
// The budget is the pipeline's (a tier or numbers, per minute: in a shorter window the service
// announces, its share of it), else the quota the service announces for its window (the lower of
// the two wins), else learnt: unlimited until a 429, then the CU that got through in
// the window the 429 closed, less 2% (multiplicative decrease; never below half the rate before
// when the run saw only part of that window), plus a step for every window that ran at the budget
// without a 429 (additive increase). A 429 in a window that carried no more than two clean windows
// in a row did is doubted once: a service that sends 429s that are not its budget's (a proxy, an
// overloaded node) would otherwise lower the rate 2% a window for good.

/** Published budgets of the data service by tier (docs/services.md, Rate limits). */
export const TIERS = {
  unauthenticated: { cuPerMinute: 6_000, cuPerDay: 1_200_000 },
  free: { cuPerMinute: 8_000, cuPerDay: 2_000_000 },
  base: { cuPerMinute: 10_000, cuPerDay: 3_750_000 },
  growth: { cuPerMinute: 14_000, cuPerDay: 11_200_000 },
  pro: { cuPerMinute: 20_000, cuPerDay: 25_000_000 },
} as const;

export type Tier = keyof typeof TIERS;

/** The metrics service has a single published budget. */
export const METRICS_BUDGET = { cuPerMinute: 8_000, cuPerDay: 1_200_000 } as const;

export const MINUTE_MS = 60_000;
/** retry-after comes in whole seconds. */
const SECOND = 1000;
export const DAY_MS = 86_400_000;

/** What the learnt budget becomes after a 429: this share of what got through in that window. */
const DECREASE_TO_MEASURED = 0.98;
/** ...but never less than this share of the rate before. */
const DECREASE_FLOOR = 0.5;
/** Additive increase per window spent at the budget without a 429, as a share of the reference budget. */
const STEP = 0.01;
/** A larger step while far below the reference (recovering from a drop that proved too deep). */
const RECOVERY_STEP = 0.1;
const RECOVERY_BELOW = 0.9;
/** Pacing lets this share of a window's budget go at once after a quiet spell (short runs finish sooner). */
const BURST = 1 / 12;

/** One request's claim on the budget: from its grant until one window after its answer. */
export interface Claim {
  weight: number;
  /** When the request actually went out (after any wait for a connection slot). */
  sentAt: number;
  doneAt?: number;
  /** The service counted it (any answer but a 429 or a 5xx). */
  counted: boolean;
}

/** The rate-limit facts of one answer. */
export interface RateHeaders {
  /** CU per window of `windowMs` (`ratelimit-limit`, or an entry of `ratelimit-policy`). */
  limit?: number;
  /** The length of the window `limit` is the quota of. */
  windowMs?: number;
  /** What is left of `limit` in the service's current window. */
  remaining?: number;
  /** CU per day, from the 86400-second entry of `ratelimit-policy`. */
  dayLimit?: number;
  /** `retry-after`, else `ratelimit-reset`. */
  retryAfterMs?: number;
}

/**
 * Longest wait a header is read as: a service asking for more (10^9 seconds) is read as this, which
 * dates and timers still hold; any bound a pipeline sets is far below it.
 */
export const MAX_HEADER_WAIT_MS = 366 * DAY_MS;

/** retry-after is seconds or an HTTP date. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const s = Number(header);
  if (Number.isFinite(s) && s >= 0) return Math.min(s * 1000, MAX_HEADER_WAIT_MS);
  // An HTTP date names its day and month; Date.parse would read `-5` as a year.
  if (!/[A-Za-z]/.test(header)) return undefined;
  const t = Date.parse(header);
  return Number.isNaN(t) ? undefined : Math.min(Math.max(0, t - now), MAX_HEADER_WAIT_MS);
}

function count(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const n = Number(header);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * The entries of a `ratelimit-policy`: a quota per window of so many seconds. The IETF RateLimit
 * header fields draft writes them `6000;w=60, 1200000;w=86400` (quota first); its later versions
 * name each policy and give the quota as a parameter (`"burst";q=400;w=5`). An entry without a
 * window is skipped.
 */
export function policyEntries(header: string | null): Array<{ quota: number; seconds: number }> {
  const out: Array<{ quota: number; seconds: number }> = [];
  for (const member of (header ?? '').split(',')) {
    const [head = '', ...params] = member.split(';').map((x) => x.trim());
    let quota = /^\d+$/.test(head) ? Number(head) : undefined;
    let seconds: number | undefined;
    for (const p of params) {
      const m = /^([a-z]+)\s*=\s*(\d+)$/.exec(p);
      if (m?.[1] === 'q') quota = Number(m[2]);
      if (m?.[1] === 'w') seconds = Number(m[2]);
    }
    if (quota !== undefined && quota > 0 && seconds !== undefined && seconds > 0) out.push({ quota, seconds });
  }
  return out;
}

export function readRateHeaders(get: (name: string) => string | null, now = Date.now()): RateHeaders {
  const out: RateHeaders = {};
  // The day's entry is the day budget (UTC days); the others are windows, quota per window.
  const quotas = new Map<number, number>();
  for (const { quota, seconds } of policyEntries(get('ratelimit-policy'))) {
    if (seconds === DAY_MS / SECOND) out.dayLimit = quota;
    else if (seconds < DAY_MS / SECOND) quotas.set(seconds, Math.min(quota, quotas.get(seconds) ?? Infinity));
  }
  // `ratelimit-limit` is the quota of one of those windows: the entry it equals, else the shortest
  // (a policy of one window leaves no doubt). Without a policy, the services' windows are a minute.
  const limit = count(get('ratelimit-limit'));
  const windows = [...quotas.keys()].sort((a, b) => a - b);
  const limitWindow = windows.find((w) => quotas.get(w) === limit) ?? windows[0] ?? MINUTE_MS / SECOND;
  if (limit !== undefined && limit > 0) quotas.set(limitWindow, Math.min(limit, quotas.get(limitWindow) ?? Infinity));
  // The budget follows the window of the lowest rate: the others allow more whatever the pacing.
  let best: number | undefined;
  for (const w of quotas.keys()) {
    const rate = quotas.get(w)! / w;
    const bestRate = best === undefined ? Infinity : quotas.get(best)! / best;
    if (rate < bestRate || (rate === bestRate && w < best!)) best = w;
  }
  if (best !== undefined) {
    out.limit = quotas.get(best)!;
    out.windowMs = best * SECOND;
  }
  const remaining = count(get('ratelimit-remaining'));
  // What is left is of the window `ratelimit-limit` is the quota of.
  if (remaining !== undefined && (limit === undefined || best === limitWindow)) out.remaining = remaining;
  const retry = retryAfterMs(get('retry-after'), now) ?? retryAfterMs(get('ratelimit-reset'), now);
  if (retry !== undefined) out.retryAfterMs = retry;
  return out;
}

export interface BudgetSettings {
  cuPerMinute?: number;
  cuPerDay?: number;
  /**
   * The key's budget is shared with other processes (a shared budget in PostgreSQL): a 429 while
   * the budget is known (the pipeline's or announced) comes of their requests and the window's
   * edge, not of a lower budget. It pauses, and lowers nothing: what this process got through in
   * that window is its share, which would otherwise become every process's budget.
   */
  shared?: boolean;
  /**
   * A 429 asking to wait longer than this does not pause the service: it closes it (closedUntil),
   * and every request fails at once, saying until when (the pipeline's maxRetryAfterSeconds).
   */
  maxPauseMs?: number;
}

/** Where the minute budget in force comes from. */
export type BudgetSource = 'pipeline' | 'headers' | 'learnt' | 'unknown';

/**
 * Answered claims in answer order, as columns in a ring that grows by doubling. As objects, a
 * minute of answers was 34,884 claims (about 3 MB with their boxed times) in V8's old generation 75 s
 * into a 5M-row run on the simulator, a heap V8 sizes at twice its live data; a run under a minute
 * never gets there, so the peak RSS depended on the run's length.
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

export class RateBudget {
  /** No request starts before this: a 429's retry-after holds back the whole service. */
  pausedUntil = 0;
  /** A 429 asked for a wait longer than the bound (maxPauseMs): no request is sent before this. */
  closedUntil = 0;
  /** CU per minute. */
  private readonly configured: number;
  private readonly configuredDay: number;
  /** The service's quota per window (the window is `windowMs`). */
  private headerLimit = Infinity;
  private headerDay = Infinity;
  /** The window's budget in force below the known cap; lowered by 429s, raised step by step. */
  private estimate: number;
  /** What got through in the last window a 429 closed: the reference for the increase step. */
  private measured?: number;
  private readonly inflight = new Set<Claim>();
  private inflightCU = 0;
  /** Answered claims in answer order; a window after its answer a claim drops out. */
  private readonly answered = new Answers();
  private answeredCU = 0;
  private day = -1;
  private dayUsed = 0;
  /** Pacing: the theoretical start of the next request (GCRA). */
  private nextStart = 0;
  private firstGrantAt?: number;
  private lastDecreaseAt = -Infinity;
  /** When the last 429's pause ended (or ends). */
  private resumedAt = -Infinity;
  /** A limited window whose measurement waits for the end of the pause. */
  private pending?: { before: number; resumed: number; lo: number; hi: number };
  private periodStart?: number;
  private periodAtBudget = false;
  private periodLimited = false;
  /**
   * The most CU that got through in each of two window-long periods in a row without any 429:
   * the budget is at least about that. A 429 in a window that carried no more is not taken for the budget's the first
   * time (a 429 that is not the budget's would otherwise lower the rate 2% a window for good);
   * the second in a row is (the budget may have dropped: the key is shared).
   */
  private provenCU = 0;
  private doubted = false;
  /** CU of the last period, when it saw no 429. */
  private lastCleanCU?: number;
  /**
   * The service's own count, from the latest answer that said what is left of its window
   * (`ratelimit-remaining`): a second bound, beside the claims, on what can land in one of its
   * windows with the next request. That answer's request (R) arrived between its send and its
   * answer, and a request granted now arrives after R did, so in R's window or a later one. What
   * can share its window is then at most what the service had counted at R's arrival (R
   * included), plus what may have arrived after R: every request in flight, and every answer
   * that came after R was sent (one answered before R was sent arrived before R). The claims must
   * allow for a whole window of latency (they hold until a window after the answer), which costs
   * about latency / window of the budget (5% of a 5-second window at 250 ms); this bound frees
   * that as soon as an answer shows the service's window has turned.
   */
  private anchor?: { counted: number; weight: number; sentAt: number; since: number };

  /**
   * The window the budget is counted over: a minute, the services' documented window, until the
   * service announces another in `ratelimit-policy`.
   */
  private window = MINUTE_MS;

  constructor(private readonly settings: BudgetSettings = {}) {
    this.configured = settings.cuPerMinute ?? Infinity;
    this.configuredDay = settings.cuPerDay ?? Infinity;
    this.estimate = this.configured;
  }

  get windowMs(): number {
    return this.window;
  }

  /** The pipeline's budget, as a share of the window. */
  private get configuredInWindow(): number {
    return (this.configured * this.window) / MINUTE_MS;
  }

  /** The window's budget known for certain (pipeline or headers); Infinity if none. */
  private get cap(): number {
    return Math.min(this.configuredInWindow, this.headerLimit);
  }

  /** CU per window in force; Infinity while nothing is known. */
  get limit(): number {
    return Math.min(this.cap, this.estimate);
  }

  /** The budget in force as a rate: CU per minute; Infinity while nothing is known. */
  get cuPerMinute(): number {
    return (this.limit * MINUTE_MS) / this.window;
  }

  get dayLimit(): number {
    return Math.min(this.configuredDay, this.headerDay);
  }

  get source(): BudgetSource {
    if (this.limit === Infinity) return 'unknown';
    if (this.estimate < this.cap) return 'learnt';
    return this.configuredInWindow <= this.headerLimit ? 'pipeline' : 'headers';
  }

  /**
   * Counts the budget over a window of another length from now on (the service announced it).
   * Every per-window figure keeps its rate; what was learnt about the old window's edges (a
   * measurement under way, the clean periods) says nothing of the new one's.
   */
  private setWindow(ms: number): void {
    const scale = ms / this.window;
    this.window = ms;
    this.estimate *= scale;
    if (this.measured !== undefined) this.measured *= scale;
    this.headerLimit = Infinity;
    this.anchor = undefined;
    this.pending = undefined;
    this.provenCU = 0;
    this.doubted = false;
    this.lastCleanCU = undefined;
    this.periodStart = undefined;
    this.periodAtBudget = false;
    this.periodLimited = false;
  }

  private prune(now: number): void {
    const a = this.answered;
    while (a.size > 0 && a.doneAt(0) <= now - this.window) {
      this.answeredCU -= a.weight(0);
      a.shift();
    }
  }

  private addAnswered(c: Claim): void {
    this.answered.push(c.weight, c.sentAt, c.doneAt!, c.counted);
    this.answeredCU += c.weight;
    if (this.anchor && c.doneAt! > this.anchor.sentAt) this.anchor.since += c.weight;
  }

  /** Whether the service's own count (see `anchor`) lets a request of this weight start at t. */
  private fitsServiceCount(weight: number, t: number, limit: number): boolean {
    const r = this.anchor;
    // Answers older than a window are dropped, so `since` is whole only while R was sent within one.
    if (!r || r.sentAt <= t - this.window) return false;
    return r.counted - r.weight + this.inflightCU + r.since + weight <= limit;
  }

  /** CU claimed in the window ending now: in flight, or answered less than a window ago. */
  used(now: number): number {
    this.prune(now);
    return this.inflightCU + this.answeredCU;
  }

  /**
   * The earliest time a request of this weight may start, at `now` or later; Infinity when that
   * depends on answers still to come (a finish makes the caller ask again).
   */
  earliest(weight: number, now: number): number {
    this.settle(now);
    this.prune(now);
    let t = Math.max(now, this.pausedUntil);
    if (this.limit < Infinity) t = Math.max(t, this.nextStart - this.window * BURST);
    const dayLimit = this.dayLimit;
    if (dayLimit < Infinity) {
      const d = Math.floor(t / DAY_MS);
      const used = d === this.day ? this.dayUsed : 0;
      if (used > 0 && used + weight > dayLimit) t = (d + 1) * DAY_MS;
    }
    const limit = this.limit;
    if (limit === Infinity) return t;
    const a = this.answered;
    let i = 0;
    let live = this.answeredCU;
    while (i < a.size && a.doneAt(i) <= t - this.window) live -= a.weight(i++);
    // A request heavier than the whole budget goes alone rather than never.
    let excess = this.inflightCU + live + (weight >= limit ? 0 : weight - limit);
    if (excess <= 0 || this.fitsServiceCount(weight, t, limit)) return t;
    for (; i < a.size; i++) {
      excess -= a.weight(i);
      if (excess <= 0) return Math.max(t, a.doneAt(i) + this.window);
    }
    return Infinity;
  }

  /** Records the start of a request; `held` says it had to wait for the budget. */
  grant(weight: number, now: number, held: boolean): Claim {
    this.endPeriod(now, held);
    const d = Math.floor(now / DAY_MS);
    if (d !== this.day) {
      this.day = d;
      this.dayUsed = 0;
    }
    this.dayUsed += weight;
    if (this.limit < Infinity) this.nextStart = Math.max(this.nextStart, now) + (weight * this.window) / this.limit;
    this.firstGrantAt ??= now;
    const claim: Claim = { weight, sentAt: now, counted: false };
    this.inflight.add(claim);
    this.inflightCU += weight;
    return claim;
  }

  /** What an answer says about the budget. Call before `finish`. */
  answer(claim: Claim, status: number, h: RateHeaders, now: number): void {
    claim.counted = status !== 429 && status < 500;
    if (h.dayLimit !== undefined && h.dayLimit > 0) this.headerDay = h.dayLimit;
    if (h.limit !== undefined) {
      const announced = h.windowMs ?? MINUTE_MS;
      if (announced !== this.window) this.setWindow(announced);
      // What went out before the budget was known counts as paced already: no second burst.
      if (this.limit === Infinity) this.nextStart = Math.max(this.nextStart, this.firstGrantAt! + (this.used(now) * this.window) / h.limit);
      this.headerLimit = h.limit;
      this.estimate = Math.min(this.estimate, h.limit);
      // What the service counted beyond our own claims (another process on the same key, a run
      // that just ended) is claimed too, for a window. (A 429's remaining is 0 until the reset,
      // which the pause covers.) It got through: what a 429 measures is the key's budget, not
      // this process's share of it.
      if (h.remaining !== undefined && status !== 429) {
        const beyond = h.limit - h.remaining - this.used(now);
        if (beyond > 0) this.addAnswered({ weight: beyond, sentAt: now, doneAt: now, counted: true });
        if (status < 400 && claim.sentAt >= (this.anchor?.sentAt ?? -Infinity)) {
          let since = 0;
          const a = this.answered;
          for (let k = 0; k < a.size; k++) if (a.doneAt(k) > claim.sentAt) since += a.weight(k);
          this.anchor = { counted: h.limit - h.remaining, weight: claim.weight, sentAt: claim.sentAt, since };
        }
      }
    }
    if (status === 429) this.rateLimited(claim, h.retryAfterMs, now);
  }

  finish(claim: Claim, now: number): void {
    if (!this.inflight.delete(claim)) return;
    this.inflightCU -= claim.weight;
    claim.doneAt = now;
    this.addAnswered(claim);
  }

  private rateLimited(claim: Claim, retryAfter: number | undefined, now: number): void {
    if (retryAfter !== undefined && retryAfter > (this.settings.maxPauseMs ?? Infinity)) {
      this.closedUntil = Math.max(this.closedUntil, now + retryAfter);
      return;
    }
    const resumed = this.resumedAt;
    if (retryAfter !== undefined) this.pausedUntil = this.resumedAt = Math.max(this.pausedUntil, now + retryAfter);
    this.periodLimited = true;
    // Longer than a window: the day budget or a block, not the window's budget.
    if (retryAfter !== undefined && retryAfter > this.window) return;
    if (this.settings.shared && (this.configured < Infinity || this.headerLimit < Infinity)) return;
    // The service's window closes within (sent + retry-after - 1 s, answered + retry-after]:
    // retry-after is whole seconds rounded up, reckoned when the request arrived.
    const close = retryAfter !== undefined ? { lo: claim.sentAt + retryAfter - SECOND, hi: now + retryAfter } : undefined;
    const p = this.pending;
    if (p && close && close.lo < p.hi && close.hi > p.lo) {
      // Another 429 of the same window (a request that was under way): it narrows the close.
      p.lo = Math.max(p.lo, close.lo);
      p.hi = Math.min(p.hi, close.hi);
      return;
    }
    // One decrease per limited window: a 429 that claims a window which opened before we resumed
    // from the last one adds nothing (a 429 that is not the budget's says the window ends in 1 s).
    const fresh = close ? close.hi - this.window >= resumed - SECOND : now - this.lastDecreaseAt >= this.window;
    if (!fresh) return;
    const before = this.estimate < Infinity ? this.estimate : this.recentRate(now);
    if (!(before > 0)) return; // nothing got through yet: the pause is all there is to go by
    this.lastDecreaseAt = now;
    this.periodStart = now;
    this.periodAtBudget = false;
    this.periodLimited = false;
    if (close) this.pending = { before, resumed, ...close };
    else this.decrease(before * DECREASE_FLOOR, before, now);
  }

  /** Once the pause is over (and the requests under way have answered): how much got through. */
  private settle(now: number): void {
    const p = this.pending;
    if (!p || now < this.pausedUntil) return;
    this.pending = undefined;
    // Nothing was sent during the last pause, so if it ended after the window may have opened,
    // everything sent since landed in it; else count from the middle of the doubt.
    const from = p.resumed >= p.lo - this.window ? p.resumed : (p.lo + p.hi) / 2 - this.window;
    // A request counts by when it reached the service, which lies between its send and its answer:
    // by the send alone, what went out just before the window opened and arrived in it was left
    // out. (One bench run learnt 0.85 of a 2,500 CU budget. Over 40 simulated start phases of 3
    // windows, one used under 0.95 of it counting by send, none counting midway.)
    let measured = 0;
    const a = this.answered;
    for (let k = 0; k < a.size; k++) if (a.counted(k) && (a.sentAt(k) + a.doneAt(k)) / 2 >= from) measured += a.weight(k);
    if (measured === 0) return this.decrease(p.before * DECREASE_FLOOR, p.before, now);
    if (measured <= this.provenCU && !this.doubted) {
      this.doubted = true;
      return;
    }
    if (measured <= this.provenCU) this.provenCU = 0;
    this.doubted = false;
    this.measured = measured;
    // Seen from its start, a window that ended in a 429 is the budget. Seen only in part (the run
    // began inside it) it may be anything, e.g. a 429 that is not the budget's: then the rate is
    // at most halved, and the next window, seen whole, tells. A run that began within the doubt
    // about when the window opened missed a second of it at most: that window counts as whole
    // (else a run started on a window's edge halves a rate ten times the budget and spends the
    // next window over it).
    const wholeWindow = this.firstGrantAt! <= p.hi - this.window;
    const next = measured * DECREASE_TO_MEASURED;
    this.decrease(wholeWindow ? next : Math.max(p.before * DECREASE_FLOOR, next), p.before, now);
  }

  private decrease(to: number, before: number, now: number): void {
    this.estimate = Math.max(1, Math.min(before, to));
    // The window reopens paced, not with a burst.
    this.nextStart = Math.max(this.nextStart, Math.max(now, this.pausedUntil) + this.window * BURST);
  }

  /** CU the service counted of the requests answered after `t` (at most a window ago). */
  private gotSince(t: number): number {
    let n = 0;
    const a = this.answered;
    for (let k = 0; k < a.size; k++) if (a.counted(k) && a.doneAt(k) > t) n += a.weight(k);
    return n;
  }

  /** CU that got through per window lately (extrapolated while younger than a window). */
  private recentRate(now: number): number {
    if (this.firstGrantAt === undefined) return 0;
    const span = Math.max(Math.min(this.window, now - this.firstGrantAt), this.window / 600);
    return (this.gotSince(now - span) * this.window) / span;
  }

  /** Once a window: the additive increase, if the window ran at the budget and saw no 429. */
  private endPeriod(now: number, held: boolean): void {
    if (held) this.periodAtBudget = true;
    this.periodStart ??= now;
    if (now - this.periodStart < this.window) return;
    if (!this.periodLimited) {
      this.doubted = false;
      const got = this.gotSince(now - this.window);
      // One clean period may straddle two of the service's windows and prove nothing of either;
      // two in a row hold a whole window of it.
      if (this.lastCleanCU !== undefined) this.provenCU = Math.max(this.provenCU, Math.min(got, this.lastCleanCU));
      this.lastCleanCU = got;
    } else this.lastCleanCU = undefined;
    if (this.periodAtBudget && !this.periodLimited && this.estimate < this.cap) {
      const reference = this.cap < Infinity ? this.cap : (this.measured ?? this.estimate);
      const step = (this.estimate < RECOVERY_BELOW * reference ? RECOVERY_STEP : STEP) * reference;
      this.estimate = Math.min(this.cap, this.estimate + step);
    }
    this.periodStart = now;
    this.periodAtBudget = false;
    this.periodLimited = false;
  }
}
