// Compute-unit budgets as production applies them (docs/services.md, Rate limits): per client,
// per fixed window (a minute, or any length the options give) counted by arrival, and per UTC day;
// a client that keeps sending while limited gets blocked for a while.

export interface Budget {
  /** The rate; with `windowSeconds`, a window's quota is its share of this (rounded down). */
  cuPerMinute: number;
  cuPerDay?: number;
  /** Length of the fixed windows, announced in `ratelimit-policy` (default 60). */
  windowSeconds?: number;
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
  nativeTransactions: 20,
  erc721Balances: 20,
  erc1155Balances: 20,
  contractDeployments: 20,
  // The OpenAPI's classes: ICM messages "medium", the AVAX supply "free"; the ICM series is a
  // metrics series, budgeted at 100 as the others (docs/services.md, Rate limits).
  icmMessages: 20,
  avaxSupply: 1,
  icmTimeseries: 100,
  // "medium" in the OpenAPI, as delegators and subnets are; a staking series as any metric series.
  validators: 20,
  l1Validators: 20,
  stakingMetrics: 100,
  // "xl" and "medium" in the OpenAPI, as rewards (100) and subnets (20) are.
  primaryTransactions: 100,
  primaryBlocks: 20,
  // "xl" and "medium" too: the active staking transactions, and the blocks a node proposed.
  primaryStaking: 100,
  primaryNodeBlocks: 20,
  // The OpenAPI gives the L1 validator fee series no class; budgeted as every metrics series.
  l1TotalMetrics: 100,
  l1ValidationMetrics: 100,
  l1NodeMetrics: 100,
  l1SubnetMetrics: 100,
  // "medium" in the OpenAPI, as the native transactions of an address are.
  erc20Transactions: 20,
  erc721Transactions: 20,
  erc1155Transactions: 20,
  // "medium" in the OpenAPI both: an address's full transaction listing and its collectibles.
  transactionDetails: 20,
  collectibleBalances: 20,
  // Both "xl" in the OpenAPI.
  primaryBalances: 100,
  primaryUtxos: 100,
  // Both "xxl" in the OpenAPI: the dearest class, 200 CU.
  apiUsageMetrics: 200,
  apiLogs: 200,
  // issue 40, the primary network and the X-Chain: network details and an asset's transactions are "xl" in the OpenAPI.
  networkDetails: 100,
  assetTransactions: 100,
  // "medium" in the OpenAPI.
  xVertices: 20,
  // Issue 40, EVM and metrics side: the OpenAPI's classes ("free" the metrics chains, "large"
  // the address lookups, "medium" an NFT collection's tokens; the address's chains have none,
  // taken as "medium"); the rolling windows and the ICM summary are "small", budgeted at 100 as
  // every metrics series (docs/services.md, Rate limits).
  metricsChains: 1,
  rollingWindowMetrics: 100,
  icmSummary: 100,
  validatorAddresses: 50,
  btcbBridgers: 50,
  addressEvmChains: 20,
  nftTokens: 20,
  // "medium" in the OpenAPI, as the v1 listing.
  transactionDetailsV2: 20,
  // "xl" in the OpenAPI.
  lastActivity: 100,
  // Both "xxl", as the key's own usage series.
  subnetRpcUsage: 200,
  primaryRpcUsage: 200,
} as const;

export type Decision =
  | { allowed: true; limit: number; remaining: number }
  | { allowed: false; limit: number; remaining: 0; resetSeconds: number; blocked: boolean };

interface ClientState {
  window: number;
  windowUsed: number;
  day: number;
  dayUsed: number;
  limitedRequests: number;
  blockedUntil: number;
}

const DAY_MS = 86_400_000;

export class RateLimiter {
  private readonly clients = new Map<string, ClientState>();
  private readonly blockAfter: number;
  private readonly blockMs: number;
  private readonly windowMs: number;
  /** CU a window allows: what `ratelimit-limit` says. */
  private readonly quota: number;

  constructor(private readonly opts: LimiterOptions, private readonly now: () => number) {
    this.blockAfter = opts.blockAfterLimitedRequests ?? 20;
    this.blockMs = (opts.blockSeconds ?? 60) * 1000;
    const seconds = opts.windowSeconds ?? 60;
    if (!(Number.isInteger(seconds) && seconds >= 1)) throw new Error(`a rate-limit window is a whole number of seconds >= 1, not ${seconds}`);
    this.windowMs = seconds * 1000;
    this.quota = Math.floor((opts.cuPerMinute * seconds) / 60);
    if (this.quota < 1) throw new Error(`${opts.cuPerMinute} CU a minute leaves no CU in a window of ${seconds} s`);
  }

  /** `ratelimit-policy` header value: quota;w=window-seconds per budget. */
  policy(): string {
    const day = this.opts.cuPerDay !== undefined ? `, ${this.opts.cuPerDay};w=86400` : '';
    return `${this.quota};w=${this.windowMs / 1000}${day}`;
  }

  take(client: string, weight: number): Decision {
    const t = this.now();
    const limit = this.quota;
    let st = this.clients.get(client);
    if (!st) {
      st = { window: -1, windowUsed: 0, day: -1, dayUsed: 0, limitedRequests: 0, blockedUntil: 0 };
      this.clients.set(client, st);
    }
    if (st.blockedUntil > t) {
      return { allowed: false, limit, remaining: 0, resetSeconds: seconds(st.blockedUntil - t), blocked: true };
    }
    if (st.blockedUntil !== 0) {
      st.blockedUntil = 0;
      st.limitedRequests = 0;
    }
    const window = Math.floor(t / this.windowMs);
    const day = Math.floor(t / DAY_MS);
    if (window !== st.window) {
      st.window = window;
      st.windowUsed = 0;
    }
    if (day !== st.day) {
      st.day = day;
      st.dayUsed = 0;
    }
    let resetAt: number | undefined;
    if (st.dayUsed + weight > (this.opts.cuPerDay ?? Infinity)) resetAt = (day + 1) * DAY_MS;
    else if (st.windowUsed + weight > limit) resetAt = (window + 1) * this.windowMs;
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
    st.windowUsed += weight;
    st.dayUsed += weight;
    const remaining = Math.min(limit - st.windowUsed, (this.opts.cuPerDay ?? Infinity) - st.dayUsed);
    return { allowed: true, limit, remaining };
  }
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
