// The lease in one process: its file backend's conditional writes, the takeover rules, renewal,
// the fence before a commit, release, and a backend that ignores conditions. Renewals and expiries
// run on a fake clock: time moves only when a test moves it. Takeovers between real processes
// (zombies, races, a paused holder) are in lock.test.ts.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Lease, parseRecord, takeoverReason, type LeaseBackend, type LeaseRecord } from '../../src/state/lease.js';
import { FileLeaseBackend } from '../../src/state/lease_file.js';
import { LakeLock, LEASE_SECONDS_ENV, leaseBound } from '../../src/state/lock.js';
import { processFacts, thisProcess } from '../../src/state/process.js';
import { StateStore } from '../../src/state/store.js';
import { UsageError } from '../../src/errors.js';
import { FakeClock } from '../sources/fake-clock.js';

const lake = () => mkdtempSync(join(tmpdir(), 'cl-lease-'));
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function record(o: Partial<LeaseRecord> = {}): LeaseRecord {
  const now = new Date().toISOString();
  return { pid: process.pid, host: hostname(), since: now, renewed: now, bound: 60_000, token: 'other', fence: 7, ...o };
}

/** A pid no process can have (above the kernel's highest); a real dead holder is in lock.test.ts. */
const NO_PID = (() => {
  try {
    return Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8')) + 1;
  } catch {
    return 2 ** 22 + 1;
  }
})();

/** Replaces the record whatever its version: another process taking the lease over. */
async function takeOverBehind(backend: LeaseBackend, r: LeaseRecord): Promise<void> {
  for (;;) {
    const cur = await backend.read();
    if (cur && (await backend.replace(JSON.stringify(r), cur.version))) return;
  }
}

async function take(backend: LeaseBackend, bound = 60_000, clock = new FakeClock(Date.now())) {
  const t = await Lease.take(backend, { bound, settle: 50, clock });
  if ('holder' in t) throw new Error(`refused by pid ${t.holder.pid}`);
  // A renewal stuck on its store holds the release until the bound: the fake clock gets there.
  cleanups.push(() => void clock.run(t.lease.release()));
  return t;
}

describe('the file backend', () => {
  it('creates once, replaces and removes only the version it read, and a removed record can be created again', async () => {
    const dir = join(lake(), '_lock');
    const b = new FileLeaseBackend(dir);
    expect(await b.read()).toBeUndefined();
    expect(await b.create('a')).toBe(true);
    expect(await b.create('b')).toBe(false);
    const a = await b.read();
    expect(a?.body).toBe('a');
    expect(await b.replace('c', a!.version)).toBe(true);
    // The version moved on: a second write over the same version and a removal of it fail.
    expect(await b.replace('d', a!.version)).toBe(false);
    expect(await b.remove(a!.version)).toBe(false);
    const c = await b.read();
    expect(c).toEqual({ body: 'c', version: expect.not.stringMatching(`^${a!.version}$`) });
    expect(await b.remove(c!.version)).toBe(true);
    expect(await b.read()).toBeUndefined();
    expect(await b.replace('e', c!.version)).toBe(false);
    expect(await b.create('f')).toBe(true);
    expect((await b.read())?.body).toBe('f');
    // Old versions are gone; only the newest one stays, and no temp file.
    expect(readdirSync(dir)).toHaveLength(1);
  });

  it('refuses a writer whose version was deleted long ago, though its number is free again', async () => {
    const b = new FileLeaseBackend(join(lake(), '_lock'));
    await b.create('first');
    const old = (await b.read())!.version;
    for (let i = 0; i < 3; i++) await b.replace(`renewal ${i}`, (await b.read())!.version);
    // The version after `old` was deleted when a newer one landed: the link succeeds, and is undone.
    expect(await b.replace('stale', old)).toBe(false);
    expect((await b.read())?.body).toBe('renewal 2');
  });

  it('a renewal in a lock folder deleted by hand fails instead of making a new one', async () => {
    const root = lake();
    const b = new FileLeaseBackend(join(root, '_lock'));
    await b.create('x');
    const v = (await b.read())!.version;
    rmSync(join(root, '_lock'), { recursive: true });
    expect(await b.replace('y', v)).toBe(false);
    expect(existsSync(join(root, '_lock'))).toBe(false);
  });
});

