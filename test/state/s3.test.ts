// The object-storage side of the state stage against a real S3-compatible server (s3rver on
// loopback): the store's operations, the probe of conditional writes and the lock object on a
// server that ignores them and behind a proxy that honours them as AWS does, and the commit
// protocol without rename, cut between the state write and the copies, then rolled forward.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeConditional, S3LeaseBackend, S3Objects } from '../../src/state/s3.js';
import { LakeLock } from '../../src/state/lock.js';
import { StateStore } from '../../src/state/store.js';
import { readableLake, readFolder } from '../../src/state/cache.js';
import { LockHeld } from '../../src/state/lock.js';
import { BUCKET, s3Env, s3Proxy, startS3, useEnv, type S3Server } from '../s3-fixture.js';

let s3: S3Server;
let restore: () => void;
let proxy: Awaited<ReturnType<typeof s3Proxy>>;
let n = 0;
const lakeUrl = () => `s3://${BUCKET}/unit-${++n}`;

beforeAll(async () => {
  s3 = await startS3();
  restore = useEnv(s3Env(s3.endpoint));
  proxy = await s3Proxy(s3.endpoint, { conditional: true });
});

afterAll(async () => {
  restore?.();
  await proxy?.close();
  await s3?.close();
});

/** Runs `f` with the client pointed at the conditional proxy. */
async function viaProxy<T>(f: () => Promise<T>): Promise<T> {
  const back = useEnv({ AWS_ENDPOINT_URL_S3: proxy.url });
  try {
    return await f();
  } finally {
    back();
  }
}

describe('S3 objects', () => {
  it('puts, gets, lists, moves (copy then delete) and deletes; a large file goes up in parts and comes back whole', async () => {
    const o = await S3Objects.open(lakeUrl());
    const etag = await o.put('t/chain=1/a.json', '{"a":1}');
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect((await o.get('t/chain=1/a.json'))!.body.toString()).toBe('{"a":1}');
    expect(await o.get('t/none.json')).toBeUndefined();
    // A hive folder's '=' survives the server-side copy.
    expect(await o.move('t/chain=1/a.json', 'u/chain=1/a.json')).toBe(etag);
    expect((await o.list('t/')).map((x) => x.key)).toEqual([]);
    expect((await o.list('u/')).map((x) => x.key)).toEqual(['u/chain=1/a.json']);
    // Moving again (a roll-forward) is no error when the target is there; a lost source is one.
    expect(await o.move('t/chain=1/a.json', 'u/chain=1/a.json')).toBeUndefined();
    await expect(o.move('t/lost.json', 'u/lost.json')).rejects.toThrow(/copy to u\/lost\.json failed/);
    const big = join(mkdtempSync(join(tmpdir(), 'cl-big-')), 'big.bin');
    const bytes = Buffer.alloc(17 * 1024 * 1024 + 123);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i % 251;
    writeFileSync(big, bytes);
    await o.upload('big.bin', big);
    const back = `${big}.back`;
    expect(await o.download('big.bin', back)).toBeDefined();
    expect(readFileSync(back).equals(bytes)).toBe(true);
    expect((await o.head('big.bin'))!.size).toBe(bytes.length);
    await o.delete('big.bin');
    await o.delete('big.bin');
    expect(await o.head('big.bin')).toBeUndefined();
  });

  it('a missing bucket is a usage error naming it; a malformed URL too', async () => {
    await expect(S3Objects.open('s3://no-such-bucket/x')).rejects.toThrow(/the bucket no-such-bucket does not exist/);
    await expect(S3Objects.open('s3://a/x')).rejects.toThrow(/is not a bucket name/);
    await expect(S3Objects.open('s3://bucket/a//b')).rejects.toThrow(/empty, \. or \.\. part/);
  });
});

