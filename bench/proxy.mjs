// The loopback latency proxy of the rate-bound benchmarks (rate.mjs, chunks.mjs): it delays each
// request (the services answer in a few hundred ms; the simulator in under one), forwards it to
// one simulator, and counts what the simulator made of it by the time the request reached it:
// the CU accepted, the pages (200 answers) and the 429s of each rate window, and the least
// `ratelimit-remaining` a window's answers carried (keyed requests: the simulator's own count).
import http from 'node:http';
import { matchRoute } from '../dist/simulator/routes.js';

export const MINUTE = 60_000;

const bump = (map, key, by = 1) => map.set(key, (map.get(key) ?? 0) + by);

/**
 * `now` and `windowMs` must be the simulator's clock and window, so that a request is counted in
 * the window the simulator charged it to. Requests that reach the simulator at or after `until`
 * (Date.now() time) are forwarded but not counted: what arrives after a benchmark's end is not
 * part of its figures.
 */
export async function latencyProxy(target, latencyMs, { now = Date.now, windowMs = MINUTE, until = Infinity } = {}) {
  const counts = {
    requests: 0,
    limited: 0,
    requestsByWindow: new Map(),
    acceptedByWindow: new Map(),
    pagesByWindow: new Map(),
    limitedByWindow: new Map(),
    leastRemainingByWindow: new Map(),
    cuByFlow: new Map(),
  };
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    setTimeout(() => {
      const counted = Date.now() < until;
      const w = Math.floor(now() / windowMs);
      const url = new URL(req.url, target);
      const up = http.request(url, { method: req.method, headers: req.headers, agent }, (answer) => {
        if (counted) {
          counts.requests++;
          bump(counts.requestsByWindow, w);
          if (answer.statusCode === 429) {
            counts.limited++;
            bump(counts.limitedByWindow, w);
          }
          if (answer.statusCode === 200) {
            const segments = url.pathname.split('/').slice(1).map(decodeURIComponent);
            const weight = matchRoute(segments)?.route.weight ?? 0;
            bump(counts.acceptedByWindow, w, weight);
            bump(counts.pagesByWindow, w);
            const remaining = Number(answer.headers['ratelimit-remaining'] ?? NaN);
            if (remaining >= 0) counts.leastRemainingByWindow.set(w, Math.min(counts.leastRemainingByWindow.get(w) ?? Infinity, remaining));
            url.searchParams.delete('pageToken');
            bump(counts.cuByFlow, `${url.pathname}?${url.searchParams}`, weight);
          }
        }
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    }, latencyMs);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    counts,
    close: () => new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
      agent.destroy();
    }),
  };
}

/** The sum of a per-window count over the windows [first, first + n). */
export function sumWindows(map, first, n) {
  let total = 0;
  for (let w = first; w < first + n; w++) total += map.get(w) ?? 0;
  return total;
}
