import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Reachability } from '../../src/sources/reach.js';
import { Client } from '../../src/sources/client.js';
import { newRequestStats } from '../../src/decl/request.js';
import { ServiceError } from '../../src/errors.js';
import { startSimulator } from '../../src/simulator/server.js';
import { json, scriptedServer, source } from '../helpers.js';
import { FakeClock } from './fake-clock.js';
import { TEXT_CHARS } from '../../src/text.js';

const fast = { minBackoffMs: 5, maxBackoffMs: 20 };

/** A loopback address nothing listens at any more: every connection is refused. */
async function refusedUrl(): Promise<string> {
  const s = await scriptedServer((_req, res) => json(res, 200, {}));
  await s.close();
  return s.url;
}

/** A loopback service that takes every connection and drops it without an answer (a reset, retried). */
async function droppingUrl(): Promise<string> {
  const s = await scriptedServer((_req, res) => res.socket!.destroy());
  const previous = close;
  close = async () => {
    await previous?.();
    await s.close();
  };
  return s.url;
}
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('client retry rules', () => {
  it('retries 429 (honouring retry-after), 5xx, resets and broken JSON, then succeeds', async () => {
    const script = [
      (res: any) => json(res, 429, { message: 'slow down', statusCode: 429 }, { 'retry-after': '0.2' }),
      (res: any) => json(res, 500, { message: 'boom' }),
      (res: any) => json(res, 502, { message: 'bad gateway' }),
      (res: any) => json(res, 503, { message: 'unavailable' }),
      (res: any) => res.socket.destroy(),
      (res: any) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"items": [1, 2');
      },
      (res: any) => json(res, 200, { items: [1, 2, 3] }),
    ];
    const s = await scriptedServer((_req, res, n) => script[n - 1]!(res));
    close = s.close;
    const stats = newRequestStats();
    const clock = new FakeClock();
    const c = new Client('data', source(s.url, { retries: 10 }), { ...fast, clock });
    const t0 = clock.now();
    const body = await clock.run(c.get('/v1/x', { a: '1' }, { endpoint: '/v1/x', stats }));
    expect(body).toEqual({ items: [1, 2, 3] });
    expect(clock.now() - t0).toBeGreaterThanOrEqual(200); // waited out retry-after
    expect(stats.requests).toBe(7);
    expect(stats.retries).toBe(6);
    expect(stats.status429).toBe(1);
    expect(stats.faults).toMatchObject({ '429': 1, '500': 1, '502': 1, '503': 1, network: 1, bad_json: 1 });
  });

  it.each([400, 401, 403, 404])('does not retry %i and quotes the service message and the request', async (status) => {
    const s = await scriptedServer((_req, res) => json(res, status, { message: 'pageSize must be <= 100', error: 'Bad Request', statusCode: status }));
    close = s.close;
    const stats = newRequestStats();
    const c = new Client('data', source(s.url), fast);
    const err: any = await c.get('/v1/chains/1/x', { pageSize: '500' }, { endpoint: '/v1/chains/{chainId}/x', stats }).catch((e) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.message).toContain(`answered ${status}`);
    expect(err.message).toContain('pageSize must be <= 100');
    expect(err.message).toContain('GET /v1/chains/1/x?pageSize=500');
    expect(s.requests.length).toBe(1);
  });

  it('a message of megabytes that echoes the key: cut to the bound saying its length, the key redacted before the cut (no head of it left)', async () => {
    const key = 'sentinel-key-0123456789';
    for (const at of [290, TEXT_CHARS - 30]) {
      const s = await scriptedServer((_req, res) => json(res, 401, { message: 'm'.repeat(at) + key + 'n'.repeat(4 * 1024 * 1024) }));
      const err: any = await new Client('data', source(s.url, { apiKey: key }), fast).get('/v1/k', {}, { endpoint: '/v1/k', stats: newRequestStats() }).catch((e) => e);
      await s.close();
      expect(err.message.length).toBeLessThan(TEXT_CHARS + 200);
      expect(err.message).toMatch(/…\[cut: 4,19\d,\d{3} chars\]$/);
      expect(err.message).not.toContain(key.slice(0, 8));
      if (at === 290) expect(err.message).toContain('[redacted]');
    }
  });

  it('a page token of megabytes in the request: the error quotes the request cut to the bound', async () => {
    const s = await scriptedServer((_req, res) => json(res, 404, { message: 'no such page' }));
    close = s.close;
    const err: any = await new Client('data', source(s.url), fast).get('/v1/k', { pageToken: 't'.repeat(12_000) }, { endpoint: '/v1/k', stats: newRequestStats() }).catch((e) => e);
    expect(err.message).toMatch(/^GET \/v1\/k\?pageToken=t+…\[cut: 12,020 chars\] \(\/v1\/k\): the data service answered 404: no such page$/);
  });

  it('joins the metrics service message list', async () => {
    const s = await scriptedServer((_req, res) => json(res, 400, { message: ['timeInterval must be day', 'x'], error: 'Bad Request', statusCode: 400 }));
    close = s.close;
    const err: any = await new Client('metrics', source(s.url), fast).get('/v2/m', {}, { endpoint: '/v2/m', stats: newRequestStats() }).catch((e) => e);
    expect(err.message).toContain('timeInterval must be day; x');
  });

  it('gives up after bounded retries, naming the endpoint, the tries and the last error', async () => {
    const s = await scriptedServer((_req, res) => json(res, 503, { message: 'down for good' }));
    close = s.close;
    const err: any = await new Client('data', source(s.url, { retries: 3 }), fast).get('/v1/y', {}, { endpoint: '/v1/y', stats: newRequestStats() }).catch((e) => e);
    expect(err.message).toMatch(/GET \/v1\/y \(\/v1\/y on the data service\) failed after 4 tries; last error: .*503 down for good/);
    expect(s.requests.length).toBe(4);
    // A service that answers (even 503) is up: the next request is sent as usual.
    await new Client('data', source(s.url, { retries: 0 }), fast).get('/v1/y', {}, { endpoint: '/v1/y', stats: newRequestStats() }).catch(() => undefined);
    expect(s.requests.length).toBe(5);
  });

  it('a service that answers nothing: once a request has used up its tries, the others fail at once, unsent, saying why', async () => {
    const url = await droppingUrl();
    const origin = new URL(url).origin;
    const c = new Client('data', source(url, { retries: 2 }), fast);
    const stats = newRequestStats();
    const first: any = await c.get('/v1/a', {}, { endpoint: '/v1/a', stats }).catch((e) => e);
    expect(first.message).toMatch(/GET \/v1\/a \(\/v1\/a on the data service\) failed after 3 tries; last error: .*ECONNRESET/);
    const second: any = await c.get('/v1/b', {}, { endpoint: '/v1/b', stats }).catch((e) => e);
    expect(second).toBeInstanceOf(ServiceError);
    expect(second.message).toMatch(new RegExp(`^the data service at ${origin} \\(sources\\.data\\.url\\) answered nothing for \\d+ s, 3 tries of GET /v1/a \\(last error: .*ECONNRESET\\); check that it is up and reachable, then rerun$`));
    expect(stats.requests).toBe(3);
  });

  it("services at one address learn together that it answers nothing: a run's other clients do not send either", async () => {
    const url = await droppingUrl();
    const origin = new URL(url).origin;
    const reach = new Reachability();
    const data = new Client('data', source(url, { retries: 2 }), { ...fast, reach });
    const metrics = new Client('metrics', source(url, { retries: 2 }), { ...fast, reach });
    const stats = newRequestStats();
    const first: any = await data.get('/v1/a', {}, { endpoint: '/v1/a', stats }).catch((e) => e);
    expect(first.message).toMatch(/failed after 3 tries; last error: .*ECONNRESET/);
    const other: any = await metrics.get('/v2/m', {}, { endpoint: '/v2/m', stats }).catch((e) => e);
    expect(other).toBeInstanceOf(ServiceError);
    // Said in the metrics service's name and setting: it is the metrics partition that fails.
    expect(other.message).toMatch(new RegExp(`^the metrics service at ${origin} \\(sources\\.metrics\\.url\\) answered nothing for \\d+ s, 3 tries of GET /v1/a \\(last error: .*ECONNRESET\\); check that it is up and reachable, then rerun$`));
    expect(stats.requests).toBe(3);
    // A client of another run (its own reachability), or at another address, still sends.
    const s2 = await scriptedServer((_req, res) => json(res, 200, { ok: true }));
    close = s2.close;
    const node = new Client('node', source(s2.url, { retries: 2 }), { ...fast, reach });
    expect(await node.get('/ext/x', {}, { endpoint: '/ext/x', stats })).toEqual({ ok: true });
    const later: any = await new Client('data', source(url, { retries: 0 }), fast).get('/v1/a', {}, { endpoint: '/v1/a', stats }).catch((e) => e);
    expect(later.message).toMatch(/failed after 1 tries; last error: .*ECONNRESET/);
    expect(stats.requests).toBe(5);
  });

  it('a request asleep before its next try wakes when the address is found down, and fails saying why', async () => {
    const url = await droppingUrl();
    const origin = new URL(url).origin;
    const reach = new Reachability();
    // Its backoff is ten minutes: without waking it, it would still be asleep when the test times out.
    const slow = new Client('metrics', source(url, { retries: 3 }), { minBackoffMs: 600_000, maxBackoffMs: 600_000, reach });
    const sleeper = newRequestStats();
    const asleep = slow.get('/v2/s', {}, { endpoint: '/v2/s', stats: sleeper }).catch((e) => e);
    while (Object.values(sleeper.faults).reduce((a, b) => a + b, 0) < 1) await new Promise((r) => setTimeout(r, 5));
    const data = new Client('data', source(url, { retries: 1 }), { ...fast, reach });
    const first: any = await data.get('/v1/a', {}, { endpoint: '/v1/a', stats: newRequestStats() }).catch((e) => e);
    expect(first.message).toMatch(/failed after 2 tries; last error: .*ECONNRESET/);
    const woken: any = await asleep;
    expect(woken).toBeInstanceOf(ServiceError);
    expect(woken.message).toMatch(new RegExp(`^GET /v2/s \\(/v2/s on the metrics service\\) stopped after 1 tries \\(last error: .*ECONNRESET.*\\): the metrics service at ${origin} \\(sources\\.metrics\\.url\\) answered nothing for \\d+ s, 2 tries of GET /v1/a .*then rerun$`));
    expect(sleeper.requests).toBe(1);
  });

  it('an address that refuses the connection or does not resolve: no retry, the address and its setting named, every service there told; once it has answered, a refusal is retried', async () => {
    const url = await refusedUrl();
    const origin = new URL(url).origin;
    const reach = new Reachability();
    // Its backoff is ten minutes: a retry would hold the test until it times out.
    const slow = { minBackoffMs: 600_000, maxBackoffMs: 600_000, reach };
    const data = new Client('data', source(url, { retries: 6, urlFrom: '--data-url' }), slow);
    const stats = newRequestStats();
    const refused: any = await data.get('/v1/a', {}, { endpoint: '/v1/a', stats }).catch((e) => e);
    expect(refused).toBeInstanceOf(ServiceError);
    expect(refused.message).toBe(`the data service at ${origin} (--data-url) refused the connection (ECONNREFUSED: nothing listens there); start the service there or correct the URL, then rerun`);
    expect(stats).toMatchObject({ requests: 1, retries: 0 });
    const metrics: any = await new Client('metrics', source(url), slow).get('/v2/m', {}, { endpoint: '/v2/m', stats }).catch((e) => e);
    expect(metrics.message).toBe(`the metrics service at ${origin} (sources.metrics.url) refused the connection (ECONNREFUSED: nothing listens there); start the service there or correct the URL, then rerun`);
    expect(stats.requests).toBe(1);
    const unknown: any = await new Client('node', source('http://chainlake-test.invalid:9650', { retries: 6 }), { ...slow, reach: new Reachability() })
      .get('/ext/info', {}, { endpoint: '/ext/info', stats })
      .catch((e) => e);
    expect(unknown.message).toBe('the node service at http://chainlake-test.invalid:9650 (sources.node.url) does not resolve (ENOTFOUND: no such host name); correct the URL, then rerun');
    expect(stats).toMatchObject({ requests: 2, retries: 0 });
    // At an address that has answered in the run, a refusal is a restart: retried as a reset is.
    const s = await scriptedServer((_req, res) => json(res, 200, { ok: true }));
    const c = new Client('data', source(s.url, { retries: 2 }), fast);
    expect(await c.get('/v1/a', {}, { endpoint: '/v1/a', stats: newRequestStats() })).toEqual({ ok: true });
    await s.close();
    const restarting = newRequestStats();
    const err: any = await c.get('/v1/b', {}, { endpoint: '/v1/b', stats: restarting }).catch((e) => e);
    expect(err.message).toMatch(/failed after 3 tries; last error: .*ECONNREFUSED/);
    expect(restarting).toMatchObject({ requests: 3, retries: 2 });
  });

  it('times out a slow answer and retries it', async () => {
    const s = await scriptedServer((_req, res, n) => (n === 1 ? setTimeout(() => json(res, 200, { items: ['late'] }), 1500) : json(res, 200, { items: ['ok'] })));
    close = s.close;
    const stats = newRequestStats();
    const body = await new Client('data', source(s.url, { timeoutMs: 200 }), fast).get('/v1/z', {}, { endpoint: '/v1/z', stats });
    expect(body).toEqual({ items: ['ok'] });
    expect(stats.faults.timeout).toBe(1);
  });

  it("leaves nothing behind on the run's signal, however many requests it carried", async () => {
    const s = await scriptedServer((_req, res) => json(res, 200, { items: [] }));
    close = s.close;
    const run = new AbortController();
    const c = new Client('data', source(s.url, { concurrency: 8 }), fast);
    // Nor a listener per request while they wait: Node warns past ten on one signal (a line on stderr).
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    await Promise.all(Array.from({ length: 300 }, (_, i) => c.get('/v1/m', { i: String(i) }, { endpoint: '/v1/m', stats: newRequestStats(), signal: run.signal })));
    await new Promise((r) => setImmediate(r));
    process.off('warning', onWarning);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    // Neither a listener nor a dependant signal per request (AbortSignal.any on Node 20 keeps a
    // WeakRef to each in the parent's kDependantSignals set for the parent's life).
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
    const dependants = Object.getOwnPropertySymbols(run.signal).find((k) => k.description === 'kDependantSignals');
    expect(dependants === undefined ? 0 : (run.signal as any)[dependants].size).toBe(0);
  });

  it('without keyHeader, sends the key under both names the service is known by; never to another service', async () => {
    const s = await scriptedServer((_req, res) => json(res, 200, {}));
    close = s.close;
    const c = new Client('data', source(s.url, { apiKey: 'sentinel-key', keyHeader: undefined }), fast);
    await c.get('/v1/k', { a: 'b' }, { endpoint: '/v1/k', stats: newRequestStats() });
    expect(s.requests[0]!.headers['x-glacier-api-key']).toBe('sentinel-key');
    expect(s.requests[0]!.headers['x-data-api-key']).toBe('sentinel-key');
    expect(s.requests[0]!.url).not.toContain('sentinel');
    const m = new Client('metrics', source(s.url, { apiKey: 'sentinel-key', keyHeader: undefined }), fast);
    await m.get('/v2/k', {}, { endpoint: '/v2/k', stats: newRequestStats() });
    expect(JSON.stringify(s.requests[1]!.headers)).not.toContain('sentinel');
  });

  it('against a service that reads one name only: the default is read (its budget headers come), a key pinned under the other is not', async () => {
    const sim = await startSimulator({ seed: 1, apiKeys: ['k'], keyHeader: 'x-glacier-api-key', rateLimit: { data: { cuPerMinute: 6000 } } });
    close = () => sim.close();
    const ask = async (keyHeader: string | undefined) => {
      const c = new Client('data', source(sim.url, { apiKey: 'k', keyHeader }), fast);
      await c.get('/v1/chains', {}, { endpoint: '/v1/chains', stats: newRequestStats(), weight: 1 });
      return c.budgetState();
    };
    expect(await ask(undefined)).toEqual({ source: 'headers', cuPerMinute: 6000, cuPerDay: null });
    expect(await ask('x-glacier-api-key')).toEqual({ source: 'headers', cuPerMinute: 6000, cuPerDay: null });
    // Ignored without a word: an anonymous request, which gets no budget headers.
    expect(await ask('x-data-api-key')).toEqual({ source: 'unknown', cuPerMinute: null, cuPerDay: null });
  });

  it('sends the key only as the configured header, never in the URL', async () => {
    const s = await scriptedServer((_req, res) => json(res, 200, {}));
    close = s.close;
    const c = new Client('data', source(s.url, { apiKey: 'sentinel-key', keyHeader: 'x-glacier-api-key' }), fast);
    await c.get('/v1/k', { a: 'b' }, { endpoint: '/v1/k', stats: newRequestStats() });
    expect(s.requests[0]!.headers['x-glacier-api-key']).toBe('sentinel-key');
    expect(s.requests[0]!.url).not.toContain('sentinel');
    const m = new Client('metrics', source(s.url, { apiKey: 'sentinel-key' }), fast);
    await m.get('/v2/k', {}, { endpoint: '/v2/k', stats: newRequestStats() });
    expect(s.requests[1]!.headers['x-data-api-key']).toBeUndefined();
  });
});

