// What the tests of the shared budget on a real PostgreSQL stand on: the database (with a pool of
// its own for reading the budget's tables), and processes spending on one key (budget-client.mjs)
// that start spending at one moment. budget.test.ts measures the windows such processes share;
// budget-db.test.ts what does not depend on how the windows are shared out.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { startPostgres, type PgFixture } from '../pg-fixture.js';

const CLIENT = fileURLToPath(new URL('./budget-client.mjs', import.meta.url));
/** From the moment every process is ready (its budget open) to the first window it spends in. */
const LEAD_MS = 300;

export interface ClientResult {
  pid: number;
  spends: Array<[number, number, number]>;
  errors: Array<[number, string]>;
  pause?: { from: number; until: number };
}

/** A client's options once the time it starts spending is known. */
export type Plan = (startAt: number) => Record<string, unknown>;

/**
 * Starts a process per plan, waits until each has opened its budget (however long processes take
 * to start on this machine), then gives them all one start time, LEAD_MS ahead.
 */
export async function runClients(plans: Plan[]): Promise<{ startAt: number; results: Promise<ClientResult[]> }> {
  const clients = plans.map((plan) => {
    const child = spawn(process.execPath, [CLIENT, JSON.stringify(plan(0))], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let isReady: () => void = () => undefined;
    const ready = new Promise<void>((r) => (isReady = r));
    child.stdout.on('data', (d) => {
      out += d;
      if (out.startsWith('ready\n')) isReady();
    });
    child.stderr.on('data', (d) => (err += d));
    const result = new Promise<ClientResult>((resolve, reject) =>
      child.on('close', (code) => {
        isReady();
        if (code === 0) resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ClientResult);
        else reject(new Error(`budget client exited ${code}: ${err}`));
      }),
    );
    return { child, ready, result };
  });
  await Promise.all(clients.map((c) => c.ready));
  const startAt = Date.now() + LEAD_MS;
  for (const [i, c] of clients.entries()) c.child.stdin.end(JSON.stringify(plans[i]!(startAt)) + '\n');
  return { startAt, results: Promise.all(clients.map((c) => c.result)) };
}

/** A hungry client's options on `key` from startAt to stopAt: four requests under way, 5 ms answers. */
export function hungry(url: string, key: string, w: { windowMs: number; cuPerWindow: number }, startAt: number, stopAt: number): Record<string, unknown> {
  return { url, service: 'data', key, ...w, startAt, stopAt, concurrency: 4, latencyMs: 5, weights: [1, 2, 3, 5, 4] };
}

/** CU spent per window (by its start), over every process. */
export function perWindow(results: ClientResult[]): Map<number, number> {
  const sums = new Map<number, number>();
  for (const r of results) for (const [, start, weight] of r.spends) sums.set(start, (sums.get(start) ?? 0) + weight);
  return sums;
}

export function cuBetween(r: ClientResult, from: number, until: number): number {
  return r.spends.filter(([t]) => t >= from && t < until).reduce((n, [, , w]) => n + w, 0);
}

/** A PostgreSQL for the file's tests (started before them, removed after) and a pool on it. */
export function budgetDatabase(): { readonly db: PgFixture; readonly sql: pg.Pool } {
  let db: PgFixture | undefined;
  let sql: pg.Pool | undefined;
  beforeAll(async () => {
    db = await startPostgres();
    sql = new pg.Pool({ connectionString: db.url, max: 1 });
    // The restart test stops the server under the pool's idle connection.
    sql.on('error', () => {});
  });
  afterAll(async () => {
    await sql?.end();
    await db?.close();
  });
  return {
    get db() {
      return db!;
    },
    get sql() {
      return sql!;
    },
  };
}
