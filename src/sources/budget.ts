// The compute-unit (CU) budget of one service, counted the way the services count it: so many CU
// per window (a minute, or the window the service's `ratelimit-policy` names) and per day, each
// request costing its endpoint's weight (docs/services.md, Rate limits). It answers one question,
// "from when may a request of this weight start?", and learns from the answers.
//
// It joins parts with one job each, all pure (they take the time as an argument): the ledger of
// the window's claims (ledger.ts), the pacer (pacer.ts), the day's quota (quota.ts), the estimator
// that learns the budget from 429s (estimator.ts) and the pause a 429 asks for (pause.ts). What it
// adds is the window: the budget is the pipeline's (a tier or numbers, per minute: in a shorter
// window the service announces, its share of it), else the quota the service announces for its
// window (the lower of the two wins), else learnt.
import { MINUTE_MS } from './clock.js';
import { Estimator } from './estimator.js';
import type { RateHeaders } from './headers.js';
import { Ledger, type Claim } from './ledger.js';
import { Pacer } from './pacer.js';
import { Pause } from './pause.js';
import { DayQuota } from './quota.js';

export { DAY_MS, MINUTE_MS } from './clock.js';
export { MAX_HEADER_WAIT_MS, policyEntries, readRateHeaders, retryAfterMs, type RateHeaders } from './headers.js';
export type { Claim } from './ledger.js';

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
  /** The service's pause, when another part holds it too (the shared budget); else a pause of its own. */
  pause?: Pause;
}

/** Where the minute budget in force comes from. */
export type BudgetSource = 'pipeline' | 'headers' | 'learnt' | 'unknown';

export class RateBudget {
  /** A 429's retry-after holds back the whole service; one over the bound closes it. */
  readonly pause: Pause;
  /** CU per minute. */
  private readonly configured: number;
  /** The service's quota per window (the window is `windowMs`). */
  private headerLimit = Infinity;
  /**
   * The window the budget is counted over: a minute, the services' documented window, until the
   * service announces another in `ratelimit-policy`.
   */
  private window = MINUTE_MS;
  private readonly ledger = new Ledger(MINUTE_MS);
  private readonly pacer = new Pacer();
  private readonly day: DayQuota;
  private readonly estimator: Estimator;

  constructor(private readonly settings: BudgetSettings = {}) {
    this.configured = settings.cuPerMinute ?? Infinity;
    this.day = new DayQuota(settings.cuPerDay);
    this.estimator = new Estimator(this.configured, MINUTE_MS);
    this.pause = settings.pause ?? new Pause();
  }

  /** No request starts before this. */
  get pausedUntil(): number {
    return this.pause.until;
  }

  /** A 429 asked for a wait longer than the bound (maxPauseMs): no request is sent before this. */
  get closedUntil(): number {
    return this.pause.closedUntil;
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
    return Math.min(this.cap, this.estimator.estimate);
  }

  /** The budget in force as a rate: CU per minute; Infinity while nothing is known. */
  get cuPerMinute(): number {
    return (this.limit * MINUTE_MS) / this.window;
  }

  get dayLimit(): number {
    return this.day.limit;
  }

  get source(): BudgetSource {
    if (this.limit === Infinity) return 'unknown';
    if (this.estimator.estimate < this.cap) return 'learnt';
    return this.configuredInWindow <= this.headerLimit ? 'pipeline' : 'headers';
  }

  /** Counts the budget over a window of another length from now on (the service announced it); each part keeps its rates. */
  private setWindow(ms: number): void {
    this.window = ms;
    this.headerLimit = Infinity;
    this.ledger.setWindow(ms);
    this.estimator.setWindow(ms);
  }

  /** CU claimed in the window ending now: in flight, or answered less than a window ago. */
  used(now: number): number {
    return this.ledger.used(now);
  }

  private seen(): { got: Ledger; firstGrantAt: number | undefined; pausedUntil: number } {
    return { got: this.ledger, firstGrantAt: this.pacer.firstGrantAt, pausedUntil: this.pause.until };
  }

  /** The window reopens paced after a decrease, from the end of the pause. */
  private decreased(now: number): void {
    this.pacer.reopen(Math.max(now, this.pause.until), this.window);
  }

  /**
   * The earliest time a request of this weight may start, at `now` or later; Infinity when that
   * depends on answers still to come (a finish makes the caller ask again).
   */
  earliest(weight: number, now: number): number {
    if (this.estimator.settle(now, this.seen())) this.decreased(now);
    this.ledger.prune(now);
    let t = Math.max(now, this.pause.until);
    const limit = this.limit;
    if (limit < Infinity) t = this.pacer.earliest(t, this.window);
    t = this.day.earliest(weight, t);
    return limit === Infinity ? t : this.ledger.earliest(weight, t, limit);
  }

  /** Records the start of a request; `held` says it had to wait for the budget. */
  grant(weight: number, now: number, held: boolean): Claim {
    this.estimator.grant(now, held, this.ledger, this.cap);
    this.day.grant(weight, now);
    this.pacer.grant(weight, now, this.window, this.limit);
    return this.ledger.open(weight, now);
  }

  /** What an answer says about the budget. Call before `finish`. */
  answer(claim: Claim, status: number, h: RateHeaders, now: number): void {
    claim.counted = status !== 429 && status < 500;
    if (h.dayLimit !== undefined && h.dayLimit > 0) this.day.announce(h.dayLimit);
    if (h.limit !== undefined) {
      const announced = h.windowMs ?? MINUTE_MS;
      if (announced !== this.window) this.setWindow(announced);
      if (this.limit === Infinity) this.pacer.catchUp(this.used(now), this.window, h.limit);
      this.headerLimit = h.limit;
      this.estimator.announce(h.limit);
      // (A 429's remaining is 0 until the reset, which the pause covers.)
      if (h.remaining !== undefined && status !== 429) this.ledger.serviceCount(claim, status, h.limit, h.remaining, now);
    }
    if (status === 429) this.rateLimited(claim, h.retryAfterMs, now);
  }

  finish(claim: Claim, now: number): void {
    this.ledger.close(claim, now);
  }

  private rateLimited(claim: Claim, retryAfter: number | undefined, now: number): void {
    if (retryAfter !== undefined && !this.pause.hold(retryAfter, now, this.settings.maxPauseMs)) return;
    const onlyPause = this.settings.shared === true && this.cap < Infinity;
    if (this.estimator.limited(claim, retryAfter, now, this.seen(), onlyPause)) this.decreased(now);
  }
}
