// Every test's temporary folders (lakes, simulators' files, Chromium's profile) go under one folder
// made for this run and removed after it, so that `npm test` leaves nothing in the system's tmp.
// Set before the workers fork, so they and the CLIs they spawn inherit it; os.tmpdir() reads it.
// Each vitest project (unit, integration, system) runs the global setup: the first makes the
// folder, the others find it (a folder made inside another would be out of reach of PostgreSQL's
// user when the tests run as root, its parents being 0700).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  if (process.env.CHAINLAKE_TEST_TMP) return () => undefined;
  const dir = mkdtempSync(join(tmpdir(), 'chainlake-test-'));
  process.env.TMPDIR = dir;
  process.env.CHAINLAKE_TEST_TMP = dir;
  return () => {
    rmSync(dir, { recursive: true, force: true });
    delete process.env.CHAINLAKE_TEST_TMP;
  };
}
