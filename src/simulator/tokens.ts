// Page tokens. Data-service tokens are stateless: base64url of a small JSON ({o: offset, q: query
// fingerprint}) plus a MAC, so they survive a simulator restart with the same seed and scale.
// Metrics-service tokens are UUIDs held in memory for 24 hours of the server clock, as the
// service keeps them (docs/services.md, Metrics service); an unknown or expired one gets a 400.
// With a world clock, a token also carries the world time of its listing's first page (`t`), so
// the following pages are served from the same snapshot however far the clock moves: a listing
// never shifts under a client between pages. With a data-token TTL, a data token also carries
// its issue time on the server clock (`i`) and gets a 400 once the TTL has passed.
import { createHash } from 'node:crypto';
import { badRequest } from './errors.js';

export const METRIC_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_METRIC_TOKENS = 200_000;

interface MetricTokenEntry {
  queryKey: string;
  offset: number;
  expiresAt: number;
  at?: number;
}

/** Where a token points: the offset, and the world time of the listing's snapshot if any. */
export interface TokenState {
  offset: number;
  at?: number;
}

function digest(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('base64url');
}

/** A version-4 UUID's form, from a hash of `parts`: deterministic for the same parts. */
export function uuidOf(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[parseInt(h[16]!, 16) & 3]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export class PageTokens {
  private readonly metricTokens = new Map<string, MetricTokenEntry>();
  private issued = 0;

  /** @param dataTtlMs data tokens expire this long after issue (server clock); default never */
  constructor(private readonly secret: string, private readonly now: () => number, private readonly dataTtlMs?: number) {
    if (dataTtlMs !== undefined && !(dataTtlMs > 0)) throw new RangeError('dataTokenTtlMs must be positive');
  }

  issue(queryKey: string, offset: number, at?: number): string {
    const body: { o: number; q: string; t?: number; i?: number } = { o: offset, q: digest(this.secret, queryKey).slice(0, 16) };
    if (at !== undefined) body.t = at;
    if (this.dataTtlMs !== undefined) body.i = this.now();
    const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
    return `${payload}.${digest(this.secret, payload).slice(0, 16)}`;
  }

  /** Where a token points; 400 unless it was issued for this very query (and, with a TTL, is fresh). */
  redeem(token: string, queryKey: string): TokenState {
    const [payload, mac, extra] = token.split('.');
    if (!payload || !mac || extra !== undefined || digest(this.secret, payload).slice(0, 16) !== mac) {
      throw badRequest('pageToken is invalid');
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw badRequest('pageToken is invalid');
    }
    const { o, q, t, i } = (parsed ?? {}) as { o?: unknown; q?: unknown; t?: unknown; i?: unknown };
    if (typeof o !== 'number' || !Number.isSafeInteger(o) || o < 0) throw badRequest('pageToken is invalid');
    if (t !== undefined && (typeof t !== 'number' || !Number.isSafeInteger(t))) throw badRequest('pageToken is invalid');
    if (this.dataTtlMs !== undefined) {
      if (typeof i !== 'number' || !Number.isFinite(i)) throw badRequest('pageToken is invalid');
      if (this.now() - i >= this.dataTtlMs) throw badRequest(`pageToken has expired (tokens are valid for ${this.dataTtlMs} ms)`);
    }
    if (q !== digest(this.secret, queryKey).slice(0, 16)) throw badRequest('pageToken does not match the query it is used with');
    return t === undefined ? { offset: o } : { offset: o, at: t };
  }

  issueMetric(queryKey: string, offset: number, at?: number): string {
    const now = this.now();
    this.prune(now);
    // Deterministic for a given request sequence; formatted as a version-4 UUID.
    const uuid = uuidOf(this.secret, queryKey, String(offset), String(this.issued++));
    const entry: MetricTokenEntry = { queryKey, offset, expiresAt: now + METRIC_TOKEN_TTL_MS };
    if (at !== undefined) entry.at = at;
    this.metricTokens.set(uuid, entry);
    return uuid;
  }

  redeemMetric(token: string, queryKey: string): TokenState {
    const entry = this.metricTokens.get(token);
    if (!entry) throw badRequest('pageToken is invalid or unknown');
    if (this.now() >= entry.expiresAt) {
      this.metricTokens.delete(token);
      throw badRequest('pageToken has expired (tokens are valid for 24 hours)');
    }
    if (entry.queryKey !== queryKey) throw badRequest('pageToken does not match the query it is used with');
    return entry.at === undefined ? { offset: entry.offset } : { offset: entry.offset, at: entry.at };
  }

  private prune(now: number): void {
    // Entries are inserted in clock order, so expired ones sit at the front.
    for (const [k, e] of this.metricTokens) {
      if (e.expiresAt > now && this.metricTokens.size < MAX_METRIC_TOKENS) break;
      this.metricTokens.delete(k);
    }
  }
}
