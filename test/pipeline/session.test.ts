// How a writer holds a lake (pipeline/session.ts), on a local lake in a temporary folder and a
// fake clock for the lock's lease: one writer at a time, the wait for another, the fence once the
// lock is gone, a worker's session that locks nothing, and a run's end (staging cleared, the report
// written, the lake let go) whatever its work did. Takeovers between real processes are in
// test/state/lock.test.ts.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT, RunError } from '../../src/errors.js';
import { newStreamReport, type RunReport } from '../../src/pipeline/report.js';
import { holdForRun, LakeSession, withLake } from '../../src/pipeline/session.js';
import { holdRun } from '../../src/pipeline/run.js';
import type { Pipeline } from '../../src/config/pipeline.js';
import { LeaseLost } from '../../src/state/lease.js';
import { FileLeaseBackend } from '../../src/state/lease_file.js';
import { leaseBound, LOCK, LockHeld } from '../../src/state/lock.js';
import { RUNS, STAGING } from '../../src/state/store.js';
import { recordingLogger } from '../fakes.js';
import { FakeClock } from '../sources/fake-clock.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function lake(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cl-session-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function session(dir: string): Promise<LakeSession> {
  const s = await LakeSession.open(dir);
  cleanups.push(() => s.close());
  return s;
}

/** Turns of the event loop until `cond` holds: the lease's file I/O is real, its time is not. The bound only says when to give up. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; !cond(); i++) {
    if (i > 30_000) throw new Error('never happened');
    await new Promise((r) => setTimeout(r, 1));
  }
}

const clockNow = () => new FakeClock(Date.now());

/** A lake that a session holds, its lease on a fake clock. */
async function heldLake(): Promise<{ dir: string; clock: FakeClock; holder: LakeSession }> {
  const dir = lake();
  const clock = clockNow();
  const holder = await session(dir);
  await holder.lock({ clock });
  return { dir, clock, holder };
}

/** The lake's lock record, if any. */
const lockRecord = (dir: string) => new FileLeaseBackend(join(dir, LOCK)).read();

function runReport(runId: string): RunReport {
  return { runId, pipeline: 'test', lake: '', startedAt: new Date(0).toISOString(), status: 'running', streams: [newStreamReport('transfers')] };
}

describe('a session and its lock', () => {
  it("one writer a lake: a second session's lock is refused naming the holder, and the lake is free again once the first closes", async () => {
    const { dir, clock, holder: first } = await heldLake();
    const second = await session(dir);
    const refused = await second.lock({ clock }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockHeld);
    expect((refused as LockHeld).exitCode).toBe(EXIT.lakeInUse);
    expect((refused as LockHeld).holder).toContain(`pid ${process.pid}`);
    await first.close();
    expect(existsSync(join(dir, LOCK))).toBe(true); // the folder stays, the record goes
    expect(await lockRecord(dir)).toBeUndefined();
    await second.lock({ clock });
    expect(await lockRecord(dir)).toBeDefined();
  });

  it('with wait, polls the lock on its clock, says once whom it waits for, and takes the lake when the other lets it go', async () => {
    const { dir, clock, holder: first } = await heldLake();
    const holderSleeps = clock.pending;
    const second = await session(dir);
    const waits: string[] = [];
    let took = false;
    const taking = second.lock({ clock, wait: true, onWait: (h) => waits.push(h) }).then(() => (took = true));
    await until(() => clock.pending === holderSleeps + 1);
    // Two more polls while the first holds it.
    for (let i = 0; i < 2; i++) {
      await clock.advance(250);
      await until(() => clock.pending === holderSleeps + 1);
    }
    expect(took).toBe(false);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toContain(`pid ${process.pid}`);
    await first.close();
    await clock.advance(250);
    await taking;
    expect(took).toBe(true);
    expect(waits).toHaveLength(1);
  });

  it('with wait and its signal stopped, refuses instead of waiting', async () => {
    const { dir, clock, holder: first } = await heldLake();
    const stop = new AbortController();
    stop.abort();
    const second = await session(dir);
    await expect(second.lock({ clock, wait: true, signal: stop.signal })).rejects.toBeInstanceOf(LockHeld);
    expect(clock.pending).toBe(1); // the holder's renewal only: nobody waits
  });

  it("once its lock is taken over, the session's store recovers and commits nothing", async () => {
    const { dir, clock, holder: s } = await heldLake();
    await s.recover();
    const backend = new FileLeaseBackend(join(dir, LOCK));
    const cur = (await backend.read())!;
    const other = { ...JSON.parse(cur.body), pid: 1, token: 'other', fence: 99 };
    expect(await backend.replace(JSON.stringify(other), cur.version)).toBe(true);
    // Its next renewal finds the record changed; the lease is still in its time, so only that renewal tells.
    await clock.advance(leaseBound() / 3);
    let refused: unknown;
    await until(() => {
      void s.recover().then(
        () => undefined,
        (e: unknown) => (refused ??= e),
      );
      return refused !== undefined;
    });
    expect(refused).toBeInstanceOf(LeaseLost);
    expect((refused as Error).message).toContain('took it over');
    await expect(s.recoverPartitions('transfers', ['a'])).rejects.toBeInstanceOf(LeaseLost);
  });

  it('a closed session commits nothing more: its released lock stays in the fence', async () => {
    const dir = lake();
    const s = await session(dir);
    await s.lock({ clock: clockNow() });
    await s.close();
    await expect(s.recover()).rejects.toThrow(/released; nothing more is committed/);
  });

  it("a worker's session on a local lake takes no lock: a run holds the lake beside it, and the worker's close leaves the run's lock", async () => {
    const dir = lake();
    const worker = await LakeSession.forWorker(dir, {});
    const run = await session(dir);
    await run.lock({ clock: clockNow() });
    await worker.close();
    expect(await lockRecord(dir)).toBeDefined();
    await run.recover();
  });
});