describe('client rate budget', () => {
  it('after a 429, no request to the service goes out before retry-after ends, whichever partition sends it', async () => {
    // Arrivals by the client's clock, which moves only once every request waits on it.
    const clock = new FakeClock();
    let limitedAt = 0;
    const arrivals: number[] = [];
    const s = await scriptedServer((_req, res, n) => {
      arrivals.push(clock.now());
      if (n === 1) {
        limitedAt = clock.now();
        json(res, 429, { message: 'Rate limit exceeded' }, { 'retry-after': '1' });
      } else json(res, 200, { items: [] });
    });
    close = s.close;
    const c = new Client('data', source(s.url, { concurrency: 4 }), { ...fast, clock });
    const firstStats = newRequestStats();
    const first = c.get('/v1/a', {}, { endpoint: '/v1/a', stats: firstStats, weight: 20 });
    // Once the client has read the 429 (not once the server sent it: the others would go out
    // before the client knows, which no client can help).
    await vi.waitFor(() => expect(firstStats.status429).toBe(1), { interval: 1 });
    const others = ['/v1/b', '/v1/c', '/v1/d'].map((p) => c.get(p, {}, { endpoint: p, stats: newRequestStats(), weight: 20 }));
    await clock.run(Promise.all([first, ...others]));
    expect(arrivals).toHaveLength(5);
    for (const t of arrivals.slice(1)) expect(t).toBeGreaterThanOrEqual(limitedAt + 1000);
  });

  it('charges each request its weight: a request beyond the budget waits, and an abort ends the wait without sending it', async () => {
    const s = await scriptedServer((_req, res) => json(res, 200, { items: [] }));
    close = s.close;
    const clock = new FakeClock();
    const c = new Client('data', source(s.url, { cuPerMinute: 100 }), { ...fast, clock });
    expect(c.budgetState()).toEqual({ source: 'pipeline', cuPerMinute: 100, cuPerDay: null });
    await c.get('/v1/a', {}, { endpoint: '/v1/a', stats: newRequestStats(), weight: 60 });
    const ac = new AbortController();
    const stats = newRequestStats();
    const second = c.get('/v1/b', {}, { endpoint: '/v1/b', stats, weight: 60, signal: ac.signal });
    // It waits on the clock for the first claim to be a window past its answer; half a window on, it still does.
    await vi.waitFor(() => expect(clock.next).toBe(clock.now() + 60_000), { interval: 1 });
    await clock.advance(30_000);
    expect(clock.pending).toBe(1);
    expect(stats.requests).toBe(0);
    ac.abort(new Error('run stopped'));
    await expect(second).rejects.toThrow('run stopped');
    expect(s.requests).toHaveLength(1);
    expect(stats.faults).toEqual({});
  });

  it('an abort during a retry-after pause ends the wait', async () => {
    const s = await scriptedServer((_req, res) => json(res, 429, { message: 'Rate limit exceeded' }, { 'retry-after': '30' }));
    close = s.close;
    const ac = new AbortController();
    const clock = new FakeClock();
    const got = new Client('data', source(s.url), { ...fast, clock }).get('/v1/a', {}, { endpoint: '/v1/a', stats: newRequestStats(), signal: ac.signal });
    // The retry waits on the clock for the pause to end.
    await vi.waitFor(() => expect(clock.next).toBe(clock.now() + 30_000), { interval: 1 });
    ac.abort(new Error('run stopped'));
    await expect(got).rejects.toThrow('run stopped');
    expect(s.requests).toHaveLength(1);
  });

  it('takes the budget the service announces', async () => {
    const s = await scriptedServer((_req, res) => json(res, 200, { items: [] }, { 'ratelimit-policy': '5000;w=60, 900000;w=86400', 'ratelimit-limit': '5000', 'ratelimit-remaining': '4980' }));
    close = s.close;
    const c = new Client('data', source(s.url, { apiKey: 'k' }), fast);
    expect(c.budgetState()).toEqual({ source: 'unknown', cuPerMinute: null, cuPerDay: null });
    await c.get('/v1/a', {}, { endpoint: '/v1/a', stats: newRequestStats(), weight: 20 });
    expect(c.budgetState()).toEqual({ source: 'headers', cuPerMinute: 5000, cuPerDay: 900000 });
  });

  it('takes a budget announced per 5 seconds as that many CU per 5 seconds (12 times that a minute)', async () => {
    const s = await scriptedServer((_req, res) => json(res, 200, { items: [] }, { 'ratelimit-policy': '400;w=5', 'ratelimit-limit': '400', 'ratelimit-remaining': '380' }));
    close = s.close;
    const c = new Client('data', source(s.url, { apiKey: 'k' }), fast);
    await c.get('/v1/a', {}, { endpoint: '/v1/a', stats: newRequestStats(), weight: 20 });
    expect(c.budgetState()).toEqual({ source: 'headers', cuPerMinute: 4800, cuPerDay: null });
  });
});

