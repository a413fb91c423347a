// Compute-unit budgets as production applies them (docs/services.md, Rate limits): per client,
// per fixed one-minute window and per UTC day; a client that keeps sending while limited gets
// blocked for a while.

export interface Budget {
  cuPerMinute: number;
  cuPerDay?: number;
}

export interface LimiterOptions extends Budget {
  /** more than this many requests while limited -> blocked (default 20) */
  blockAfterLimitedRequests?: number;
  /** how long a block lasts (default 60) */
  blockSeconds?: number;
}

/** Data-service endpoint weights in CU (docs/services.md, Rate limits); the metrics service charges 100 per series. */
export const WEIGHTS = {
  transfers: 20,
  internals: 20,
  delegators: 20,
  rewards: 100,
  pendingRewards: 100,
  metrics: 100,
  avgTps: 100,
  chains: 1,
  blocks: 10,
  block: 10,
  // Not published; a block's transactions are taken to cost what the block does.
  blockTransactions: 10,
  nativeBalance: 20,
  erc20Balances: 20,
  subnets: 20,
  // Not published; taken as a single-record read like a block.
  contractMetadata: 10,
  addressChains: 100,
  exportStart: 20,
  operation: 10,
  // Not published; "medium" in the OpenAPI, as starting an export is.
  aggregateSignatures: 20,
} as const;

export type Decision =
  | { allowed: true; limit: number; remaining: number }
  | { allowed: false; limit: number; remaining: 0; resetSeconds: number; blocked: boolean };

interface ClientState {
  minute: number;
  minuteUsed: number;
  day: number;
  dayUsed: number;
  limitedRequests: number;
  blockedUntil: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export class RateLimiter {
  private readonly clients = new Map<string, ClientState>();
  private readonly blockAfter: number;
  private readonly blockMs: number;

  constructor(private readonly opts: LimiterOptions, private readonly now: () => number) {
    this.blockAfter = opts.blockAfterLimitedRequests ?? 20;
    this.blockMs = (opts.blockSeconds ?? 60) * 1000;
  }

  /** `ratelimit-policy` header value: limit;w=window-seconds per budget. */
  policy(): string {
    const day = this.opts.cuPerDay !== undefined ? `, ${this.opts.cuPerDay};w=86400` : '';
    return `${this.opts.cuPerMinute};w=60${day}`;
  }

  take(client: string, weight: number): Decision {
    const t = this.now();
    const limit = this.opts.cuPerMinute;
    let st = this.clients.get(client);
    if (!st) {
      st = { minute: -1, minuteUsed: 0, day: -1, dayUsed: 0, limitedRequests: 0, blockedUntil: 0 };
      this.clients.set(client, st);
    }
    if (st.blockedUntil > t) {
      return { allowed: false, limit, remaining: 0, resetSeconds: seconds(st.blockedUntil - t), blocked: true };
    }
    if (st.blockedUntil !== 0) {
      st.blockedUntil = 0;
      st.limitedRequests = 0;
    }
    const minute = Math.floor(t / MINUTE_MS);
    const day = Math.floor(t / DAY_MS);
    if (minute !== st.minute) {
      st.minute = minute;
      st.minuteUsed = 0;
    }
    if (day !== st.day) {
      st.day = day;
      st.dayUsed = 0;
    }
    let resetAt: number | undefined;
    if (st.dayUsed + weight > (this.opts.cuPerDay ?? Infinity)) resetAt = (day + 1) * DAY_MS;
    else if (st.minuteUsed + weight > limit) resetAt = (minute + 1) * MINUTE_MS;
    if (resetAt !== undefined) {
      st.limitedRequests++;
      if (st.limitedRequests > this.blockAfter) {
        st.blockedUntil = t + this.blockMs;
        return { allowed: false, limit, remaining: 0, resetSeconds: seconds(this.blockMs), blocked: true };
      }
      return { allowed: false, limit, remaining: 0, resetSeconds: seconds(resetAt - t), blocked: false };
    }
    // A request that gets through ends the limited period.
    st.limitedRequests = 0;
    st.minuteUsed += weight;
    st.dayUsed += weight;
    const remaining = Math.min(limit - st.minuteUsed, (this.opts.cuPerDay ?? Infinity) - st.dayUsed);
    return { allowed: true, limit, remaining };
  }
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
