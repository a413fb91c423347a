// A loopback proxy in front of the data service that records, for every request, when it went on
// to the service and when its answer's head came back, its status and the `ratelimit-remaining`
// it carried: what the cluster tests count a service's windows by.
import { request as httpRequest } from 'node:http';
import { scriptedServer } from '../helpers.js';

export interface Sent {
  url: string;
  /** When the request went on to the service, and when its answer's head came back. */
  at: number;
  answeredAt: number;
  status: number;
  remaining?: number;
}

/** `delayMs` holds each request that long before it goes on, as a service far away answers later. */
export async function countingProxy(target: string, delayMs = 0) {
  const sent: Sent[] = [];
  const to = new URL(target);
  const server = await scriptedServer((req, res) => {
    setTimeout(() => {
      const at = Date.now();
      const out = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        const remaining = answer.headers['ratelimit-remaining'];
        sent.push({ url: req.url ?? '', at, answeredAt: Date.now(), status: answer.statusCode ?? 0, ...(typeof remaining === 'string' ? { remaining: Number(remaining) } : {}) });
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => res.destroy());
      req.pipe(out);
    }, delayMs);
  });
  return { ...server, sent };
}
