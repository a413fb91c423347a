// The lake's lock between real processes (test/state/lock-holder.mjs on dist/): a live holder is
// refused; a killed one, a zombie nobody reaped and a paused one past its bound are taken over;
// of processes racing for one stale lock exactly one wins; a holder that lost the lock cannot
// commit. No timing is asserted: waits are "eventually", with generous limits.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { FileLeaseBackend } from '../../src/state/lease_file.js';
import { parseRecord } from '../../src/state/lease.js';
import { LakeLock } from '../../src/state/lock.js';
import { processFacts } from '../../src/state/process.js';

const HOLDER = fileURLToPath(new URL('./lock-holder.mjs', import.meta.url));
const RACER = fileURLToPath(new URL('./lease-racer.mjs', import.meta.url));
const lake = () => mkdtempSync(join(tmpdir(), 'cl-lock-'));

const children: ChildProcess[] = [];
const pids: number[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

async function eventually<T>(f: () => T | undefined | false | Promise<T | undefined | false>, what: string, ms = 45_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Said {
  pid: number;
  held?: boolean;
  refused?: string;
  committed?: boolean;
  lost?: boolean;
  released?: boolean;
  ready?: boolean;
  replaced?: boolean;
}

/** A process started by `argv`, its JSON lines as they come. */
function started(argv: string[], env: Record<string, string> = {}) {
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  children.push(child);
  const said: Said[] = [];
  let buf = '';
  let err = '';
  child.stdout!.on('data', (d) => {
    buf += String(d);
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      said.push(JSON.parse(buf.slice(0, i)) as Said);
      buf = buf.slice(i + 1);
    }
  });
  child.stderr!.on('data', (d) => (err += String(d)));
  const next = (pred: (s: Said) => boolean, what: string) => eventually(() => said.find(pred), `${what} (stderr: ${err})`);
  return { child, said, next, send: (line: string) => child.stdin!.write(line + '\n') };
}

const holder = (root: string, env: Record<string, string> = {}, barrier?: string) => started([process.execPath, HOLDER, root, ...(barrier ? [barrier] : [])], env);

describe('the lake lock between processes', () => {
  it('refuses a live holder, saying who and until when, and is taken once that holder releases', async () => {
    const root = lake();
    const h = holder(root);
    const { pid } = await h.next((s) => s.held === true, 'the holder takes the lock');
    await expect(LakeLock.tryAcquire(root)).rejects.toThrow(new RegExp(`is in use by another chainlake run \\(pid ${pid} on ${hostname()} since \\S+; its lease was renewed at \\S+ and expires at \\S+ unless renewed\\)`));
    h.send('release');
    await h.next((s) => s.released === true, 'the holder releases');
    await (await LakeLock.tryAcquire(root)).release();
  });

  it('takes over at once the lock of a holder that was killed', async () => {
    const root = lake();
    const h = holder(root);
    const { pid } = await h.next((s) => s.held === true, 'the holder takes the lock');
    h.child.kill('SIGKILL');
    await new Promise((r) => h.child.once('exit', r));
    const notes: string[] = [];
    const lock = await LakeLock.tryAcquire(root, { onNote: (n) => notes.push(n) });
    expect(notes.join()).toContain(`took over the lake's lock from pid ${pid} on ${hostname()}`);
    await lock.release();
  });

  it('takes over at once the lock of a killed holder that is a zombie (its parent never reaps it)', async () => {
    const root = lake();
    // sh starts the holder in the background and becomes `sleep`, which never waits for it.
    const h = started(['sh', '-c', `"${process.execPath}" "${HOLDER}" "${root}" & exec sleep 120`]);
    const { pid } = await h.next((s) => s.held === true, 'the holder takes the lock');
    pids.push(pid);
    process.kill(pid, 'SIGKILL');
    await eventually(() => processFacts(pid).state === 'zombie', `/proc/${pid}/stat says Z`);
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toMatch(/\) Z /);
    // What the lock trusted before: kill(pid, 0) succeeds for a zombie.
    expect(() => process.kill(pid, 0)).not.toThrow();
    const notes: string[] = [];
    const lock = await LakeLock.tryAcquire(root, { onNote: (n) => notes.push(n) });
    expect(notes.join()).toMatch(new RegExp(`from pid ${pid} .*: its process ${pid} has exited \\(a zombie not reaped yet\\)`));
    await lock.release();
    // The sleep goes, and with it the zombie (reaped by whoever adopts it).
    h.child.kill('SIGKILL');
  });

  it('takes over the lock of a live holder that stopped renewing (SIGSTOP) once its bound passed; that holder then cannot commit', async () => {
    const root = lake();
    const h = holder(root, { CHAINLAKE_LEASE_SECONDS: '3' });
    const { pid } = await h.next((s) => s.held === true, 'the holder takes the lock');
    h.send('commit');
    await h.next((s) => s.committed === true, 'a commit while the lock is held');
    const state = join(root, '_state', 'fenced');
    expect(existsSync(state)).toBe(true);
    rmSync(state, { recursive: true });
    process.kill(pid, 'SIGSTOP');
    const notes: string[] = [];
    const lock = await LakeLock.acquire(root, { wait: true, onNote: (n) => notes.push(n) });
    expect(notes.join()).toMatch(new RegExp(`from pid ${pid} .*: not renewed for .* \\(its bound is 3 s\\)`));
    // Taken over as silent, not as dead: the holder still runs.
    expect(processFacts(pid).state).toBe('running');
    process.kill(pid, 'SIGCONT');
    h.send('commit');
    const refused = await h.next((s) => s.refused !== undefined, 'the old holder tries to commit');
    expect(refused.refused).toMatch(/lost the lock|could not renew its lock/);
    expect(existsSync(state)).toBe(false);
    await eventually(async () => {
      h.send('status');
      await new Promise((r) => setTimeout(r, 100));
      return h.said.some((s) => s.lost === true);
    }, 'the old holder finds at a renewal that its lock was taken');
    // It did not take the lock back: ours is intact, and our commits go on.
    lock.assertHeld();
    expect(lock.lost).toBe(false);
    await lock.release();
  });

  it('of several processes taking over the same stale lock at once, exactly one wins (repeated)', async () => {
    for (let round = 0; round < 5; round++) {
      const root = lake();
      const backend = new FileLeaseBackend(join(root, '_lock'));
      const long = new Date(Date.now() - 3_600_000).toISOString();
      await backend.create(JSON.stringify({ pid: 1, host: 'elsewhere', since: long, renewed: long, bound: 30_000, token: 'stale', fence: 3 }));
      const barrier = join(root, 'go');
      const racers = Array.from({ length: 4 }, () => holder(root, {}, barrier));
      // All loaded and polling for the barrier before it appears.
      await Promise.all(racers.map((r) => r.next((s) => s.ready === true, 'a racer is ready')));
      writeFileSync(barrier, '');
      const results = await Promise.all(racers.map((r) => r.next((s) => s.held === true || s.refused !== undefined, 'a racer answers')));
      const winners = results.filter((s) => s.held);
      expect(winners, JSON.stringify(results)).toHaveLength(1);
      const winner = winners[0]!.pid;
      for (const s of results.filter((x) => !x.held)) expect(s.refused).toMatch(new RegExp(`in use by another chainlake run \\(pid ${winner} `));
      expect(parseRecord((await backend.read())!.body)).toMatchObject({ pid: winner, fence: 4 });
      for (const r of racers) r.child.kill('SIGKILL');
    }
  });

  it('of several processes replacing the same version of the record on disk at once, exactly one succeeds (repeated)', async () => {
    for (let round = 0; round < 8; round++) {
      const dir = join(lake(), '_lock');
      const backend = new FileLeaseBackend(dir);
      await backend.create('first');
      // Some rounds race over a version that already had successors, whose number is free again.
      if (round % 2) for (let i = 0; i < 3; i++) await backend.replace(`renewal ${i}`, (await backend.read())!.version);
      const version = round % 2 ? '1' : (await backend.read())!.version;
      const newest = (await backend.read())!;
      const barrier = join(dir, '..', 'go');
      const racers = Array.from({ length: 4 }, () => started([process.execPath, RACER, dir, version, barrier]));
      await Promise.all(racers.map((r) => r.next((s) => s.ready === true, 'a racer is ready')));
      writeFileSync(barrier, '');
      const results = await Promise.all(racers.map((r) => r.next((s) => s.replaced !== undefined, 'a racer answers')));
      const winners = results.filter((s) => s.replaced);
      if (round % 2) {
        expect(winners, JSON.stringify(results)).toHaveLength(0);
        expect(await backend.read()).toEqual(newest);
      } else {
        expect(winners, JSON.stringify(results)).toHaveLength(1);
        expect((await backend.read())!.body).toBe(`written by ${winners[0]!.pid}`);
      }
    }
  });
});