describe('the lock object', () => {
  it('s3rver ignores If-None-Match: the probe says so; the proxy honours it as AWS does (412)', async () => {
    expect(await probeConditional(await S3Objects.open(lakeUrl()), '_lock')).toBe(false);
    const refusedBefore = proxy.refused;
    expect(await viaProxy(async () => probeConditional(await S3Objects.open(lakeUrl()), '_lock'))).toBe(true);
    expect(proxy.refused).toBe(refusedBefore + 1);
  });

  it('with conditions: create once, replace and remove only the version read', async () => {
    await viaProxy(async () => {
      const b = await S3LeaseBackend.open(await S3Objects.open(lakeUrl()));
      expect(b.conditional).toBe(true);
      expect(b.where).toMatch(/^s3:\/\/lakes\/unit-\d+\/_lock$/);
      expect(await b.create('one')).toBe(true);
      expect(await b.create('two')).toBe(false);
      const v1 = (await b.read())!;
      expect(v1.body).toBe('one');
      expect(await b.replace('three', '"0123456789abcdef0123456789abcdef"')).toBe(false);
      expect(await b.replace('three', v1.version)).toBe(true);
      expect(await b.remove(v1.version)).toBe(false);
      const v2 = (await b.read())!;
      expect(v2.body).toBe('three');
      expect(await b.remove(v2.version)).toBe(true);
      expect(await b.read()).toBeUndefined();
    });
  });

  it('without conditions (s3rver): the fallback still refuses a second create', async () => {
    const b = await S3LeaseBackend.open(await S3Objects.open(lakeUrl()));
    expect(b.conditional).toBe(false);
    expect(await b.create('one')).toBe(true);
    expect(await b.create('two')).toBe(false);
    const v = (await b.read())!;
    expect(await b.replace('x', '"nope"')).toBe(false);
    expect(await b.remove(v.version)).toBe(true);
  });

  // The lease over the store (src/state/lease.ts); the holders written here are of the older form, {pid, host, since}, held while their process lives.
  it('refuses a second writer, takes over a dead holder of this host, refuses one of another host', async () => {
    for (const conditional of [true, false]) {
      const run = async () => {
        const url = lakeUrl();
        const b = await S3LeaseBackend.open(await S3Objects.open(url));
        expect(b.conditional).toBe(conditional);
        const first = await LakeLock.acquire(url, { backend: b });
        await expect(LakeLock.acquire(url, { backend: b })).rejects.toBeInstanceOf(LockHeld);
        await first.release();
        expect(await b.read()).toBeUndefined();
        // A holder whose process is gone: a child that has exited.
        const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
        await b.create(JSON.stringify({ pid: Number(dead), host: hostname(), since: 'then' }));
        const taken = await LakeLock.acquire(url, { backend: b });
        expect(JSON.parse((await b.read())!.body).pid).toBe(process.pid);
        await taken.release();
        await b.create(JSON.stringify({ pid: Number(dead), host: 'another-host', since: 'then' }));
        await expect(LakeLock.acquire(url, { backend: b })).rejects.toThrow(/in use by another chainlake run \(pid \d+ on another-host/);
      };
      await (conditional ? viaProxy(run) : run());
    }
  });
});

describe('the commit protocol without rename', () => {
  it('a commit cut between the state write and the copies is rolled forward; listings show committed files only', async () => {
    const url = lakeUrl();
    const store = await StateStore.open(url);
    await store.recover();
    const write = (name: string, text: string) => {
      const dir = store.stagingDir('t', 'p');
      const f = join(dir, 'data', 'chain=1', name);
      mkdirp(f);
      writeFileSync(f, text);
      return f;
    };
    let s = await store.commit({ ...store.load('t', 'p'), files: ['t/chain=1/a.parquet'], rows: 1 }, [[write('a.parquet', 'A'), 't/chain=1/a.parquet']]);
    const objects = store.objects as S3Objects;
    expect((await objects.list('t/')).map((x) => x.key)).toEqual(['t/chain=1/a.parquet']);
    expect((await objects.list('_staging/')).length).toBe(0);
    // The process dies after the state names b (and drops a) but before any copy.
    const move = objects.move.bind(objects);
    objects.move = async () => {
      throw new Error('killed');
    };
    await expect(store.commit({ ...s, files: ['t/chain=1/b.parquet'], rows: 2 }, [[write('b.parquet', 'BB'), 't/chain=1/b.parquet']], ['t/chain=1/a.parquet'])).rejects.toThrow('killed');
    objects.move = move;
    const state = JSON.parse((await objects.get('_state/t/' + readdirState(store)))!.body.toString());
    expect(state.pending.moves).toEqual([[expect.stringMatching(/^_staging\/t\/.*\/data\/chain=1\/b\.parquet$/), 't/chain=1/b.parquet']]);
    // A lister of the table sees only committed files: a, which the old state lists and the new one is about to delete.
    expect((await objects.list('t/')).map((x) => x.key)).toEqual(['t/chain=1/a.parquet']);
    // A reader meanwhile reads the new state whole: b from its staging key, a no longer.
    const read = await readableLake(url);
    expect(existsSync(join(read, 't/chain=1/b.parquet'))).toBe(true);
    expect(readFileSync(join(read, 't/chain=1/b.parquet'), 'utf8')).toBe('BB');
    expect(existsSync(join(read, 't/chain=1/a.parquet'))).toBe(false);
    // The next writer rolls it forward.
    const next = await StateStore.open(url);
    expect((await next.recover()).rolledForward).toBe(1);
    expect((await objects.list('t/')).map((x) => x.key)).toEqual(['t/chain=1/b.parquet']);
    expect((await objects.list('_staging/')).length).toBe(0);
    expect((await objects.get('t/chain=1/b.parquet'))!.body.toString()).toBe('BB');
    s = next.load('t', 'p');
    expect(s.pending).toBeUndefined();
    expect(s.files).toEqual(['t/chain=1/b.parquet']);
    expect(await next.local(s.files)).toEqual([next.path('t/chain=1/b.parquet')]);
  });
});

describe('the read cache', () => {
  /** A lake of one partition whose state lists one object of `mb` megabytes. */
  async function lakeOf(mb: number, name = 'big.bin'): Promise<string> {
    const url = lakeUrl();
    const o = await S3Objects.open(url);
    await o.put(`t/${name}`, Buffer.alloc(mb * 1024 * 1024, 7));
    await o.put('_state/t/p.json', JSON.stringify({ table: 't', partition: 'p', files: [`t/${name}`], rows: 1, rejects: 0, cursor: {} }));
    return url;
  }

  it('copies what the states list, drops what they no longer list, refuses a lake over the bound and evicts other lakes first', async () => {
    const back = useEnv({ CHAINLAKE_CACHE: mkdtempSync(join(tmpdir(), 'cl-cache-')), CHAINLAKE_CACHE_MB: '1' });
    try {
      const a = await lakeOf(2);
      await expect(readableLake(a)).rejects.toThrow(/its committed files take 2 MB, more than the read cache's bound of 1 MB: raise CHAINLAKE_CACHE_MB/);
      process.env.CHAINLAKE_CACHE_MB = '3';
      const dirA = await readableLake(a);
      expect(dirA).toBe(readFolder(a));
      expect(readFileSync(join(dirA, 't/big.bin')).length).toBe(2 * 1024 * 1024);
      // A new commit names another file: the old copy goes, the new one comes.
      const o = await S3Objects.open(a);
      await o.put('t/small.bin', 'x');
      await o.put('_state/t/p.json', JSON.stringify({ table: 't', partition: 'p', files: ['t/small.bin'], rows: 1, rejects: 0, cursor: {} }));
      await readableLake(a);
      expect(existsSync(join(dirA, 't/big.bin'))).toBe(false);
      expect(readFileSync(join(dirA, 't/small.bin'), 'utf8')).toBe('x');
      // Two lakes of 2 MB do not fit in 3: reading the second evicts the copies read before it, oldest first.
      const b = await lakeOf(2);
      const dirB = await readableLake(b);
      expect(existsSync(dirA) && existsSync(dirB)).toBe(true);
      const c = await lakeOf(2);
      const dirC = await readableLake(c);
      expect(existsSync(dirB)).toBe(false);
      expect(existsSync(dirA)).toBe(false);
      expect(readFileSync(join(dirC, 't/big.bin')).length).toBe(2 * 1024 * 1024);
    } finally {
      back();
    }
  });
});

function mkdirp(file: string): void {
  mkdirSync(join(file, '..'), { recursive: true });
}

function readdirState(store: StateStore): string {
  return readdirSync(join(store.root, '_state', 't'))[0]!;
}

describe('the test store', () => {
  // s3rver wrote objects in place: a PUT cut off by a killed writer left the object truncated,
  // and a reader got the part with a Content-Length to match (a queued run on S3 with killed
  // workers then failed parsing an empty state). S3 keeps the old object; s3-fixture.ts makes
  // s3rver do the same.
  it("keeps S3's atomic PUT: a PUT cut off midway leaves the old object whole", async () => {
    const url = lakeUrl();
    const o = await S3Objects.open(url);
    const old = JSON.stringify({ whole: 'x'.repeat(50) });
    await o.put('_state/p.json', old);
    // A writer killed mid-PUT: its headers promise 6,000 bytes, 5 arrive, the connection drops.
    // (s3rver does not check signatures, so the request needs none.)
    const path = `/${BUCKET}/${url.slice(`s3://${BUCKET}/`.length)}/_state/p.json`;
    await new Promise<void>((resolve) => {
      const req = request(`${s3.endpoint}${path}`, { method: 'PUT', headers: { 'content-length': 6000 } });
      req.on('error', () => resolve());
      req.write('{"cut', () => setTimeout(() => req.destroy(), 100));
    });
    expect((await o.get('_state/p.json'))!.body.toString()).toBe(old);
  });
});