describe("a run's hold on its lake", () => {
  it('a run whose work fails: told before the report is written, the report says failed, staging is cleared and the lake let go', async () => {
    const dir = lake();
    const report = runReport('run-1');
    const logger = recordingLogger();
    const seen: Array<{ err: string; reportWritten: boolean }> = [];
    const failure = new RunError('the service went away');
    const held = holdForRun(
      dir,
      report,
      { logger, clock: clockNow() },
      async (s) => {
        mkdirSync(join(dir, STAGING, 'transfers'), { recursive: true });
        writeFileSync(join(dir, STAGING, 'transfers', 'batch.rows'), 'half a batch');
        expect(s.store.lake).toBe(report.lake);
        throw failure;
      },
      (err) => seen.push({ err: (err as Error).message, reportWritten: existsSync(join(dir, RUNS, 'run-1.json')) }),
    );
    await expect(held).rejects.toBe(failure);
    expect(seen).toEqual([{ err: 'the service went away', reportWritten: false }]);
    const saved = JSON.parse(readFileSync(join(dir, RUNS, 'run-1.json'), 'utf8')) as RunReport;
    expect(saved.status).toBe('failed');
    expect(saved.finishedAt).toBeDefined();
    expect(existsSync(join(dir, STAGING))).toBe(false);
    expect(await lockRecord(dir)).toBeUndefined();
    expect(logger.lines.find((l) => l.msg === 'run finished')?.obj).toMatchObject({ run: 'run-1', status: 'failed' });
  });

  it("a run on a held lake is refused without wait, writing nothing; one that ends well keeps its work's status", async () => {
    const { dir, clock, holder: other } = await heldLake();
    const logger = recordingLogger();
    await expect(holdForRun(dir, runReport('run-0'), { logger, clock }, async () => undefined)).rejects.toBeInstanceOf(LockHeld);
    // Refused before it held anything: no report of it in the lake.
    expect(existsSync(join(dir, RUNS, 'run-0.json'))).toBe(false);
    await other.close();
    const report = runReport('run-2');
    await holdForRun(dir, report, { logger, clock }, async () => {
      report.status = 'ok';
    });
    expect((JSON.parse(readFileSync(join(dir, RUNS, 'run-2.json'), 'utf8')) as RunReport).status).toBe('ok');
    expect(await lockRecord(dir)).toBeUndefined();
  });

  it('a run with wait on a held lake says whom it waits for, on its clock, and runs once the lake is free', async () => {
    const { dir, clock, holder: other } = await heldLake();
    const sleeps = clock.pending;
    const logger = recordingLogger();
    let worked = false;
    const held = holdForRun(dir, runReport('run-3'), { logger, clock, wait: true }, async () => {
      worked = true;
    });
    await until(() => clock.pending === sleeps + 1);
    expect(worked).toBe(false);
    expect(logger.lines.filter((l) => l.msg === 'waiting for the other run on this lake')).toHaveLength(1);
    await other.close();
    await clock.advance(250);
    await held;
    expect(worked).toBe(true);
  });

  it('withLake clears what its work staged once the work succeeds, and leaves it to the next start when the work fails', async () => {
    const dir = lake();
    const clock = clockNow();
    const stage = () => {
      mkdirSync(join(dir, STAGING, 'x'), { recursive: true });
      writeFileSync(join(dir, STAGING, 'x', 'part'), '');
    };
    await expect(
      withLake(dir, { clock, clearAfter: true }, async () => {
        stage();
        throw new RunError('no');
      }),
    ).rejects.toThrow('no');
    expect(existsSync(join(dir, STAGING, 'x', 'part'))).toBe(true);
    // The next start clears it before its work; clearAfter clears what the work staged.
    const seenAtStart = await withLake(dir, { clock, clearAfter: true }, async () => {
      const was = existsSync(join(dir, STAGING, 'x', 'part'));
      stage();
      return was;
    });
    expect(seenAtStart).toBe(false);
    expect(existsSync(join(dir, STAGING))).toBe(false);
    expect(await lockRecord(dir)).toBeUndefined();
  });
});

describe("a run's shell (holdRun)", () => {
  it('with wait, waits for a held lake on the clock it is given, then runs its work and compacts nothing for no jobs', async () => {
    const { dir, clock, holder: first } = await heldLake();
    const holderSleeps = clock.pending;
    const pipeline: Pipeline = { name: 'empty', file: 'empty.yaml', sources: {} as Pipeline['sources'], streams: [] };
    let worked = false;
    const running = holdRun(pipeline, { lake: dir, wait: true, clock, logger: recordingLogger() }, async ({ jobs }) => {
      expect(jobs).toEqual([]);
      worked = true;
    });
    // Its poll of the lock sleeps on the fake clock: real time passing does not end the wait.
    await until(() => clock.pending === holderSleeps + 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(worked).toBe(false);
    await first.close();
    await clock.advance(250);
    const report = await running;
    expect(worked).toBe(true);
    expect(report.status).toBe('ok');
  });
});
