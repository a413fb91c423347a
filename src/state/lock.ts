// One lake, one writer. The lock is a file created exclusively; a lock whose process is gone (same
// host, pid not alive) is taken over, so a kill -9 never wedges the lake.
import { hostname } from 'node:os';
import { mkdirSync, openSync, closeSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { RunError } from '../errors.js';

interface Holder {
  pid: number;
  host: string;
  since: string;
}

/** Whether a process of this host with this pid exists (EPERM: it does, owned by another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class LockHeld extends RunError {
  constructor(
    lake: string,
    readonly holder: string,
  ) {
    super(`the lake ${lake} is in use by another chainlake run (${holder}); one writer per lake: rerun when it is done, or pass --wait`);
  }
}

export class LakeLock {
  private constructor(private readonly file: string) {}

  /** Takes the lock; with `wait`, polls until the other writer is done instead of refusing. */
  static async acquire(lake: string, o: { wait?: boolean; signal?: AbortSignal; onWait?: (holder: string) => void } = {}): Promise<LakeLock> {
    let told = false;
    for (;;) {
      try {
        return LakeLock.tryAcquire(lake);
      } catch (err) {
        if (!o.wait || !(err instanceof LockHeld)) throw err;
        if (!told) o.onWait?.(err.holder);
        told = true;
        if (o.signal?.aborted) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  static tryAcquire(lake: string): LakeLock {
    mkdirSync(lake, { recursive: true });
    const file = join(lake, '_lock');
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openSync(file, 'wx');
        const me: Holder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
        writeSync(fd, JSON.stringify(me));
        closeSync(fd);
        return new LakeLock(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      let holder: Holder | undefined;
      try {
        holder = JSON.parse(readFileSync(file, 'utf8')) as Holder;
      } catch {
        holder = undefined; // half-written by a process killed between open and write
      }
      if (holder && (holder.host !== hostname() || alive(holder.pid))) {
        throw new LockHeld(lake, `pid ${holder.pid} on ${holder.host} since ${holder.since}`);
      }
      try {
        unlinkSync(file);
      } catch {
        // another process took it over first; try again
      }
    }
    throw new RunError(`could not take the lock of ${lake}`);
  }

  release(): void {
    try {
      unlinkSync(this.file);
    } catch {
      // already gone
    }
  }
}