describe('takeover rules', () => {
  it('a live holder on this host keeps its lease until the bound; a silent one loses it after', () => {
    const now = Date.now();
    expect(takeoverReason(record(), now)).toBeUndefined();
    expect(takeoverReason(record({ renewed: new Date(now - 61_000).toISOString() }), now)).toMatch(/not renewed for 61 s \(its bound is 60 s\)/);
  });

  it('a holder on this host whose process is gone, or whose pid now names another process, loses it at once', async () => {
    const now = Date.now();
    const pid = NO_PID;
    expect(processFacts(pid).state).toBe('gone');
    expect(takeoverReason(record({ pid }), now)).toMatch(`its process ${pid} is gone`);
    // This process with another start time: the pid was reused.
    const me = thisProcess();
    expect(me.start).toBeDefined();
    expect(takeoverReason(record({ start: me.start }), now)).toBeUndefined();
    expect(takeoverReason(record({ start: String(Number(me.start) + 1) }), now)).toMatch(/the pid now names another process/);
  });

  it('a holder elsewhere (another host, or this host name in another pid namespace) is judged by the bound only', async () => {
    const now = Date.now();
    const pid = NO_PID;
    expect(takeoverReason(record({ pid, host: 'elsewhere' }), now)).toBeUndefined();
    expect(takeoverReason(record({ pid, space: 'another-boot pid:[1]' }), now)).toBeUndefined();
    expect(takeoverReason(record({ pid, host: 'elsewhere', renewed: new Date(now - 120_000).toISOString() }), now)).toMatch(/not renewed/);
  });

  it('an older chainlake lock file ({pid, host, since}) holds while its process lives, and never expires', async () => {
    const legacy = parseRecord(JSON.stringify({ pid: process.pid, host: hostname(), since: '2020-01-01T00:00:00.000Z' }))!;
    expect(legacy.bound).toBe(Infinity);
    expect(takeoverReason(legacy, Date.now())).toBeUndefined();
    expect(takeoverReason({ ...legacy, pid: NO_PID }, Date.now())).toMatch(/is gone/);
    expect(parseRecord('{"pid":1,')).toBeUndefined();
    expect(parseRecord(JSON.stringify({ ...record(), bound: -1 }))).toBeUndefined();
  });

  it('takes over the lock file an older chainlake left, once its process is gone', async () => {
    const root = lake();
    writeFileSync(join(root, '_lock'), JSON.stringify({ pid: process.pid, host: hostname(), since: 'then' }));
    await expect(LakeLock.tryAcquire(root)).rejects.toThrow(/in use by another chainlake run \(pid \d+ .* by an older chainlake/);
    writeFileSync(join(root, '_lock'), JSON.stringify({ pid: NO_PID, host: hostname(), since: 'then' }));
    const notes: string[] = [];
    const lock = await LakeLock.tryAcquire(root, { onNote: (n) => notes.push(n) });
    expect(notes.join()).toMatch(/took over the lake's lock from pid \d+ .*is gone/);
    await lock.release();
    expect(await LakeLock.held(root)).toBe(false);
  });
});

describe('the lease', () => {
  it('is refused while held, taken over from a dead holder with the fence counter one up, and released', async () => {
    const root = lake();
    const a = await LakeLock.tryAcquire(root);
    await expect(LakeLock.tryAcquire(root)).rejects.toThrow(/the lake .* is in use by another chainlake run \(pid \d+ on .* since .*; its lease was renewed at .* and expires at .* unless renewed\)/);
    await a.release();
    expect(await LakeLock.held(root)).toBe(false);
    // A record of a dead process of this host.
    const backend = new FileLeaseBackend(join(root, '_lock'));
    await backend.create(JSON.stringify(record({ pid: NO_PID, fence: 4 })));
    const t = await take(backend);
    expect(t).toMatchObject({ tookOver: { why: expect.stringMatching(/is gone/) } });
    expect(parseRecord((await backend.read())!.body)).toMatchObject({ pid: process.pid, fence: 5, bound: 60_000 });
  });

  it('a record from another host is taken over only once it was not renewed within its bound', async () => {
    const backend = new FileLeaseBackend(join(lake(), '_lock'));
    await backend.create(JSON.stringify(record({ host: 'elsewhere' })));
    expect(await Lease.take(backend, { bound: 60_000 })).toMatchObject({ holder: { host: 'elsewhere' } });
    const v = (await backend.read())!.version;
    await backend.replace(JSON.stringify(record({ host: 'elsewhere', renewed: new Date(Date.now() - 61_000).toISOString() })), v);
    expect(await take(backend)).toMatchObject({ tookOver: { from: { host: 'elsewhere' }, why: expect.stringMatching(/not renewed/) } });
  });

  it('renews its record every third of its bound, on its clock, and stays held for as long as it renews', async () => {
    const backend = new FileLeaseBackend(join(lake(), '_lock'));
    const clock = new FakeClock(Date.now());
    const { lease } = await take(backend, 3000, clock);
    const first = parseRecord((await backend.read())!.body)!;
    await clock.advance(999);
    expect(parseRecord((await backend.read())!.body)!.renewed).toBe(first.renewed);
    await clock.advance(1);
    expect(parseRecord((await backend.read())!.body)).toMatchObject({ renewed: new Date(clock.now()).toISOString(), token: first.token, since: first.since, fence: first.fence });
    // Ten bounds on, renewed all along: still held, and nobody may take it over.
    for (let i = 0; i < 30; i++) await clock.advance(1000);
    expect(() => lease.assertHeld()).not.toThrow();
    expect(takeoverReason(parseRecord((await backend.read())!.body)!, clock.now())).toBeUndefined();
  });

  it('a holder whose lease was taken over learns it at its next renewal and cannot commit: the fence throws, nothing is written', async () => {
    const root = lake();
    const clock = new FakeClock(Date.now());
    const { lease: lock } = await take(new FileLeaseBackend(join(root, '_lock')), 6000, clock);
    const store = new StateStore(root, { fence: () => lock.assertHeld() });
    mkdirSync(join(root, '_staging'), { recursive: true });
    writeFileSync(join(root, '_staging', 'a.parquet'), 'x');
    // A commit while held goes through.
    await store.commit({ ...store.load('t', 'p'), files: [] }, []);
    const backend = new FileLeaseBackend(join(root, '_lock'));
    await takeOverBehind(backend, record({ pid: 1, host: 'elsewhere', since: 'the takeover', fence: 2 }));
    // Until its next renewal the holder does not know.
    await clock.advance(1999);
    expect(lock.lost).toBe(false);
    await clock.advance(1);
    expect(lock.lost).toBe(true);
    const before = store.load('t', 'p');
    await expect(store.commit({ ...before, files: ['t/a.parquet'], rows: 1 }, [['_staging/a.parquet', 't/a.parquet']])).rejects.toThrow(/lost the lock at .*_lock: pid 1 on elsewhere took it over at the takeover \(fence 2\)/);
    expect(store.load('t', 'p')).toEqual(before);
    expect(existsSync(join(root, 't', 'a.parquet'))).toBe(false);
    expect(existsSync(join(root, '_staging', 'a.parquet'))).toBe(true);
    // Nor does it clear staging, which may be the new holder's now.
    await expect(store.recover()).rejects.toThrow(/lost the lock/);
    expect(existsSync(join(root, '_staging', 'a.parquet'))).toBe(true);
    // Its release leaves the new holder's record.
    await lock.release();
    expect(parseRecord((await backend.read())!.body)).toMatchObject({ host: 'elsewhere' });
  });

  it('a holder that cannot renew stops trusting its lease before anyone may take it over', async () => {
    const file = new FileLeaseBackend(join(lake(), '_lock'));
    let stuck = false;
    // A store that stops answering writes (a network cut): renewals never return.
    const backend: LeaseBackend = {
      conditional: true,
      where: 'a store that hangs',
      create: (b) => file.create(b),
      read: () => file.read(),
      replace: (b, v) => (stuck ? new Promise<boolean>(() => {}) : file.replace(b, v)),
      remove: (v) => file.remove(v),
    };
    const clock = new FakeClock(Date.now());
    const { lease } = await take(backend, 3000, clock);
    stuck = true;
    // The renewal at 1 s hangs; the lease is trusted for two thirds of the bound from its taking.
    await clock.advance(2000);
    expect(() => lease.assertHeld()).not.toThrow();
    await clock.advance(1);
    expect(() => lease.assertHeld()).toThrow(/could not renew its lock at a store that hangs for 2 s; another writer may take the lake over after 3 s/);
    // A second later another process may take it over; this one stopped trusting it a third of the bound before.
    await clock.advance(1000);
    expect(takeoverReason(parseRecord((await file.read())!.body)!, clock.now())).toMatch(/not renewed for 3 s/);
    // Nobody took it over: the record is still this holder's, not renewed since.
    expect(lease.lost).toBe(false);
  });

  it('release removes only its own record, and a released lease cannot commit', async () => {
    const backend = new FileLeaseBackend(join(lake(), '_lock'));
    const { lease } = await take(backend);
    expect(await lease.release()).toBe(true);
    expect(await backend.read()).toBeUndefined();
    expect(() => lease.assertHeld()).toThrow(/was released/);
    const second = await take(backend);
    await takeOverBehind(backend, record({ host: 'elsewhere' }));
    expect(await second.lease.release()).toBe(false);
    expect(parseRecord((await backend.read())!.body)).toMatchObject({ host: 'elsewhere' });
  });

  it('the bound comes from CHAINLAKE_LEASE_SECONDS, 30 s unless set; a bad value is a usage error naming it', () => {
    expect(leaseBound({})).toBe(30_000);
    expect(leaseBound({ [LEASE_SECONDS_ENV]: '1.5' })).toBe(1500);
    for (const bad of ['0', '-2', 'abc', 'Infinity'])
      expect(() => leaseBound({ [LEASE_SECONDS_ENV]: bad })).toThrow(expect.objectContaining({ constructor: UsageError, message: expect.stringContaining(`CHAINLAKE_LEASE_SECONDS=${bad}`) }));
  });
});

/** An object store that ignores conditions: every write lands, the last one wins. */
function unconditional(): LeaseBackend & { writes: number } {
  let record: { body: string; version: string } | undefined;
  let n = 0;
  return {
    conditional: false,
    where: 'a store without conditional writes',
    writes: 0,
    async create(body) {
      this.writes++;
      record = { body, version: String(++n) };
      return true;
    },
    async read() {
      return record;
    },
    async replace(body) {
      this.writes++;
      record = { body, version: String(++n) };
      return true;
    },
    async remove() {
      record = undefined;
      return true;
    },
  };
}

describe('a store that ignores conditional writes', () => {
  it('is said at the start; of two writers that start together the last one keeps the lock, the other refuses', async () => {
    const backend = unconditional();
    const clock = new FakeClock(Date.now());
    const both = Promise.all([Lease.take(backend, { bound: 60_000, settle: 50, clock }), Lease.take(backend, { bound: 60_000, settle: 50, clock })]);
    // Each wrote and waits the settle before it reads back.
    await clock.advance(0);
    expect(backend.writes).toBe(2);
    await clock.advance(49);
    expect(clock.pending).toBe(2);
    await clock.advance(1);
    const [a, b] = await both;
    // Both wrote before either read back.
    expect(backend.writes).toBe(2);
    const won = [a, b].filter((t) => 'lease' in t);
    expect(won).toHaveLength(1);
    for (const t of [a, b]) if ('lease' in t) cleanups.push(() => void clock.run(t.lease.release()));
    const notes: string[] = [];
    await expect(clock.run(LakeLock.tryAcquire('unused', { backend, clock, onNote: (n) => notes.push(n) }))).rejects.toThrow(/in use by another chainlake run/);
    await backend.remove('');
    const lock = await clock.run(LakeLock.tryAcquire('unused', { backend, clock, onNote: (n) => notes.push(n) }));
    expect(notes.join()).toMatch(/a store without conditional writes ignores conditional writes/);
    await lock.release();
    expect(await backend.read()).toBeUndefined();
  });
});

describe("a run's session that lost the lake", () => {
  it("says why (its work's failures are told so), and the run ends as the lake in another writer's hands: exit 3, its warehouse file left to that writer", async () => {
    const { LakeSession } = await import('../../src/pipeline/session.js');
    const { runOutcome } = await import('../../src/pipeline/report.js');
    const root = lake();
    const clock = new FakeClock(Date.now());
    const before = process.env[LEASE_SECONDS_ENV];
    process.env[LEASE_SECONDS_ENV] = '6';
    const session = await LakeSession.open(root);
    try {
      await session.lock({ clock });
    } finally {
      if (before === undefined) delete process.env[LEASE_SECONDS_ENV];
      else process.env[LEASE_SECONDS_ENV] = before;
    }
    cleanups.push(() => session.close());
    expect(session.lostLock()).toBeUndefined();
    await takeOverBehind(new FileLeaseBackend(join(root, '_lock')), record({ pid: 1, host: 'elsewhere', since: 'the takeover', fence: 2 }));
    await clock.advance(2000);
    const why = session.lostLock();
    expect(why).toMatch(/^this process lost the lock at .*_lock: pid 1 on elsewhere took it over at the takeover \(fence 2\); it commits nothing more/);
    const outcome = runOutcome({ runId: 'r', pipeline: 'p', lake: root, startedAt: '', status: 'failed', streams: [], lockLost: why } as unknown as Parameters<typeof runOutcome>[0]);
    expect(outcome.code).toBe(3);
    expect(outcome.line).toContain(`the run lost the lake to another writer part way (${why}); what it committed before is kept, and the lake's warehouse file is left to that writer`);
    expect(runOutcome({ runId: 'r', pipeline: 'p', lake: root, startedAt: '', status: 'ok', streams: [] } as unknown as Parameters<typeof runOutcome>[0]).code).toBe(0);
  });
});
