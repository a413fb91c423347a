// One HTTP client per service, shared by every stream and partition of a run. A request first
// waits for its fair turn within the service's compute-unit budget (scheduler.ts, budget.ts),
// then for a connection slot (a p-queue caps concurrency and request rate); p-retry retries 429,
// 5xx, timeouts, resets and broken bodies with exponential backoff and jitter. A retry-after
// pauses every request to that service, so a limited service gets no burst when it reopens.
// With a shared budget (shared.ts), a request also takes its weight from the budget of every
// process on its key, after its local grant, and what an answer teaches is shared with them; the
// pause is the same one for both. Every wait for the budget is on the clock the client is given.
// The API key travels only in its header; it is never part of a URL, a message or a log line.
import PQueue from 'p-queue';
import pRetry, { AbortError } from 'p-retry';
import { ServiceError } from '../errors.js';
import { bounded } from '../text.js';
import { API_KEY_HEADERS } from '../requests.js';
import { bytesParsable } from '../bytes.js';
import { parserFor } from '../json.js';
import type { AssetNamespace, ClientPort, GetOptions, PostOptions } from '../decl/request.js';
import type { Service } from '../decl/stream.js';
import { RateBudget, type BudgetSource } from './budget.js';
import { realClock, type Clock } from './clock.js';
import { FairScheduler, ServiceClosed, type Grant, type WaitCause } from './scheduler.js';
import { Deadline } from './deadline.js';
import { abortable, type SharedBudgetPort } from './shared.js';
import { open, readBody, TooLarge, Truncated, type Exchange } from './http.js';
import { Reachability } from './reach.js';

/** How to reach one service (a pipeline's `sources` entry, checked by config/pipeline.ts). */
export interface SourceConfig {
  url: string;
  apiKey?: string;
  /** The variables the pipeline's apiKey reads (`${VAR}`) that were not set: the source goes without a key, and a run says so. */
  apiKeyUnset?: string[];
  /** The one header to send the key in; left out, it goes under every name the service is known to read (API_KEY_HEADERS). */
  keyHeader?: string;
  /** Requests in flight at once; left out, as many as the budget needs at the latency seen (inflightTarget). */
  concurrency?: number;
  /** Cap on requests started per second (0: none). */
  requestsPerSecond: number;
  /** Per-request timeout. */
  timeoutMs: number;
  /** Retries of one request after 429, 5xx and network errors. */
  retries: number;
  /** Compute-unit budget (from `tier`, or set); left out, it is learnt from the service's answers. */
  cuPerMinute?: number;
  cuPerDay?: number;
  /** The node's asset chain namespace; left out, the first call of a run finds it. */
  assetNamespace?: AssetNamespace;
  /** Bound on one answer's body, on the wire and decoded (DEFAULT_MAX_RESPONSE_BYTES). */
  maxResponseBytes?: number;
  /** A 429 asking to wait longer than this ends the partition instead (DEFAULT_MAX_RETRY_AFTER_S). */
  maxRetryAfterSeconds?: number;
  /** Bound on one export file downloaded (data source; operations/exports.ts). */
  maxDownloadBytes?: number;
  /** Export links to loopback, private and link-local addresses are followed (data source; off by default). */
  privateLinks?: boolean;
  /** Where `url` was given when not in the pipeline (`--data-url`), for messages that ask to correct it. */
  urlFrom?: string;
}

const NO_RETRY = new Set([400, 401, 403, 404]);

/**
 * Connection errors that say the address is wrong rather than busy: nothing listens at the port,
 * or the host name does not exist. At an address that has not answered in the run, retrying them
 * only delays the answer (by the whole backoff, 45 s with the defaults); once it has answered, a
 * refusal is a service restarting and is retried as a reset is.
 */
const WRONG_ADDRESS: Record<string, string> = {
  ECONNREFUSED: 'refused the connection (ECONNREFUSED: nothing listens there); start the service there or correct the URL, then rerun',
  ENOTFOUND: 'does not resolve (ENOTFOUND: no such host name); correct the URL, then rerun',
};

