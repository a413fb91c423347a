// One node:http server answering for both services on one loopback port. Order of a request:
// route -> API key -> injected fault -> rate limit -> handler -> (slow/truncated/malformed) send.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { HttpError, Reply, errorBody, type Service } from './errors.js';
import { FAULT_KINDS, FaultInjector, type FaultKind, type FaultOptions } from './faults.js';
import { RateLimiter, type Budget } from './ratelimit.js';
import { SimOperations } from './operations.js';
import { API_KEY_HEADERS } from '../requests.js';
import { matchRoute, serviceOfPath } from './routes.js';
import type { AvgTpsNextKey } from './route.js';
import { PageTokens } from './tokens.js';
import { buildWorld, type World } from './world.js';
import type { NodeOptions } from './node_world.js';
import { stringifyExact } from '../json.js';
import { UsageLog } from './usage.js';

export interface SimulatorOptions {
  /** 0 (default) picks a free port */
  port?: number;
  /** default 127.0.0.1 */
  host?: string;
  seed?: number;
  scale?: number;
  /** off unless given; a service without a budget here is not limited */
  rateLimit?: {
    data?: Budget;
    metrics?: Budget;
    blockAfterLimitedRequests?: number;
    blockSeconds?: number;
  };
  /** off unless given */
  faults?: FaultOptions;
  /** when set, a data-service request carrying any other key gets 401; requests without a key pass */
  apiKeys?: string[];
  /**
   * The one header name the data service reads the key from, as production does; a key under any
   * other name is not seen (unauthenticated limits, no ratelimit-* headers). Default: every name
   * in API_KEY_HEADERS.
   */
  keyHeader?: string;
  /** server clock in ms (rate-limit windows, page-token expiry); default Date.now */
  now?: () => number;
  /**
   * The world's clock, Unix seconds: every listing is served as of this time (see World). Default:
   * the world stands still at WORLD_NOW. Independent of `now`.
   */
  worldNow?: () => number;
  /** data-service page tokens get a 400 this long (server clock) after issue; default never */
  dataTokenTtlMs?: number;
  /** How avg_tps names its next page: nextPageToken (the reference, default) or nextPageStartKey (the legacy response schema). */
  avgTpsNextKey?: AvgTpsNextKey;
  /** the node: as AvalancheGo answers (default) or as the reference documents it; the admin API off unless set */
  node?: NodeOptions;
  /**
   * Sees every JSON answer of a route before it is sent (faults are applied after): a test checks
   * what the simulator serves against the official client's response schemas.
   */
  onAnswer?: (answer: { route: string; service: Service; status: number; body: unknown }) => void;
}

export interface SimulatorStats {
  requests: number;
  byRoute: Record<string, number>;
  byStatus: Record<string, number>;
  faults: Record<FaultKind, number>;
  /** 429s from the rate limiter (blocked ones included) */
  rateLimited: number;
  /** 429s answered because the client was blocked */
  blocked: number;
  unauthorized: number;
}

