// Page tokens. Data-service tokens are stateless: base64url of a small JSON ({o: offset, q: query
// fingerprint}) plus a MAC, so they survive a simulator restart with the same seed and scale.
// Metrics-service tokens are UUIDs held in memory for 24 hours of the server clock, as the
// reference describes; an unknown or expired one gets a 400.
import { createHash } from 'node:crypto';
import { badRequest } from './errors.js';

export const METRIC_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_METRIC_TOKENS = 200_000;

interface MetricTokenEntry {
  queryKey: string;
  offset: number;
  expiresAt: number;
}

function digest(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('base64url');
}

export class PageTokens {
  private readonly metricTokens = new Map<string, MetricTokenEntry>();
  private issued = 0;

  constructor(private readonly secret: string, private readonly now: () => number) {}

  issue(queryKey: string, offset: number): string {
    const payload = Buffer.from(JSON.stringify({ o: offset, q: digest(this.secret, queryKey).slice(0, 16) })).toString('base64url');
    return `${payload}.${digest(this.secret, payload).slice(0, 16)}`;
  }

  /** The offset a token points at; 400 unless it was issued for this very query. */
  redeem(token: string, queryKey: string): number {
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
    const { o, q } = (parsed ?? {}) as { o?: unknown; q?: unknown };
    if (typeof o !== 'number' || !Number.isSafeInteger(o) || o < 0) throw badRequest('pageToken is invalid');
    if (q !== digest(this.secret, queryKey).slice(0, 16)) throw badRequest('pageToken does not match the query it is used with');
    return o;
  }

  issueMetric(queryKey: string, offset: number): string {
    const now = this.now();
    this.prune(now);
    // Deterministic for a given request sequence; formatted as a version-4 UUID.
    const h = createHash('sha256').update(`${this.secret}\u0000${queryKey}\u0000${offset}\u0000${this.issued++}`).digest('hex');
    const uuid = `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[parseInt(h[16]!, 16) & 3]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
    this.metricTokens.set(uuid, { queryKey, offset, expiresAt: now + METRIC_TOKEN_TTL_MS });
    return uuid;
  }

  redeemMetric(token: string, queryKey: string): number {
    const entry = this.metricTokens.get(token);
    if (!entry) throw badRequest('pageToken is invalid or unknown');
    if (this.now() >= entry.expiresAt) {
      this.metricTokens.delete(token);
      throw badRequest('pageToken has expired (tokens are valid for 24 hours)');
    }
    if (entry.queryKey !== queryKey) throw badRequest('pageToken does not match the query it is used with');
    return entry.offset;
  }

  private prune(now: number): void {
    // Entries are inserted in clock order, so expired ones sit at the front.
    for (const [k, e] of this.metricTokens) {
      if (e.expiresAt > now && this.metricTokens.size < MAX_METRIC_TOKENS) break;
      this.metricTokens.delete(k);
    }
  }
}
