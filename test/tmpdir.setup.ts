// Every test's temporary folders (lakes, simulators' files, Chromium's profile) go under one folder
// made for this run and removed after it, so that `npm test` leaves nothing in the system's tmp.
// Set before the workers fork, so they and the CLIs they spawn inherit it; os.tmpdir() reads it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'chainlake-test-'));
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
