// One HTTP client per service: a p-queue caps concurrency and request rate, p-retry retries 429,
// 5xx, timeouts, resets and broken bodies with exponential backoff and jitter. A retry-after
// pauses every request to that service, so a limited service gets no burst when it reopens.
// The API key travels only in its header; it is never part of a URL, a message or a log line.
import PQueue from 'p-queue';
import pRetry, { AbortError } from 'p-retry';
import { ServiceError } from '../errors.js';
import type { SourceConfig } from '../config/pipeline.js';

/** Counters one stream keeps of its requests (the run report prints them). */
export interface RequestStats {
  requests: number;
  retries: number;
  status429: number;
  faults: Record<string, number>;
}

export function newRequestStats(): RequestStats {
  return { requests: 0, retries: 0, status429: 0, faults: {} };
}

export interface GetOptions {
  /** Names the endpoint in messages (the route template, e.g. /v1/chains/{chainId}/...). */
  endpoint: string;
  stats: RequestStats;
  signal?: AbortSignal;
  /** Receives the body text of the answer that succeeded (raw pages are kept as sent). */
  onText?: (text: string) => void;
}

const NO_RETRY = new Set([400, 401, 403, 404]);

class Retryable extends Error {
  constructor(
    message: string,
    readonly kind: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** retry-after is seconds or an HTTP date. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const s = Number(header);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const t = Date.parse(header);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

function serviceMessage(body: string): string {
  try {
    const j = JSON.parse(body) as { message?: unknown };
    if (Array.isArray(j.message)) return j.message.join('; ');
    if (typeof j.message === 'string') return j.message;
  } catch {
    // not the standard error body
  }
  return body.slice(0, 200);
}

export interface ClientOptions {
  /** Backoff before the first retry; doubles each time, randomised. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export class Client {
  private readonly queue: PQueue;
  private pausedUntil = 0;

  constructor(
    readonly service: 'data' | 'metrics' | 'node',
    private readonly src: SourceConfig,
    private readonly opts: ClientOptions = {},
  ) {
    this.queue = new PQueue({
      concurrency: src.concurrency,
      ...(src.requestsPerSecond > 0 ? { intervalCap: src.requestsPerSecond, interval: 1000 } : {}),
    });
  }

  get baseUrl(): string {
    return this.src.url;
  }

  /** A service may echo the key it was sent (`Invalid API key: ...`): it never goes further. */
  private redact(s: string): string {
    const key = this.src.apiKey;
    return key ? s.split(key).join('[redacted]') : s;
  }

  /** GETs a path with a query and returns the parsed JSON body. */
  async get(path: string, query: Record<string, string>, o: GetOptions): Promise<unknown> {
    const qs = new URLSearchParams(query).toString();
    const shown = `GET ${path}${qs ? `?${qs}` : ''}`;
    const url = `${this.src.url}${path}${qs ? `?${qs}` : ''}`;
    let last = '';
    let attempts = 0;
    try {
      return await pRetry(
        () =>
          this.queue.add(async () => {
            attempts++;
            await this.waitPause(o.signal);
            return this.attempt(url, shown, o);
          }) as Promise<unknown>,
        {
          retries: this.src.retries,
          factor: 2,
          minTimeout: this.opts.minBackoffMs ?? 500,
          maxTimeout: this.opts.maxBackoffMs ?? 30_000,
          randomize: true,
          signal: o.signal,
          onFailedAttempt: ({ error, retriesLeft }) => {
            last = this.redact(error.message);
            const e = error as unknown as Retryable;
            if (e.kind === '429') o.stats.status429++;
            o.stats.faults[e.kind ?? 'error'] = (o.stats.faults[e.kind ?? 'error'] ?? 0) + 1;
            if (retriesLeft > 0) o.stats.retries++;
            if (e.retryAfterMs !== undefined) this.pausedUntil = Math.max(this.pausedUntil, Date.now() + e.retryAfterMs);
          },
        },
      );
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      if (o.signal?.aborted) throw err;
      throw new ServiceError(
        `${shown} (${o.endpoint} on the ${this.service} service) failed after ${attempts} tries; last error: ${last || this.redact((err as Error).message)}`,
        undefined,
        o.endpoint,
        true,
      );
    }
  }

  private async waitPause(signal?: AbortSignal): Promise<void> {
    const wait = this.pausedUntil - Date.now();
    if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait, signal));
  }

  private async attempt(url: string, shown: string, o: GetOptions): Promise<unknown> {
    o.stats.requests++;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.src.apiKey && this.service === 'data') headers[this.src.keyHeader] = this.src.apiKey;
    let res: Response;
    let text: string;
    const timeout = AbortSignal.timeout(this.src.timeoutMs);
    const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
    try {
      res = await fetch(url, { headers, signal });
      text = await res.text();
    } catch (err) {
      if (o.signal?.aborted) throw new AbortError(o.signal.reason ?? 'aborted');
      const e = err as Error & { cause?: { code?: string } };
      if (timeout.aborted) throw new Retryable(`${shown}: no answer within ${this.src.timeoutMs} ms`, 'timeout');
      throw new Retryable(`${shown}: ${e.cause?.code ?? e.message}`, 'network');
    }
    if (res.status === 429) {
      throw new Retryable(`${shown}: 429 Too Many Requests`, '429', retryAfterMs(res.headers.get('retry-after')));
    }
    if (res.status >= 500) throw new Retryable(`${shown}: ${res.status} ${this.redact(serviceMessage(text))}`, String(res.status));
    if (res.status >= 400) {
      const kind = NO_RETRY.has(res.status) ? '' : ' (not retried)';
      throw new AbortError(
        new ServiceError(`${shown} (${o.endpoint}): the ${this.service} service answered ${res.status}${kind}: ${this.redact(serviceMessage(text))}`, res.status, o.endpoint, false),
      );
    }
    try {
      const body: unknown = JSON.parse(text);
      o.onText?.(text);
      return body;
    } catch {
      throw new Retryable(`${shown}: the body is not valid JSON (${text.length} bytes, possibly truncated)`, 'bad_json');
    }
  }
}
