// Every test's temporary folders (lakes, simulators' files, Chromium's profile) go under one folder
// made for this run and removed after it, so that `npm test` leaves nothing in the system's tmp.
// Set before the workers fork, so they and the CLIs they spawn inherit it; os.tmpdir() reads it.
// Each vitest project (unit, integration, system) runs the global setup: the first makes the
// folder, the others find it (a folder made inside another would be out of reach of PostgreSQL's
// user when the tests run as root, its parents being 0700).
//
// The folder is in memory where the machine has room there (/dev/shm, a tmpfs with at least
// MEMORY_ROOM free): every commit of every lake the tests write syncs its files (fsync), which on a
// disk is most of a small run's wait; on a tmpfs the same calls return at once. The code under test
// is the same: only where its files land differs. Elsewhere (a container's small /dev/shm, another
// system) the system's tmp folder, as before.
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TMPFS_MAGIC = 0x01021994;
const MEMORY_ROOM = 8 * 2 ** 30;

function base(): string {
  try {
    const s = statfsSync('/dev/shm');
    if (s.type === TMPFS_MAGIC && s.bsize * s.bavail >= MEMORY_ROOM) return '/dev/shm';
  } catch {
    // no /dev/shm: the system's tmp
  }
  return tmpdir();
}

export default function setup(): () => void {
  if (process.env.CHAINLAKE_TEST_TMP) return () => undefined;
  const dir = mkdtempSync(join(base(), 'chainlake-test-'));
  process.env.TMPDIR = dir;
  process.env.CHAINLAKE_TEST_TMP = dir;
  // The loading commands ask DuckDB's allocator to hand freed pages back at once (bin/chainlake.js),
  // which keeps a user's run flat in memory and costs it a third more CPU, most of it in the system.
  // The tests start a few hundred such processes and assert no memory bound of theirs but hostile's
  // (which runs its CLI without this); so the CLIs the tests start keep freed pages for a second, as
  // a user may set (the setting a user gives wins over the CLI's).
  process.env.DUCKDB_JE_MALLOC_CONF ??= 'dirty_decay_ms:1000,muzzy_decay_ms:1000';
  // DuckDB on one thread in the workers and the CLIs they start, as a user may set: three test
  // files run at once on a few cores, so a second thread per DuckDB only adds its handovers (an
  // eighth of the CPU of the files that write and read lakes). The tests' lakes are small enough
  // that DuckDB would rarely split their work anyway; test/pipeline/threads.test.ts runs the
  // writes and merges whose row order could change on several threads with four.
  process.env.CHAINLAKE_DUCKDB_THREADS ??= '1';
  return () => {
    rmSync(dir, { recursive: true, force: true });
    delete process.env.CHAINLAKE_TEST_TMP;
  };
}
