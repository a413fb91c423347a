// The pieces that keep a hostile answer bounded, each on its own: reading a body within bounds on
// the wire and decoded (a loopback server), the nesting bound, Retry-After read within dates and
// timers, a wait over the bound closing the service, long waits told once (fake clock), and which
// addresses an export link may lead to.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { open, readBody, TooLarge, Truncated } from '../../src/sources/http.js';
import { depthOver } from '../../src/sources/client.js';
import { MAX_HEADER_WAIT_MS, RateBudget, retryAfterMs } from '../../src/sources/budget.js';
import { FairScheduler, ServiceClosed, type WaitCause } from '../../src/sources/scheduler.js';
import { FakeClock } from './fake-clock.js';
import { checkLink, isInternal } from '../../src/operations/links.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<URL> {
  server = createServer(handler);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
}

async function get(url: URL, maxBytes: number, decode = true): Promise<Buffer> {
  const signal = new AbortController().signal;
  const { res, answer } = await open(url, { method: 'GET', headers: {}, signal, decode });
  return readBody(res, answer, { maxBytes, decode, signal });
}

describe('reading a body within bounds', () => {
  it('reads a body under the bound whole, gzip decoded', async () => {
    const body = JSON.stringify({ items: Array.from({ length: 100 }, (_, i) => i) });
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(gzipSync(body));
    });
    expect((await get(url, 1 << 20)).toString()).toBe(body);
  });

  it('refuses an announced length over the bound before reading', async () => {
    let written = 0;
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': String(1 << 30) });
      const chunk = Buffer.alloc(1 << 16);
      const more = () => {
        while (written < 1 << 30) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
      };
      res.on('close', () => (written = Infinity));
      more();
    });
    await expect(get(url, 1 << 20)).rejects.toMatchObject({ what: 'announced' });
  });

  it('stops a chunked body at the bound on the wire, and a decoded one at the bound decoded', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(3 << 20, 0x20));
    });
    await expect(get(url, 1 << 20)).rejects.toBeInstanceOf(TooLarge);
    const bomb = gzipSync(Buffer.alloc(64 << 20, 0x20));
    expect(bomb.length).toBeLessThan(1 << 20);
    const url2 = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    await expect(get(url2, 1 << 20)).rejects.toMatchObject({ what: 'decoded' });
  });

  it('keeps a gzip body as sent when asked not to decode', async () => {
    const gz = gzipSync('a,b\n');
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(gz);
    });
    expect((await get(url, 1 << 20, false)).equals(gz)).toBe(true);
  });

  it('a body cut short of its length, or in an encoding not asked for, is an error', async () => {
    const url = await serve((req, res) => {
      if (req.url === '/x') {
        res.writeHead(200, { 'content-length': '100' });
        res.write('{"items":');
        setTimeout(() => res.socket?.destroy(), 10);
      } else {
        res.writeHead(200, { 'content-encoding': 'zstd-of-the-future' });
        res.end('x');
      }
    });
    await expect(get(url, 1 << 20)).rejects.toBeInstanceOf(Truncated);
    await expect(get(new URL('/y', url), 1 << 20)).rejects.toThrow(/content-encoding "zstd-of-the-future", which was not asked for/);
  });
});

describe('nesting', () => {
  it('finds where a text nests deeper than the bound, and ignores brackets inside strings', () => {
    expect(depthOver(Buffer.from('{"a":[[1]],"b":"[[[[[[[[[[[["}'), 3)).toBe(-1);
    expect(depthOver(Buffer.from('[[[[1]]]]'), 3)).toBe(3);
    expect(depthOver(Buffer.from('{"a":"\\"[[[[[["}'), 1)).toBe(-1);
  });
});

