// The rate-limit facts of an answer, read from its headers: what the service says its budget is
// (`ratelimit-policy`, `ratelimit-limit`), what is left of its window (`ratelimit-remaining`) and
// how long to wait (`retry-after`, `ratelimit-reset`). docs/services.md, Rate limits.
import { DAY_MS, MINUTE_MS, SECOND_MS as SECOND } from './clock.js';

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
