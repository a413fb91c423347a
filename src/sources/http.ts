// One HTTP exchange with a service that is not trusted, on node:http rather than fetch: fetch
// follows redirects with every header but `authorization` and `cookie` (the API key went to
// whatever host a 301 named), decodes gzip and brotli before a byte can be counted, and reads a
// body whole. Here nothing is followed (the caller decides, see client.ts), the body is counted on
// the wire and again decoded, and reading stops at the bound. Decoding runs in zlib's streams, a
// chunk at a time off the main thread, so a compression bomb never blocks the event loop.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { bounded } from '../text.js';

/** Kept-alive connections, one pool per scheme for the process (idle sockets do not hold it open). */
const AGENTS = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) } as const;

/**
 * Bytes of bodies being read at once, across every exchange of the process: one response is bounded
 * by its own limit, many at once (16 chunks, 64 requests in flight) by this. Legitimate pages are
 * a small fraction of it together; an exchange that would pass it fails and is retried.
 */
export const POOL_BYTES = 32 * 1024 * 1024;
let pooled = 0;

/** A body over its bound: `what` tells whether it was announced, sent, or decoded that large. */
export class TooLarge extends Error {
  constructor(
    readonly limit: number,
    readonly what: 'announced' | 'wire' | 'decoded' | 'pool',
  ) {
    super(
      what === 'pool'
        ? `the bodies being read at once passed ${mib(POOL_BYTES)} (the process's bound)`
        : `the body ${what === 'announced' ? 'announced (content-length) is' : what === 'wire' ? 'sent is' : 'decoded is'} over ${mib(limit)}, the bound on one answer`,
    );
  }
}

/** A body that ended before its announced length or broke off. */
export class Truncated extends Error {}

export function mib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${+(bytes / 1024 / 1024).toFixed(1)} MiB` : `${bytes} bytes`;
}

export interface ExchangeOptions {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** Bound on the body, on the wire and decoded. */
  maxBytes: number;
  /** Decode a gzip, deflate or brotli body (asked with accept-encoding); off, it is kept as sent. */
  decode: boolean;
  /** Pins the address a host resolves to (a download checked before it connects). */
  lookup?: LookupFunction;
}

export interface Answer {
  status: number;
  header(name: string): string | null;
}

export interface Exchange extends Answer {
  body: Buffer;
}

function answerOf(res: http.IncomingMessage): Answer {
  return {
    status: res.statusCode ?? 0,
    header: (name) => {
      const v = res.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

/** Sends the request; resolves with the answer's head and its raw body stream. */
export function open(url: URL, o: Omit<ExchangeOptions, 'maxBytes' | 'decode'> & { decode?: boolean }): Promise<{ res: http.IncomingMessage; answer: Answer }> {
  const lib = url.protocol === 'https:' ? https : http;
  const headers: Record<string, string> = { ...o.headers };
  headers['accept-encoding'] = o.decode ? 'gzip, deflate, br' : 'identity';
  if (o.body !== undefined) headers['content-length'] = String(Buffer.byteLength(o.body));
  return new Promise((resolve, reject) => {
    const req = lib.request(
      url,
      { method: o.method, headers, signal: o.signal, agent: AGENTS[url.protocol as 'http:' | 'https:'], ...(o.lookup ? { lookup: o.lookup } : {}) },
      (res) => resolve({ res, answer: answerOf(res) }),
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/** The decoder of a content-encoding, null for none; throws for one chainlake did not ask for. */
function decoderOf(encoding: string | null): ReturnType<typeof createGunzip> | null {
  const e = (encoding ?? '').trim().toLowerCase();
  if (e === '' || e === 'identity') return null;
  if (e === 'gzip' || e === 'x-gzip') return createGunzip();
  if (e === 'deflate') return createInflate();
  if (e === 'br') return createBrotliDecompress();
  throw new Truncated(`the body is in content-encoding ${JSON.stringify(bounded(e, 40))}, which was not asked for`);
}

/**
 * Reads a body to its end within `maxBytes` on the wire and decoded, or fails (TooLarge,
 * Truncated, the signal's abort) having destroyed the stream: nothing past the bound is read.
 */
export function readBody(res: http.IncomingMessage, answer: Answer, o: Pick<ExchangeOptions, 'maxBytes' | 'decode' | 'signal'>): Promise<Buffer> {
  const announced = answer.header('content-length');
  if (announced !== null && Number(announced) > o.maxBytes) {
    res.destroy();
    return Promise.reject(new TooLarge(o.maxBytes, 'announced'));
  }
  let decoder: ReturnType<typeof createGunzip> | null;
  try {
    decoder = o.decode ? decoderOf(answer.header('content-encoding')) : null;
  } catch (err) {
    res.destroy();
    return Promise.reject(err);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let wire = 0;
    let held = 0;
    let settled = false;
    const finish = (err: Error | null) => {
      if (settled) return;
      settled = true;
      pooled -= held;
      o.signal.removeEventListener('abort', onAbort);
      if (err) {
        res.destroy();
        decoder?.destroy();
        reject(err);
      } else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onAbort = () => finish(o.signal.reason instanceof Error ? o.signal.reason : new Error(String(o.signal.reason)));
    o.signal.addEventListener('abort', onAbort, { once: true });
    const keep = (chunk: Buffer, kind: 'wire' | 'decoded') => {
      if (settled) return;
      if (held + chunk.length > o.maxBytes) return finish(new TooLarge(o.maxBytes, kind));
      if (pooled + chunk.length > POOL_BYTES) return finish(new TooLarge(o.maxBytes, 'pool'));
      held += chunk.length;
      pooled += chunk.length;
      chunks.push(chunk);
    };
    res.on('data', (chunk: Buffer) => {
      if (settled) return;
      wire += chunk.length;
      if (!decoder) return keep(chunk, 'wire');
      if (wire > o.maxBytes) return finish(new TooLarge(o.maxBytes, 'wire'));
      decoder.write(chunk);
    });
    res.on('error', (err) => finish(new Truncated(`the body broke off after ${wire} bytes (${(err as NodeJS.ErrnoException).code ?? err.message})`)));
    res.on('end', () => {
      if (!res.complete || (announced !== null && wire < Number(announced))) return finish(new Truncated(`the body ended after ${wire} of ${announced ?? 'its'} bytes`));
      if (decoder) decoder.end();
      else finish(null);
    });
    if (decoder) {
      decoder.on('data', (chunk: Buffer) => keep(chunk, 'decoded'));
      decoder.on('error', (err) => finish(new Truncated(`the ${bounded(answer.header('content-encoding') ?? '')} body does not decode (${err.message})`)));
      decoder.on('end', () => finish(null));
    }
  });
}