class Retryable extends Error {
  constructor(
    message: string,
    readonly kind: string,
  ) {
    super(message);
  }
}

/** A partition's listing: its request without the page token. */
function flowOf(path: string, query: Record<string, string>): string {
  const q = new URLSearchParams(query);
  q.delete('pageToken');
  return `${path}?${q}`;
}

/**
 * The service's own words from an error body, bounded (a person reads them); `redact` first, so
 * that the cut cannot leave the head of a secret the service echoed.
 */
function serviceMessage(body: string, redact: (s: string) => string): string {
  let m = body;
  try {
    const j = JSON.parse(body) as { message?: unknown };
    if (Array.isArray(j.message)) m = j.message.map(String).join('; ');
    else if (typeof j.message === 'string') m = j.message;
  } catch {
    // not the standard error body
  }
  return bounded(redact(m));
}

/**
 * Where a JSON text nests deeper than `limit` (the byte offset), or -1. Parsing such a text works,
 * but every recursive step after it (the exact parser, writing a reject, a structured clone)
 * overflows the stack, far from the endpoint that sent it.
 */
export function depthOver(b: Uint8Array, limit: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return -1;
}

/** The services' answers nest a handful of levels; far more is an attack or a fault. */
export const MAX_DEPTH = 64;
/** Far above the largest legitimate answer (a node's biggest block, a page of 100 items), docs/services.md. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** A 429 asking to wait longer (seconds) ends the partition: a run that waits an hour without a word looks hung. */
export const DEFAULT_MAX_RETRY_AFTER_S = 300;
/** Same-origin redirects followed in a row for a GET. */
const MAX_REDIRECTS = 3;

function bodyIs(text: string, test: (body: unknown) => boolean): boolean {
  try {
    return test(JSON.parse(text));
  } catch {
    return false;
  }
}

export interface ClientOptions {
  /** Backoff before the first retry; doubles each time, randomised. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** The budget shared with other processes on the same key (--budget-db); left out, this process's alone. */
  shared?: SharedBudgetPort;
  /** Told once per wait longer than LONG_WAIT_MS (a log line): its cause and when requests resume. */
  onWait?: (wait: { service: Service; cause: WaitCause; until: string; seconds: number }) => void;
  /** What the budget reads and waits on (the machine's clock by default; a fake one in tests). */
  clock?: Clock;
  /** Shared with the run's other clients (sources/reach.ts); left out, this client's alone. */
  reach?: Reachability;
}

/** The budget in force for a service, for reports and logs. */
export interface BudgetState {
  source: BudgetSource;
  /** null while unknown (no budget configured, announced or learnt yet). */
  cuPerMinute: number | null;
  cuPerDay: number | null;
}

/** Why retrying stopped: the address was found down meanwhile (sources/reach.ts). */
class AddressDown extends Error {
  constructor() {
    super('the address was found down');
  }
}

/** Requests under way at once when the pipeline sets no `concurrency`: at least, and at most. */
export const AUTO_INFLIGHT = { min: 4, max: 64 } as const;
/** Headroom over budget rate x latency: latency varies from request to request. */
const INFLIGHT_MARGIN = 1.25;
/**
 * The least lead a shared take allows for a request to reach the service: on loopback the mean
 * latency is a few ms, less than a busy machine's delay between the take and the send, and a
 * request taken in its window's last ms then reaches the next one (a 429 where that window is
 * full).
 */
const MIN_LEAD_MS = 50;
/** Weight of the newest sample in the running means of latency and request weight. */
const EWMA = 0.2;
/** A shared take that waited longer than this was held back by the key's full window, not by the database's round trip. */
const SHARED_WAIT_MS = 50;

/**
 * Requests to keep under way so that the budget is spent at the latency seen: rate (requests per
 * second the budget allows) x latency, with a margin, within AUTO_INFLIGHT. At least the minimum
 * while the budget or the latency is not known yet.
 */
