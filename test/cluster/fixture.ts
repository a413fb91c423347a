// What the tests of runs sharing a budget stand on: a real PostgreSQL, the simulator with its rate
// limit on for one key, and a loopback proxy per run in front of its data service that records,
// for every request, when it went on to the service and when its answer's head came back, its
// status and the `ratelimit-remaining` it carried: what the tests count a service's windows by.
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../../src/simulator/server.js';
import { scriptedServer } from '../helpers.js';
import { startPostgres } from '../pg-fixture.js';

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

/** A temporary folder, PostgreSQL, the simulator limited to `cuPerMinute` for `key` in windows of `windowSeconds`, and `runs` proxies. */
export async function limitedCluster(o: { key: string; cuPerMinute: number; windowSeconds: number; runs: number; latencyMs?: number }) {
  const root = mkdtempSync(join(tmpdir(), 'cl-cluster-'));
  const pgdb = await startPostgres();
  const sim = await startSimulator({ seed: 1, apiKeys: [o.key], rateLimit: { data: { cuPerMinute: o.cuPerMinute, windowSeconds: o.windowSeconds }, blockAfterLimitedRequests: 1e9 } });
  const proxies: Array<Awaited<ReturnType<typeof countingProxy>>> = [];
  for (let i = 0; i < o.runs; i++) proxies.push(await countingProxy(sim.url, o.latencyMs));
  return {
    root,
    pgdb,
    sim,
    proxies,
    close: async () => {
      for (const p of proxies) await p.close();
      await sim.close();
      await pgdb.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