export interface Simulator {
  url: string;
  port: number;
  world: World;
  stats: SimulatorStats;
  /** Export operations, and the requests their file server got. */
  operations: SimOperations;
  /** What the data service served each key: its usage series and logs answer from it. */
  usage: UsageLog;
  close(): Promise<void>;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const now = opts.now ?? Date.now;
  const keyHeaders: readonly string[] = opts.keyHeader ? [opts.keyHeader.toLowerCase()] : API_KEY_HEADERS;
  const world = buildWorld({
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}), ...(opts.scale !== undefined ? { scale: opts.scale } : {}),
    ...(opts.worldNow !== undefined ? { now: opts.worldNow } : {}),
    ...(opts.node !== undefined ? { node: opts.node } : {}),
  });
  const tokens = new PageTokens(`chainlake-sim:${world.seed}:${world.scale}`, now, opts.dataTokenTtlMs);
  const faults = opts.faults ? new FaultInjector(opts.faults) : undefined;
  const rl = opts.rateLimit;
  const blocking = { blockAfterLimitedRequests: rl?.blockAfterLimitedRequests, blockSeconds: rl?.blockSeconds };
  const limiters: Record<Service, RateLimiter | undefined> = {
    data: rl?.data ? new RateLimiter({ ...rl.data, ...defined(blocking) }, now) : undefined,
    metrics: rl?.metrics ? new RateLimiter({ ...rl.metrics, ...defined(blocking) }, now) : undefined,
    // A node publishes no compute-unit budget.
    node: undefined,
  };
  const stats: SimulatorStats = {
    requests: 0, byRoute: {}, byStatus: {},
    faults: faults?.counts ?? (Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>),
    rateLimited: 0, blocked: 0, unauthorized: 0,
  };
  const timers = new Set<NodeJS.Timeout>();
  const operations = new SimOperations(world, now);
  const usage = new UsageLog(world.seed, now, opts.apiKeys);

  /** JSON with every number as the world holds it: an ExactNumber (a node's uint64, a price) is written as its text. */
  function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    sendText(res, status, stringifyExact(body)!, headers);
  }

  /** Encoded once: the bytes sent are the bytes counted. */
  function sendText(res: http.ServerResponse, status: number, text: string, headers: Record<string, string>, type = JSON_TYPE): void {
    const bytes = Buffer.from(text);
    stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
    res.writeHead(status, { ...headers, 'content-type': type, 'content-length': String(bytes.length) });
    res.end(bytes);
  }

  function sendFaulty(res: http.ServerResponse, kind: FaultKind | undefined, status: number, body: unknown, headers: Record<string, string>): void {
    if (kind === 'slow') {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed && !res.writableEnded) send(res, status, body, headers);
      }, faults!.slowMs);
      timers.add(timer);
      return;
    }
    if (kind === 'truncated') {
      const bytes = Buffer.from(stringifyExact(body)!);
      stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
      res.writeHead(status, { ...headers, 'content-type': JSON_TYPE, 'content-length': String(bytes.length) });
      res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.destroy());
      return;
    }
    if (kind === 'malformed') {
      sendText(res, status, stringifyExact(body)!.replace('"', "'"), headers);
      return;
    }
    send(res, status, body, headers);
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse, bodyText: string): void {
    const arrived = now();
    stats.requests++;
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    let segments: string[];
    try {
      segments = url.pathname.split('/').slice(1).map(decodeURIComponent);
    } catch {
      segments = [];
    }
    if (segments.length > 0 && segments[segments.length - 1] === '') segments.pop();
    const matched = matchRoute(segments, req.method);
    if (!matched) {
      const service = serviceOfPath(segments);
      send(res, 404, errorBody(service, 404, `Cannot ${req.method} ${url.pathname}`));
      return;
    }
    const { route, params } = matched;
    const service = route.service;
    stats.byRoute[route.name] = (stats.byRoute[route.name] ?? 0) + 1;

    let apiKey: string | undefined;
    if (service === 'data') {
      for (const h of keyHeaders) {
        const v = req.headers[h];
        const s = Array.isArray(v) ? v[0] : v;
        if (s) {
          apiKey = s;
          break;
        }
      }
      if (apiKey !== undefined && opts.apiKeys && !opts.apiKeys.includes(apiKey)) {
        stats.unauthorized++;
        send(res, 401, errorBody(service, 401, 'Invalid API key'));
        return;
      }
    }
    const caller = apiKey !== undefined ? usage.caller(apiKey) : undefined;
    /** A keyed data-service request the service answered goes into the key's usage (usage.ts). */
    const served = (status: number, cu: number) => {
      if (apiKey === undefined) return;
      const chainId = segments[1] === 'chains' && segments.length > 2 ? segments[2] : undefined;
      usage.served(apiKey, {
        at: arrived, path: url.pathname, ...(chainId !== undefined ? { chainId } : {}), status, cu, durationMs: now() - arrived,
        ipAddress: req.socket.remoteAddress ?? '', host: req.headers.host ?? '', userAgent: req.headers['user-agent'] ?? '',
      });
    };

    const fault = faults?.next();
    switch (fault) {
      case 'reset':
        req.socket.destroy();
        return;
      case '429':
        send(res, 429, errorBody(service, 429, 'Too many requests, please try again later.'), { 'retry-after': '1', 'ratelimit-reset': '1' });
        return;
      case '429-no-retry-after':
        send(res, 429, errorBody(service, 429, 'Too many requests, please try again later.'));
        return;
      case '500':
      case '502':
      case '503':
        send(res, Number(fault), errorBody(service, Number(fault), 'Injected fault'));
        return;
    }

    const headers: Record<string, string> = {};
    const limiter = limiters[service];
    if (limiter) {
      const decision = limiter.take(apiKey !== undefined ? `key:${apiKey}` : 'unauthenticated', route.weight);
      // Production sends the budget headers on keyed requests only; a 429 always says when to retry.
      if (apiKey !== undefined) {
        headers['ratelimit-policy'] = limiter.policy();
        headers['ratelimit-limit'] = String(decision.limit);
        headers['ratelimit-remaining'] = String(decision.remaining);
      }
      if (!decision.allowed) {
        stats.rateLimited++;
        if (decision.blocked) stats.blocked++;
        headers['ratelimit-reset'] = String(decision.resetSeconds);
        headers['retry-after'] = String(decision.resetSeconds);
        const why = decision.blocked ? 'Client blocked after repeated requests while rate limited' : 'Rate limit exceeded';
        served(429, 0);
        send(res, 429, errorBody(service, 429, why), headers);
        return;
      }
    }

    let status = route.status ?? 200;
    let body: unknown;
    let textType: string | undefined;
    try {
      let posted: unknown;
      if (route.method === 'POST' && !route.ownBody) {
        try {
          posted = JSON.parse(bodyText);
        } catch {
          throw new HttpError(400, 'the body is not valid JSON');
        }
      }
      body = route.handle({
        world, tokens, params, query: url.searchParams, body: posted, text: bodyText, contentType: req.headers['content-type'], operations, usage,
        ...(caller ? { caller } : {}), avgTpsNextKey: opts.avgTpsNextKey,
      });
      if (body instanceof Reply) {
        status = body.status;
        textType = body.type;
        body = body.body;
      }
    } catch (err) {
      if (err instanceof HttpError) {
        status = err.status;
        body = errorBody(service, err.status, err.messages);
      } else {
        status = 500;
        body = errorBody(service, 500, 'Internal server error');
      }
    }
    // After the answer is made: a usage request does not report itself, the next one does.
    if (service === 'data') served(status, route.weight);
    if (textType) sendText(res, status, String(body), headers, textType);
    else {
      opts.onAnswer?.({ route: route.name, service, status, body });
      sendFaulty(res, fault, status, body, headers);
    }
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch {
        if (!res.headersSent) send(res, 500, errorBody('data', 500, 'Internal server error'));
        else res.destroy();
      }
    });
  });
  // An idle connection stays open as long as behind a production load balancer (a minute), not
  // Node's 5 s: a client that reuses a socket the server is closing at that moment sees a reset,
  // which a busy machine's late timers make likely with a 5 s bound.
  server.keepAliveTimeout = 65_000;
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  await operations.listen(opts.host ?? '127.0.0.1');
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    world,
    stats,
    operations,
    usage,
    close: async () => {
      await new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      await operations.close();
    },
  };
}

function defined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}