export function inflightTarget(cuPerMinute: number, weight: number, latencyMs: number | undefined): number {
  if (!Number.isFinite(cuPerMinute) || latencyMs === undefined || !(weight > 0)) return AUTO_INFLIGHT.min;
  const perSecond = cuPerMinute / 60 / weight;
  const n = Math.ceil(perSecond * (latencyMs / 1000) * INFLIGHT_MARGIN) + 1;
  return Math.min(AUTO_INFLIGHT.max, Math.max(AUTO_INFLIGHT.min, n));
}

export class Client implements ClientPort {
  private readonly queue: PQueue;
  private readonly scheduler: FairScheduler;
  /** Running means of a successful request's latency (sent to body read) and of the weight granted. */
  private latencyMs?: number;
  private weight?: number;
  /** Requests asked for and not finished (waiting for the budget, a slot, or an answer). */
  private active = 0;
  /** Until then, the shared budget held this process back (takeShared): no room for more listings. */
  private sharedFullUntil = 0;
  /** Chunks paging a listing (openListing). */
  private listings = 0;
  /** The budget last written to the shared budget, so each change is written once. */
  private sharedLimit?: string;
  /**
   * With a shared budget, the first request goes alone: until its answer nothing is known of the
   * budget, and the others' requests would go uncounted in the windows every process shares.
   */
  private firstAnswer?: Promise<void>;
  private answered?: () => void;
  private readonly clock: Clock;
  /**
   * When the service's address last answered anything (any status), on this.clock, and whether it
   * is down: a request used up all its tries without the address answering anything, to it or to
   * any other request, meanwhile. Every other request of the run would spend its own tries
   * (minutes a partition) to learn the same: they fail at once.
   */
  private readonly reach: Reachability;
  private readonly origin: string;
  /** The retries under way, by the signal they follow (follow). */
  private readonly followers = new Map<AbortSignal, { stops: Set<AbortController>; onAbort: () => void }>();

  constructor(
    readonly service: Service,
    private readonly src: SourceConfig,
    private readonly opts: ClientOptions = {},
  ) {
    this.queue = new PQueue({
      concurrency: src.concurrency ?? AUTO_INFLIGHT.min,
      ...(src.requestsPerSecond > 0 ? { intervalCap: src.requestsPerSecond, interval: 1000 } : {}),
    });
    const maxPauseMs = (src.maxRetryAfterSeconds ?? DEFAULT_MAX_RETRY_AFTER_S) * 1000;
    const clock = (this.clock = opts.clock ?? realClock);
    this.reach = opts.reach ?? new Reachability();
    this.origin = new URL(src.url).origin;
    const shared = opts.shared;
    this.scheduler = new FairScheduler(
      new RateBudget({ cuPerMinute: src.cuPerMinute, cuPerDay: src.cuPerDay, shared: shared !== undefined, maxPauseMs, ...(shared?.paused ? { pause: shared.paused } : {}) }),
      clock,
      opts.onWait && ((cause, until) => opts.onWait!({ service, cause, until: new Date(until).toISOString(), seconds: Math.round((until - clock.now()) / 1000) })),
    );
  }

  budgetState(): BudgetState {
    const b = this.scheduler.budget;
    return { source: b.source, cuPerMinute: b.limit === Infinity ? null : Math.round(b.cuPerMinute), cuPerDay: b.dayLimit === Infinity ? null : b.dayLimit };
  }

  /** Requests to keep under way: the pipeline's `concurrency`, else what the budget needs at the latency seen. */
  inflightTarget(): number {
    return this.src.concurrency ?? inflightTarget(this.scheduler.budget.cuPerMinute, this.weight ?? 1, this.latencyMs);
  }

  /**
   * How many more requests could be under way: a listing may be split (chunks) while this is above
   * 0. Chunks count while they page, not only while they wait for an answer: where the service is
   * not the limit (answers come at once, the transform is), each would otherwise split again.
   */
  room(): number {
    if (this.clock.now() < this.sharedFullUntil) return 0;
    return this.inflightTarget() - Math.max(this.active, this.listings);
  }

  /** Counts a chunk's listing toward the requests under way (room) until the returned function is called. */
  openListing(): () => void {
    this.listings++;
    let open = true;
    return () => {
      if (open) this.listings--;
      open = false;
    };
  }

