// What several test files share, built once per test run (`npm test`) whichever file asks first:
// the shared lakes (test/lake-fixture.ts) and PostgreSQL's initialised cluster (test/pg-fixture.ts).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A folder `build` fills, made once per test worker (the integration files share a worker's
 * modules) and, under the folder of a test run (tmpdir.setup.ts), once for all its workers: the
 * first claims it (a folder holding its process id, moved into place whole) and builds it in place
 * (an Iceberg table's metadata names its files by their paths: a lake moved after its run reads
 * no more), then marks it done; the others wait for that mark, or claim it themselves if the
 * claiming process is gone without it. A failed build is tried again by the next caller.
 */
export async function madeOnce(name: string, build: (dir: string) => Promise<void>): Promise<string> {
  const run = process.env.CHAINLAKE_TEST_TMP;
  if (!run) {
    const dir = mkdtempSync(join(tmpdir(), `cl-${name}-`));
    await build(dir);
    return dir;
  }
  const place = join(run, name);
  const done = `${place}.done`;
  const claim = await claimed(done, `${place}.building`);
  if (!claim) return place;
  try {
    rmSync(place, { recursive: true, force: true });
    mkdirSync(place);
    await build(place);
    writeFileSync(done, '');
    return place;
  } catch (err) {
    rmSync(place, { recursive: true, force: true });
    throw err;
  } finally {
    rmSync(claim, { recursive: true, force: true });
  }
}

/** The claim `claim`, once it is this process's; undefined once `done` is there. */
async function claimed(done: string, claim: string): Promise<string | undefined> {
  for (;;) {
    if (existsSync(done)) return undefined;
    const mine = mkdtempSync(`${claim}-`);
    writeFileSync(join(mine, 'pid'), String(process.pid));
    try {
      // A folder onto a folder that holds a file fails: one process wins the claim.
      renameSync(mine, claim);
      // Done by the claim just released (between the look above and this claim): nothing to build.
      if (!existsSync(done)) return claim;
      rmSync(claim, { recursive: true, force: true });
      return undefined;
    } catch {
      rmSync(mine, { recursive: true, force: true });
    }
    let pid = 0;
    try {
      pid = Number(readFileSync(join(claim, 'pid'), 'utf8'));
      process.kill(pid, 0);
    } catch {
      // Its process is gone (or its claim just went): claim it again.
      if (pid) rmSync(claim, { recursive: true, force: true });
      continue;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A rejection that forgets the failed build first, so that the next caller tries again. */
export const retry = (forget: () => void) => (err: unknown): never => {
  forget();
  throw err;
};
