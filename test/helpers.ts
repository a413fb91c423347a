// A tiny loopback HTTP server whose answers a test scripts request by request.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SourceConfig } from '../src/config/pipeline.js';

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

export async function scriptedServer(handler: Handler): Promise<{ url: string; requests: IncomingMessage[]; close(): Promise<void> }> {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    handler(req, res, requests.length);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function source(url: string, extra: Partial<SourceConfig> = {}): SourceConfig {
  return { url, keyHeader: 'x-data-api-key', concurrency: 2, requestsPerSecond: 0, timeoutMs: 2000, retries: 4, ...extra };
}

/** Every row of every table of a lake, as sorted JSON lines per table: to compare two lakes. */
export async function lakeContents(lake: string): Promise<Record<string, string[]>> {
  const { openWarehouse } = await import('../src/warehouse/views.js');
  const { query } = await import('../src/warehouse/query.js');
  const { STREAMS } = await import('../src/streams/index.js');
  const conn = await openWarehouse(lake);
  const out: Record<string, string[]> = {};
  for (const d of STREAMS) {
    // snapshot_at is when a balance snapshot was taken: it differs between any two runs.
    const volatile = d.columns.some((c) => c.name === 'snapshot_at') ? ' EXCLUDE (snapshot_at)' : '';
    out[d.table] = (await query(conn, `SELECT *${volatile} FROM "${d.table}"`)).rows.map((r) => JSON.stringify(r)).sort();
  }
  conn.closeSync();
  return out;
}

export const quiet = (await import('pino')).pino({ level: 'silent' });