  private observe(latencyMs: number, weight: number): void {
    this.latencyMs = this.latencyMs === undefined ? latencyMs : this.latencyMs + EWMA * (latencyMs - this.latencyMs);
    this.weight = this.weight === undefined ? weight : this.weight + EWMA * (weight - this.weight);
    if (this.src.concurrency === undefined) this.queue.concurrency = this.inflightTarget();
  }

  get baseUrl(): string {
    return this.src.url;
  }

  /** The source's settings (export links read their bounds from the data source's). */
  get source(): Readonly<SourceConfig> {
    return this.src;
  }

  get assetNamespace(): AssetNamespace | undefined {
    return this.src.assetNamespace;
  }

  /** A service may echo the key it was sent (`Invalid API key: ...`): it never goes further. */
  private redact(s: string): string {
    const key = this.src.apiKey;
    return key ? s.split(key).join('[redacted]') : s;
  }

  /** GETs a path with a query and returns the parsed JSON body. */
  get(path: string, query: Record<string, string>, o: GetOptions): Promise<unknown> {
    return this.request('GET', path, query, undefined, o);
  }

  /** POSTs a JSON body; a POST that may change something is tried once. */
  post(path: string, body: unknown, o: PostOptions): Promise<unknown> {
    return this.request('POST', path, {}, JSON.stringify(body), o.idempotent ? o : { ...o, retries: 0 });
  }

  private async request(method: 'GET' | 'POST', path: string, query: Record<string, string>, body: string | undefined, o: GetOptions & { retries?: number }): Promise<unknown> {
    const qs = new URLSearchParams(query).toString();
    // The query holds the page token, which the service chose: it may be megabytes.
    const shown = bounded(`${method} ${path}${qs ? `?${qs}` : ''}`);
    const url = `${this.src.url}${path}${qs ? `?${qs}` : ''}`;
    const weight = o.weight ?? 1;
    const flow = o.flow ?? flowOf(path, query);
    let last = '';
    let attempts = 0;
    const started = this.clock.now();
    // Retrying stops on the run's signal, and when the address is found down (by this request's
    // neighbours): a try asleep in its backoff wakes then instead of when the backoff ends.
    const stop = new AbortController();
    const unfollow = this.follow(o.signal, stop);
    const leave = this.reach.onDown(this.origin, () => stop.abort(new AddressDown()));
    const once = async (): Promise<unknown> => {
      const down = this.reach.notSent(this.origin);
      // The words of the request that found it, for every request after: a report says them once per table.
      if (down) throw new AbortError(new ServiceError(`${this.at()} ${down}`, undefined, o.endpoint, true));
      this.active++;
      try {
        const grant = await this.scheduler.acquire(weight, flow, o.signal);
        try {
          return await this.queue.add(async () => {
            attempts++;
            // A 429 may have come while this request waited for a slot.
            await this.scheduler.waitPause(o.signal);
            // Taken in the slot, so that it is sent at once: the shared window is the one it reaches.
            const alone = await this.takeShared(weight, o.signal);
            grant.sent();
            return this.attempt(method, url, body, shown, o, grant, alone);
          });
        } finally {
          grant.finish();
        }
      } finally {
        this.active--;
      }
    };
    try {
      return await pRetry(
        () =>
          once().catch((err: unknown) => {
            // An abort is not a failed attempt: no retry, no count.
            if (o.signal?.aborted && !(err instanceof AbortError)) throw new AbortError(err instanceof Error ? err : String(err));
            if (err instanceof ServiceClosed) throw new AbortError(this.closedError(err, shown, o.endpoint));
            throw err;
          }),
        {
          retries: o.retries ?? this.src.retries,
          factor: 2,
          minTimeout: this.opts.minBackoffMs ?? 500,
          maxTimeout: this.opts.maxBackoffMs ?? 30_000,
          randomize: true,
          signal: stop.signal,
          onFailedAttempt: ({ error, retriesLeft }) => {
            last = this.redact(error.message);
            const e = error as unknown as Retryable;
            if (e.kind === '429') o.stats.status429++;
            o.stats.faults[e.kind ?? 'error'] = (o.stats.faults[e.kind ?? 'error'] ?? 0) + 1;
            if (retriesLeft > 0) o.stats.retries++;
          },
        },
      );
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      if (o.signal?.aborted) throw err;
      if (err instanceof AddressDown) {
        throw new ServiceError(`${shown} (${o.endpoint} on the ${this.service} service) stopped after ${attempts} tries (last error: ${last}): ${this.at()} ${this.reach.notSent(this.origin)}`, undefined, o.endpoint, true);
      }
      const why = last || this.redact((err as Error).message);
      if (attempts > 1 && this.reach.lastAnswer(this.origin) < started) {
        this.reach.markDown(this.origin, `answered nothing for ${Math.round((this.clock.now() - started) / 1000)} s, ${attempts} tries of ${shown} (last error: ${why}); check that it is up and reachable, then rerun`);
      }
      throw new ServiceError(
        `${shown} (${o.endpoint} on the ${this.service} service) failed after ${attempts} tries; last error: ${why}`,
        undefined,
        o.endpoint,
        true,
      );
    } finally {
      unfollow();
      leave();
    }
  }

