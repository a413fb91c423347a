// Deterministic hashing and a small PRNG. Every simulated item is a pure function of
// (seed, partition, index), so any item can be produced without producing the ones before it.
import { createHash } from 'node:crypto';
import { cb58Encode } from '../ids.js';

/** murmur3 finaliser: good avalanche for 32-bit keys. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

function mixString(h: number, s: string): number {
  // FNV-1a over UTF-16 code units, seeded with the running hash.
  let x = (h ^ 0x811c9dc5) >>> 0;
  for (let i = 0; i < s.length; i++) {
    x ^= s.charCodeAt(i);
    x = Math.imul(x, 0x01000193);
  }
  return mix32(x ^ s.length);
}

function mixNumber(h: number, n: number): number {
  // Numbers may exceed 32 bits (block numbers, timestamps in ms); fold both halves in.
  const lo = n >>> 0;
  const hi = Math.floor(n / 0x1_0000_0000) >>> 0;
  return mix32((h ^ mix32(lo + 0x9e3779b9)) + Math.imul(hi, 0x27d4eb2f));
}

/** 32-bit hash of a seed and a key path. */
export function hashKey(seed: number, ...parts: ReadonlyArray<string | number>): number {
  let h = mix32((seed >>> 0) ^ 0x9e3779b9);
  for (const p of parts) h = typeof p === 'number' ? mixNumber(h, p) : mixString(h, p);
  return h;
}

/** splitmix32 stream; cheap enough to create one per generated item. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  static of(seed: number, ...parts: ReadonlyArray<string | number>): Rng {
    return new Rng(hashKey(seed, ...parts));
  }
  next(): number {
    this.state = (this.state + 0x9e3779b9) | 0;
    let t = this.state ^ (this.state >>> 16);
    t = Math.imul(t, 0x21f0aaad);
    t ^= t >>> 15;
    t = Math.imul(t, 0x735a2d97);
    return (t ^ (t >>> 15)) >>> 0;
  }
  /** [0, 1) */
  float(): number {
    return this.next() / 0x1_0000_0000;
  }
  /** integer in [0, n) for n up to 2^53. */
  int(n: number): number {
    if (n <= 0x1_0000_0000) return Math.floor(this.float() * n);
    return Math.floor((this.next() * 0x1_0000_0000 + this.next()) / 2 ** 64 * n);
  }
  /** integer in [lo, hi] */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.float() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  /** Uniform-ish bigint in [0, n); n > 0. */
  bigBelow(n: bigint): bigint {
    const bits = n.toString(2).length + 32;
    let v = 0n;
    for (let b = 0; b < bits; b += 32) v = (v << 32n) | BigInt(this.next());
    return v % n;
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 4) {
      const w = this.next();
      for (let j = 0; j < 4 && i + j < n; j++) out[i + j] = (w >>> (8 * j)) & 0xff;
    }
    return out;
  }
  hex(nBytes: number): string {
    return toHex(this.bytes(nBytes));
  }
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Seed-independent bytes for identities (contract addresses, node ids) named by a label. */
export function labelBytes(label: string, n: number): Uint8Array {
  return new Uint8Array(createHash('sha256').update('chainlake-sim:' + label).digest().subarray(0, n));
}

const IDS = new Map<string, string>();

/**
 * The cb58 id of the next 32 bytes of r (a transaction, block or UTXO id), remembered: a listing
 * derives the same ids again for every page and query that shows them (three in four encodings
 * were of bytes encoded before).
 */
export function id32(r: Rng): string {
  const bytes = r.bytes(32);
  const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  let id = IDS.get(key);
  if (id === undefined) {
    // Bounded: a long-running simulator forgets and starts again rather than grow.
    if (IDS.size >= 100_000) IDS.clear();
    IDS.set(key, (id = cb58Encode(bytes)));
  }
  return id;
}
