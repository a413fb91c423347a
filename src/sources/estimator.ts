// The window's budget learnt from the service's 429s, below what is known for certain (the
// pipeline's budget, the quota the service announces): unlimited until a 429, then the CU that got
// through in the window the 429 closed, less 2% (multiplicative decrease; never below half the
// rate before when the run saw only part of that window), plus a step for every window that ran
// at the budget without a 429 (additive increase; after three in a row, each twice the last). A
// 429 in a window that carried no more than two clean windows in a row did is doubted once: a
// service that sends 429s that are not its budget's (a proxy, an overloaded node) would otherwise
// lower the rate 2% a window for good. A decrease no other 429 came near is undone once the run
// has gone two windows without one (see `Undo`). Pure: every method takes the time and what got
// through (the ledger).
import { SECOND_MS as SECOND } from './clock.js';
import type { Claim, Throughput } from './ledger.js';

/** What the learnt budget becomes after a 429: this share of what got through in that window. */
const DECREASE_TO_MEASURED = 0.98;
/** ...but never less than this share of the rate before. */
const DECREASE_FLOOR = 0.5;
/** Additive increase per window spent at the budget without a 429, as a share of the reference budget. */
const STEP = 0.01;
/** A larger step while far below the reference (recovering from a drop that proved too deep). */
const RECOVERY_STEP = 0.1;
const RECOVERY_BELOW = 0.9;
/** A 429 with no other within this many windows before it is lone: the decrease it makes is undone if none follows. */
const LONE_WINDOWS = 10;
/** Window-long periods in a row without a 429 that undo a lone 429's decrease. */
const UNDO_AFTER = 2;
/**
 * Steps up in a row after which each step is twice the last. A decrease that 429s which recur
 * keep is kept, however far below the budget their windows' measure was (429s that are not the
 * budget's, one a window), and steps of a share of that measure would never climb back. A budget
 * really there is met within three steps of a decrease to 98% of it, so this costs it nothing.
 */
const CLIMB_AFTER = 3;

/** What the estimator reads of the rest of the budget when a 429 comes or a pause ends. */
export interface Seen {
  got: Throughput;
  /** The run's first grant. */
  firstGrantAt: number | undefined;
  /** The end of the pause in force (after this 429's). */
  pausedUntil: number;
}

/**
 * What was learnt about the edges of the service's windows: it says nothing of windows of another
 * length, and is forgotten with them.
 */
interface Edges {
  /** A limited window whose measurement waits for the end of the pause; `lone`: see Undo. */
  pending?: { before: number; resumed: number; lone: boolean; lo: number; hi: number };
  /** The window-long period under way: whether it was held by the budget, and saw a 429. */
  periodStart?: number;
  periodAtBudget: boolean;
  periodLimited: boolean;
  /**
   * The most CU that got through in each of two window-long periods in a row without any 429:
   * the budget is at least about that. A 429 in a window that carried no more is not taken for
   * the budget's the first time; the second in a row is (the budget may have dropped: the key is
   * shared).
   */
  provenCU: number;
  doubted: boolean;
  /** Steps up in a row since the last 429 (see CLIMB_AFTER). */
  climb: number;
  /** CU of the last period, when it saw no 429. */
  lastCleanCU?: number;
}

/**
 * What a lone 429's decrease replaced. One 429 says nothing certain of the budget: what got through
 * in its window is the budget's measure only if the run was pressing on it, and a 429 that is not
 * the budget's (a proxy, a blip) takes whatever the run happened to need then, in a lull a few
 * requests a window, early in a run half its rate; and the additive step back up is a share of
 * that measure, so the run would stay there for good. The decrease still comes at once (if the
 * budget is spent, going on gets every request refused), but once two window-long periods in a
 * row pass without a 429 (one may straddle two of the service's windows; two hold a whole one)
 * the rate before it comes back. A budget that is real answers 429 again as soon as the run goes faster,
 * within a window of the undo: that 429 is not lone, and its decrease is kept. The cost is one
 * window over the budget each time a 429 comes after a quiet spell of LONE_WINDOWS.
 */