  /** The service, its address and the setting it came from, as a message names them. */
  private at(): string {
    return `the ${this.service} service at ${this.origin} (${this.src.urlFrom ?? `sources.${this.service}.url`})`;
  }

  /**
   * Aborts `stop` when `signal` aborts; returns what stops following. One listener on a signal for
   * all the requests that follow it, removed with the last of them: a listener each would pass the
   * ten at which Node warns (on stderr) of a leak.
   */
  private follow(signal: AbortSignal | undefined, stop: AbortController): () => void {
    if (!signal) return () => undefined;
    if (signal.aborted) {
      stop.abort(signal.reason);
      return () => undefined;
    }
    let f = this.followers.get(signal);
    if (!f) {
      const stops = new Set<AbortController>();
      f = { stops, onAbort: () => stops.forEach((c) => c.abort(signal.reason)) };
      this.followers.set(signal, f);
      signal.addEventListener('abort', f.onAbort, { once: true });
    }
    const mine = f;
    mine.stops.add(stop);
    return () => {
      mine.stops.delete(stop);
      if (mine.stops.size || this.followers.get(signal) !== mine) return;
      this.followers.delete(signal);
      signal.removeEventListener('abort', mine.onAbort);
    };
  }

  private closedError(c: ServiceClosed, shown: string, endpoint: string): ServiceError {
    const max = this.src.maxRetryAfterSeconds ?? DEFAULT_MAX_RETRY_AFTER_S;
    const s = Math.max(0, Math.round((c.until - this.clock.now()) / 1000));
    return new ServiceError(
      `${shown} (${endpoint}): the ${this.service} service answered 429 asking for no request until ${new Date(c.until).toISOString()} (${s} s from now), longer than sources.${this.service}.maxRetryAfterSeconds (${max} s): stopping; rerun after that time`,
      429,
      endpoint,
      false,
    );
  }

  /**
   * After the local grant: the request's weight from the budget shared with the other processes.
   * True for the request that goes alone while no budget is known, which no shared window counts.
   */
  private async takeShared(weight: number, signal: AbortSignal | undefined): Promise<boolean> {
    const b = this.scheduler.budget;
    if (!this.opts.shared) return false;
    if (b.limit === Infinity && !this.firstAnswer) {
      this.firstAnswer = new Promise((resolve) => (this.answered = resolve));
      return true;
    }
    if (b.limit === Infinity) await abortable(this.firstAnswer!, signal);
    // Still nothing known: the service announces nothing, and a 429 will teach it, as locally.
    if (b.limit === Infinity) return false;
    // A request reaches the service before its answer comes back: the latency seen (with the
    // margin for how it varies) bounds the lead.
    const o = { leadMs: Math.max(MIN_LEAD_MS, (this.latencyMs ?? 0) * INFLIGHT_MARGIN), ...(signal ? { signal } : {}) };
    const asked = this.clock.now();
    await this.sharedStep(() => this.opts.shared!.take(weight, { windowMs: b.windowMs, cuPerWindow: b.limit }, o));
    // Held back by the key's window: the other processes spend the rest of the budget, so this one
    // has no room for more listings (room()) until a window passes without waiting.
    const now = this.clock.now();
    if (now - asked > SHARED_WAIT_MS) this.sharedFullUntil = now + b.windowMs;
    return false;
  }