describe('bodies as bytes (GetOptions.bytes, for a bytesSafe stream)', () => {
  it('parses valid UTF-8 without \\u escapes as bytes, anything else as text, and hands over the body as sent', async () => {
    const bodies = [
      Buffer.from('{"name":"Ünïcødé 🏦"}'),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"é"}')]),
      Buffer.from('{"name":"\\u00e9"}'),
      Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff]), Buffer.from('"}')]),
    ];
    const s = await scriptedServer((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(bodies[(n - 1) % bodies.length]);
    });
    close = s.close;
    const c = new Client('data', source(s.url), fast);
    const got: Array<{ name: string; sent: Buffer; asBytes: boolean }> = [];
    for (let i = 0; i < bodies.length; i++) {
      let sent: Buffer = Buffer.alloc(0);
      let asBytes = false;
      const body = (await c.get('/v1/x', {}, { endpoint: '/v1/x', stats: newRequestStats(), bytes: true, onBody: (b, a) => ((sent = b), (asBytes = a)) })) as { name: string };
      got.push({ name: body.name, sent, asBytes });
    }
    expect(got.map((g) => g.asBytes)).toEqual([true, true, false, false]);
    // As bytes, a string is its UTF-8 bytes one char each; written as latin1 it is the same bytes.
    expect(Buffer.from(got[0]!.name, 'latin1').toString('utf8')).toBe('Ünïcødé 🏦');
    expect(got[1]!.name).toBe('\xc3\xa9');
    expect(got[2]!.name).toBe('é');
    expect(got[3]!.name).toBe('\ufffd');
    expect(got[0]!.sent.equals(bodies[0]!)).toBe(true);
    expect(got[1]!.sent.equals(bodies[1]!.subarray(3))).toBe(true); // without the byte order mark
    // Without the option a body is text, as before.
    const text = (await c.get('/v1/x', {}, { endpoint: '/v1/x', stats: newRequestStats() })) as { name: string };
    expect(text.name).toBe('Ünïcødé 🏦');
  });
});