interface Undo {
  estimate: number;
  measured: number | undefined;
  /** Periods in a row without a 429 since the decrease. */
  clean: number;
}

const freshEdges = (): Edges => ({ periodAtBudget: false, periodLimited: false, provenCU: 0, doubted: false, climb: 0 });

export class Estimator {
  /** The window's budget in force below the known cap; lowered by 429s, raised step by step. */
  estimate: number;
  /** What got through in the last window a 429 closed: the reference for the increase step. */
  private measured?: number;
  /** When the last 429 that opened a limited window came. */
  private lastDecreaseAt = -Infinity;
  private undo?: Undo;
  /** When the last 429's pause ended (or ends). */
  private resumedAt = -Infinity;
  private edges = freshEdges();

  constructor(
    estimate: number,
    private windowMs: number,
  ) {
    this.estimate = estimate;
  }

  /** Windows of another length from now on: what was learnt keeps its rate. */
  setWindow(ms: number): void {
    const scale = ms / this.windowMs;
    this.windowMs = ms;
    this.estimate *= scale;
    if (this.measured !== undefined) this.measured *= scale;
    if (this.undo) {
      this.undo.estimate *= scale;
      if (this.undo.measured !== undefined) this.undo.measured *= scale;
    }
    this.edges = freshEdges();
  }

  /** The service announced its quota: nothing learnt stays above it. */
  announce(limit: number): void {
    this.estimate = Math.min(this.estimate, limit);
    if (this.undo) this.undo.estimate = Math.min(this.undo.estimate, limit);
  }

  /**
   * A 429 answered at `now` to `claim`, after the pause it asked for (if any) is in force.
   * `onlyPause`: the budget is known and shared with other processes, so the 429 comes of their
   * requests and the window's edge, and lowers nothing. True if the estimate went down.
   */
  limited(claim: Claim, retryAfter: number | undefined, now: number, seen: Seen, onlyPause: boolean): boolean {
    const e = this.edges;
    const resumed = this.resumedAt;
    if (retryAfter !== undefined) this.resumedAt = seen.pausedUntil;
    e.periodLimited = true;
    // Longer than a window: the day budget or a block, not the window's budget.
    if (retryAfter !== undefined && retryAfter > this.windowMs) return false;
    if (onlyPause) return false;
    // The service's window closes within (sent + retry-after - 1 s, answered + retry-after]:
    // retry-after is whole seconds rounded up, reckoned when the request arrived.
    const close = retryAfter !== undefined ? { lo: claim.sentAt + retryAfter - SECOND, hi: now + retryAfter } : undefined;
    const p = e.pending;
    if (p && close && close.lo < p.hi && close.hi > p.lo) {
      // Another 429 of the same window (a request that was under way): it narrows the close.
      p.lo = Math.max(p.lo, close.lo);
      p.hi = Math.min(p.hi, close.hi);
      return false;
    }
    // One decrease per limited window: a 429 that claims a window which opened before we resumed
    // from the last one adds nothing (a 429 that is not the budget's says the window ends in 1 s).
    const fresh = close ? close.hi - this.windowMs >= resumed - SECOND : now - this.lastDecreaseAt >= this.windowMs;
    if (!fresh) return false;
    const before = this.estimate < Infinity ? this.estimate : this.recentRate(now, seen);
    if (!(before > 0)) return false; // nothing got through yet: the pause is all there is to go by
    const lone = now - this.lastDecreaseAt > LONE_WINDOWS * this.windowMs;
    this.lastDecreaseAt = now;
    e.climb = 0;
    e.periodStart = now;
    e.periodAtBudget = false;
    e.periodLimited = false;
    if (close) {
      e.pending = { before, resumed, lone, ...close };
      return false;
    }
    return this.decrease(before * DECREASE_FLOOR, before, lone);
  }