  /** What an answer taught the local budget, every process learns: a 429's pause, a budget announced or learnt. */
  private async shareAnswer(status: number, announced: boolean, uncounted: number): Promise<void> {
    const shared = this.opts.shared;
    if (!shared) return;
    const b = this.scheduler.budget;
    const now = this.clock.now();
    // Every process of the key pauses, and a longer pause another one wrote holds this one too.
    if (status === 429 && b.pausedUntil > now) b.pause.extend(await this.sharedStep(() => shared.pause(b.pausedUntil - now)));
    // What the service announced (its window above all: until their first answer the others
    // count in minutes) or taught; once one was written, so is every change after (back up to the
    // pipeline's budget too), so that a lowered budget does not outlive what taught it.
    const limit = `${b.limit}/${b.windowMs}`;
    if ((announced || b.source === 'learnt' || this.sharedLimit !== undefined) && limit !== this.sharedLimit && b.limit < Infinity) {
      this.sharedLimit = limit;
      await this.sharedStep(() => shared.learn({ windowMs: b.windowMs, cuPerWindow: b.limit }));
    }
    // The request that went alone took nothing from the shared window it reached (a 429 is not counted).
    if (uncounted > 0 && status !== 429 && b.limit < Infinity && shared.counted) {
      await this.sharedStep(() => shared.counted!({ windowMs: b.windowMs, cuPerWindow: b.limit }, uncounted));
    }
  }