describe('Retry-After', () => {
  it('is read within what dates and timers hold, however large', () => {
    const now = Date.UTC(2026, 0, 1);
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('1000000000', now)).toBe(MAX_HEADER_WAIT_MS);
    expect(retryAfterMs('1e300', now)).toBe(MAX_HEADER_WAIT_MS);
    expect(retryAfterMs(new Date(now + 7200_000).toUTCString(), now)).toBe(7200_000);
    expect(retryAfterMs('-5', now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });

  it('over the bound it closes the service: every request fails at once saying until when; under it, it pauses', async () => {
    const clock = new FakeClock(1_000_000);
    const budget = new RateBudget({ maxPauseMs: 300_000 });
    const scheduler = new FairScheduler(budget, clock);
    const g = await scheduler.acquire(1, 'a');
    g.sent();
    g.answer(429, (h) => (h === 'retry-after' ? '60' : null));
    g.finish();
    expect(budget.pausedUntil).toBe(clock.time + 60_000);
    expect(budget.closedUntil).toBe(0);
    clock.time += 60_000;
    const g2 = await scheduler.acquire(1, 'a');
    g2.sent();
    g2.answer(429, (h) => (h === 'retry-after' ? '3600' : null));
    expect(budget.closedUntil).toBe(clock.time + 3_600_000);
    await expect(scheduler.acquire(1, 'b')).rejects.toEqual(new ServiceClosed(clock.time + 3_600_000));
    await expect(scheduler.waitPause()).rejects.toBeInstanceOf(ServiceClosed);
    g2.finish();
  });

  it('a wait longer than 10 s is told once, with its cause and end; a short one is not', async () => {
    const clock = new FakeClock(5_000_000);
    const told: Array<[WaitCause, number]> = [];
    const budget = new RateBudget({ maxPauseMs: 300_000 });
    const scheduler = new FairScheduler(budget, clock, (cause, until) => told.push([cause, until]));
    const answer429 = async (seconds: string) => {
      const g = await scheduler.acquire(1, 'a');
      g.sent();
      g.answer(429, (h) => (h === 'retry-after' ? seconds : null));
      g.finish();
    };
    const waitBriefly = async () => {
      const ac = new AbortController();
      const w = scheduler.waitPause(ac.signal);
      ac.abort(new Error('enough'));
      await w.catch(() => undefined);
    };
    await answer429('5');
    await waitBriefly();
    expect(told).toEqual([]);
    clock.time += 5_000;
    await answer429('45');
    await waitBriefly();
    await waitBriefly();
    expect(told).toEqual([['retry-after', clock.time + 45_000]]);
  });
});

describe('export links', () => {
  it('knows the addresses only this machine or its network reach', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '224.0.0.1'])
      expect(isInternal(a), a).toBe(true);
    for (const a of ['8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:1.1.1.1']) expect(isInternal(a), a).toBe(false);
  });

  it('takes https to a public address, pinned; plain http and loopback only beside a loopback service on the same host, or when allowed', async () => {
    const policy = { service: 'https://glacier-api.avax.network', privateLinks: false, maxBytes: 1 << 30 };
    const pinned = await checkLink(new URL('https://1.1.1.1/file'), policy);
    const got = await new Promise<string>((r) => (pinned as unknown as (h: string, o: object, cb: (e: null, a: string) => void) => void)('evil.example', {}, (_e, a) => r(a)));
    expect(got).toBe('1.1.1.1');
    await expect(checkLink(new URL('http://1.1.1.1/file'), policy)).rejects.toThrow(/not https/);
    await expect(checkLink(new URL('https://127.0.0.1/file'), policy)).rejects.toThrow(/loopback, private or link-local/);
    await expect(checkLink(new URL('https://localhost/file'), policy)).rejects.toThrow(/loopback, private or link-local/);
    const sim = { ...policy, service: 'http://127.0.0.1:8080' };
    await expect(checkLink(new URL('http://127.0.0.1:9000/file'), sim)).resolves.toBeTypeOf('function');
    await expect(checkLink(new URL('http://10.0.0.1/file'), sim)).rejects.toThrow(/not https/);
    await expect(checkLink(new URL('https://10.0.0.1/file'), sim)).rejects.toThrow(/private/);
    await expect(checkLink(new URL('https://10.0.0.1/file'), { ...policy, privateLinks: true })).resolves.toBeTypeOf('function');
  });
});
