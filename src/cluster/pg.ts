// A connection pool on a PostgreSQL named by a connection string, and how its failures read.
import pg from 'pg';

/**
 * The start of every migration of chainlake's tables: many processes may start at once, so an
 * advisory lock orders them, and each statement after it is idempotent.
 */
export const MIGRATION_START = `SELECT pg_advisory_xact_lock(hashtext('chainlake.migrate'));
CREATE SCHEMA IF NOT EXISTS chainlake;`;

/** How every connection of chainlake's to `url` is made: a database away fails it, it does not hang. */
const connecting = (url: string) => ({ connectionString: url, connectionTimeoutMillis: 5000 });

/** One connection of its own, outside any pool, named `name` in the server's list of sessions. */
export function openClient(url: string, name: string): pg.Client {
  return new pg.Client({ ...connecting(url), application_name: name });
}

/**
 * A pool whose connections the server may close (a restart, a terminated backend) without ending
 * the process: the next query on one fails instead. An idle connection reports it to the pool; a
 * checked-out one between two queries (a commit's transaction while its files move) emits it on
 * itself, which without a listener of its own ends the process, whoever checked it out.
 */
export function openPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ ...connecting(url), max });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * The database is away (refused, dropped or timed out the connection, or is shutting down or
 * starting), as opposed to refusing a query: the former passes, the latter is a bug to report.
 */
export function unavailable(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (/^E[A-Z]+$/.test(code) || code.startsWith('08') || code.startsWith('57P'))) return true;
  return e instanceof Error && /Connection terminated|timeout|connect ECONNREFUSED/i.test(e.message);
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