  /** The shared budget's database failing is not the service failing: no retry, the partition stops. */
  private async sharedStep<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (err) {
      throw new AbortError(err instanceof Error ? err : String(err));
    }
  }

  /**
   * Sends one request and reads its answer within the bounds. A redirect is followed only to the
   * configured origin and only for a GET (at most MAX_REDIRECTS hops): the key goes to no other
   * host, and a POST is never sent twice.
   */
  private async exchange(method: string, url: string, headers: Record<string, string>, body: string | undefined, shown: string, o: GetOptions, signal: AbortSignal): Promise<Exchange> {
    const base = new URL(this.src.url);
    let at = new URL(url);
    for (let hop = 0; ; hop++) {
      const { res, answer } = await open(at, { method, headers, ...(body !== undefined ? { body } : {}), signal, decode: true });
      if (answer.status < 300 || answer.status >= 400) return { ...answer, body: await readBody(res, answer, { maxBytes: this.maxBytes, decode: true, signal }) };
      res.destroy();
      const location = answer.header('location');
      if (location === null)
        throw new AbortError(new ServiceError(`${shown} (${o.endpoint}): the ${this.service} service answered ${answer.status} without a location`, answer.status, o.endpoint, false));
      let target: URL;
      try {
        target = new URL(location, at);
      } catch {
        throw new AbortError(new ServiceError(`${shown} (${o.endpoint}): the ${this.service} service redirected (${answer.status}) to a location that is not a URL`, answer.status, o.endpoint, false));
      }
      const why =
        target.origin !== base.origin
          ? `to another host, ${bounded(target.origin)} (the service is ${base.origin}); chainlake sends no request, and never its key, to another host`
          : method !== 'GET'
            ? 'a POST; chainlake does not send a POST twice'
            : hop >= MAX_REDIRECTS
              ? `more than ${MAX_REDIRECTS} times in a row`
              : undefined;
      if (why !== undefined)
        throw new AbortError(
          new ServiceError(
            `${shown} (${o.endpoint}): the ${this.service} service redirected (${answer.status}) ${why}: if the service moved, set sources.${this.service}.url (or --${this.service}-url) to its new URL`,
            answer.status,
            o.endpoint,
            false,
          ),
        );
      at = target;
    }
  }

  private get maxBytes(): number {
    return this.src.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  private async attempt(method: string, url: string, body: string | undefined, shown: string, o: GetOptions, grant: Grant, alone = false): Promise<unknown> {
    o.stats.requests++;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.src.apiKey && this.service === 'data') for (const name of this.src.keyHeader ? [this.src.keyHeader] : API_KEY_HEADERS) headers[name] = this.src.apiKey;
    let res: Exchange;
    const deadline = new Deadline(this.src.timeoutMs, o.signal);
    const sent = this.clock.now();
    try {
      res = await this.exchange(method, url, headers, body, shown, o, deadline.signal);
      this.reach.answer(this.origin, this.clock.now());
      grant.answer(res.status, res.header);
      if (res.status < 300) this.observe(this.clock.now() - sent, o.weight ?? 1);
    } catch (err) {
      if (o.signal?.aborted) throw new AbortError(o.signal.reason ?? 'aborted');
      if (err instanceof AbortError) throw err;
      if (deadline.timedOut) throw new Retryable(`${shown}: no answer within ${this.src.timeoutMs} ms`, 'timeout');
      if (err instanceof TooLarge) {
        // The process's pool is shared: another answer's size, not this one's, may have passed it.
        if (err.what === 'pool') throw new Retryable(`${shown}: ${err.message}`, 'too_large');
        throw new AbortError(new ServiceError(`${shown} (${o.endpoint}): ${err.message} (sources.${this.service}.maxResponseBytes); not landed`, undefined, o.endpoint, false));
      }
      if (err instanceof Truncated) throw new Retryable(`${shown}: ${err.message}`, 'network');
      const e = err as NodeJS.ErrnoException;
      const wrong = e.code === undefined ? undefined : WRONG_ADDRESS[e.code];
      if (wrong !== undefined && this.reach.lastAnswer(this.origin) === -Infinity) {
        // Every request to the address, of every service there, fails with it from now on.
        this.reach.markDown(this.origin, wrong);
        throw new AbortError(new ServiceError(`${this.at()} ${wrong}`, undefined, o.endpoint, true));
      }
      throw new Retryable(`${shown}: ${e.code ?? e.message}`, 'network');
    } finally {
      deadline.done();
      this.answered?.();
    }
    await this.shareAnswer(res.status, res.header('ratelimit-limit') !== null || res.header('ratelimit-policy') !== null, alone ? (o.weight ?? 1) : 0);
    if (res.status === 429) {
      throw new Retryable(`${shown}: 429 Too Many Requests`, '429');
    }
    let raw = res.body;
    // As fetch's text() reads it: a byte order mark is not part of the JSON.
    if (raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) raw = raw.subarray(3);
    const asBytes = o.bytes === true && res.status < 300 && bytesParsable(raw);
    const text = raw.toString(asBytes ? 'latin1' : 'utf8');
    const accepted = (o.acceptStatus?.includes(res.status) ?? false) && (!o.acceptBody || bodyIs(text, o.acceptBody));
    if (res.status >= 500 && !accepted) throw new Retryable(`${shown}: ${res.status} ${serviceMessage(text, (m) => this.redact(m))}`, String(res.status));
    if (res.status >= 400 && !accepted) {
      const kind = NO_RETRY.has(res.status) ? '' : ' (not retried)';
      throw new AbortError(
        new ServiceError(`${shown} (${o.endpoint}): the ${this.service} service answered ${res.status}${kind}: ${serviceMessage(text, (m) => this.redact(m))}`, res.status, o.endpoint, false),
      );
    }
    const deep = depthOver(raw, MAX_DEPTH);
    if (deep >= 0)
      throw new AbortError(new ServiceError(`${shown} (${o.endpoint}): the answer nests deeper than ${MAX_DEPTH} levels (at byte ${deep}); not landed`, undefined, o.endpoint, false));
    try {
      const body: unknown = parserFor(o.exact)(text);
      o.onBody?.(raw, asBytes);
      o.onStatus?.(res.status);
      return body;
    } catch {
      throw new Retryable(`${shown}: the body is not valid JSON (${text.length} bytes, possibly truncated)`, 'bad_json');
    }
  }
}
