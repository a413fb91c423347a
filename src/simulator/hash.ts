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
  /**
   * The state before the next `draws` draws, which are skipped: what they would make is a function
   * of it alone, so it keys a memo of what they make.
   */
  skip(draws: number): number {
    const before = this.state >>> 0;
    this.state = (this.state + Math.imul(draws, 0x9e3779b9)) | 0;
    return before;
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

/**
 * The value of `key` in `memo`, made and kept if missing. A Map iterates in insertion order: past
 * `limit` entries the oldest goes, so a long-running simulator's memory stays bounded.
 */
export function memoized<K, V>(memo: Map<K, V>, limit: number, key: K, make: () => V): V {
  let value = memo.get(key);
  if (value === undefined) {
    if (memo.size >= limit) memo.delete(memo.keys().next().value!);
    memo.set(key, (value = make()));
  }
  return value;
}

const LABELS = new Map<string, Buffer>();

/** Seed-independent bytes for identities (contract addresses, node ids) named by a label. */
export function labelBytes(label: string, n: number): Uint8Array {
  // The same labels come back page after page; their digests are kept, and each caller gets a copy.
  const digest = memoized(LABELS, 10_000, label, () => createHash('sha256').update('chainlake-sim:' + label).digest());
  return new Uint8Array(digest.subarray(0, n));
}

const IDENTITIES = new Map<string, string>();

/**
 * encode(labelBytes(label, n)), kept: the encoded form of an identity (a node id, an owner's
 * address) is asked for page after page, and a query matches its addresses against a whole pool
 * of them. A label names one identity, always encoded the same way.
 */
export function labelled(label: string, n: number, encode: (bytes: Uint8Array) => string): string {
  return memoized(IDENTITIES, 20_000, label, () => encode(labelBytes(label, n)));
}

const IDS = new Map<number, string>();

/**
 * The cb58 id of the next 32 bytes of r (a transaction, block or UTXO id), remembered: a listing
 * derives the same ids again for every page and query that shows them (three in four encodings
 * were of bytes encoded before). The bytes are a function of r's state, which keys the memo: a
 * known id costs neither the bytes nor their encoding.
 */
export function id32(r: Rng): string {
  const state = r.skip(8);
  return memoized(IDS, 100_000, state, () => cb58Encode(new Rng(state).bytes(32)));
}