  /** Once the pause is over (and the requests under way have answered): how much got through. True if the estimate went down. */
  settle(now: number, seen: Seen): boolean {
    const e = this.edges;
    const p = e.pending;
    if (!p || now < seen.pausedUntil) return false;
    e.pending = undefined;
    // Nothing was sent during the last pause, so if it ended after the window may have opened,
    // everything sent since landed in it; else count from the middle of the doubt.
    const from = p.resumed >= p.lo - this.windowMs ? p.resumed : (p.lo + p.hi) / 2 - this.windowMs;
    // A request counts by when it reached the service, which lies between its send and its answer:
    // by the send alone, what went out just before the window opened and arrived in it was left
    // out, and a budget learnt that way fell well short of the service's.
    const measured = seen.got.arrivedSince(from);
    if (measured === 0) return this.decrease(p.before * DECREASE_FLOOR, p.before, p.lone);
    if (measured <= e.provenCU && !e.doubted) {
      e.doubted = true;
      return false;
    }
    if (measured <= e.provenCU) e.provenCU = 0;
    e.doubted = false;
    // Seen from its start, a window that ended in a 429 is the budget. Seen only in part (the run
    // began inside it) it may be anything, e.g. a 429 that is not the budget's: then the rate is
    // at most halved, and the next window, seen whole, tells. A run that began within the doubt
    // about when the window opened missed a second of it at most: that window counts as whole
    // (else a run started on a window's edge halves a rate ten times the budget and spends the
    // next window over it).
    const wholeWindow = seen.firstGrantAt! <= p.hi - this.windowMs;
    const next = measured * DECREASE_TO_MEASURED;
    return this.decrease(wholeWindow ? next : Math.max(p.before * DECREASE_FLOOR, next), p.before, p.lone, measured);
  }

  /** `measured`: what got through in the window the 429 closed, when it is known. */
  private decrease(to: number, before: number, lone: boolean, measured?: number): true {
    this.undo = lone ? { estimate: this.estimate, measured: this.measured, clean: 0 } : undefined;
    if (measured !== undefined) this.measured = measured;
    this.estimate = Math.max(1, Math.min(before, to));
    return true;
  }

  /** CU that got through per window lately (extrapolated while younger than a window). */
  private recentRate(now: number, seen: Seen): number {
    if (seen.firstGrantAt === undefined) return 0;
    const span = Math.max(Math.min(this.windowMs, now - seen.firstGrantAt), this.windowMs / 600);
    return (seen.got.gotSince(now - span) * this.windowMs) / span;
  }

  /**
   * At each grant (`held`: it waited for the budget), and once a window: the additive increase
   * toward `cap` (the budget known for certain), if the window ran at the budget and saw no 429.
   */
  grant(now: number, held: boolean, got: Throughput, cap: number): void {
    const e = this.edges;
    if (held) e.periodAtBudget = true;
    e.periodStart ??= now;
    if (now - e.periodStart < this.windowMs) return;
    if (!e.periodLimited) {
      e.doubted = false;
      const cu = got.gotSince(now - this.windowMs);
      // One clean period may straddle two of the service's windows and prove nothing of either;
      // two in a row hold a whole window of it.
      if (e.lastCleanCU !== undefined) e.provenCU = Math.max(e.provenCU, Math.min(cu, e.lastCleanCU));
      e.lastCleanCU = cu;
    } else e.lastCleanCU = undefined;
    const u = this.undo;
    if (u) u.clean = e.periodLimited ? 0 : u.clean + 1;
    if (u && u.clean >= UNDO_AFTER) {
      this.undo = undefined;
      this.estimate = Math.max(this.estimate, u.estimate);
      this.measured = u.measured;
    } else if (e.periodAtBudget && !e.periodLimited && this.estimate < cap) {
      const reference = cap < Infinity ? cap : (this.measured ?? this.estimate);
      e.climb++;
      const step = (this.estimate < RECOVERY_BELOW * reference ? RECOVERY_STEP : STEP) * reference * 2 ** Math.max(0, e.climb - CLIMB_AFTER);
      this.estimate = Math.min(cap, this.estimate + step);
    }
    if (e.periodLimited) e.climb = 0;
    e.periodStart = now;
    e.periodAtBudget = false;
    e.periodLimited = false;
  }
}
