// Keccak-256 (the pre-SHA3 padding Ethereum uses; node:crypto only has SHA3) so that simulated
// EVM addresses carry real EIP-55 checksums and a strict client can verify them.

const RC: ReadonlyArray<readonly [number, number]> = [
  [0x00000001, 0x00000000], [0x00008082, 0x00000000], [0x0000808a, 0x80000000], [0x80008000, 0x80000000],
  [0x0000808b, 0x00000000], [0x80000001, 0x00000000], [0x80008081, 0x80000000], [0x00008009, 0x80000000],
  [0x0000008a, 0x00000000], [0x00000088, 0x00000000], [0x80008009, 0x00000000], [0x8000000a, 0x00000000],
  [0x8000808b, 0x00000000], [0x0000008b, 0x80000000], [0x00008089, 0x80000000], [0x00008003, 0x80000000],
  [0x00008002, 0x80000000], [0x00000080, 0x80000000], [0x0000800a, 0x00000000], [0x8000000a, 0x80000000],
  [0x80008081, 0x80000000], [0x00008080, 0x80000000], [0x80000001, 0x00000000], [0x80008008, 0x80000000],
];

// Rotation offsets indexed by lane x + 5y.
const ROT = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14];

function rotl(lo: number, hi: number, n: number): [number, number] {
  if (n === 0) return [lo, hi];
  if (n === 32) return [hi, lo];
  if (n < 32) return [((lo << n) | (hi >>> (32 - n))) >>> 0, ((hi << n) | (lo >>> (32 - n))) >>> 0];
  const m = n - 32;
  return [((hi << m) | (lo >>> (32 - m))) >>> 0, ((lo << m) | (hi >>> (32 - m))) >>> 0];
}

function permute(s: Uint32Array): void {
  const cLo = new Uint32Array(5);
  const cHi = new Uint32Array(5);
  const bLo = new Uint32Array(25);
  const bHi = new Uint32Array(25);
  for (let round = 0; round < 24; round++) {
    for (let x = 0; x < 5; x++) {
      cLo[x] = s[2 * x]! ^ s[2 * (x + 5)]! ^ s[2 * (x + 10)]! ^ s[2 * (x + 15)]! ^ s[2 * (x + 20)]!;
      cHi[x] = s[2 * x + 1]! ^ s[2 * (x + 5) + 1]! ^ s[2 * (x + 10) + 1]! ^ s[2 * (x + 15) + 1]! ^ s[2 * (x + 20) + 1]!;
    }
    for (let x = 0; x < 5; x++) {
      const [rLo, rHi] = rotl(cLo[(x + 1) % 5]!, cHi[(x + 1) % 5]!, 1);
      const dLo = cLo[(x + 4) % 5]! ^ rLo;
      const dHi = cHi[(x + 4) % 5]! ^ rHi;
      for (let y = 0; y < 5; y++) {
        s[2 * (x + 5 * y)]! ^= dLo;
        s[2 * (x + 5 * y) + 1]! ^= dHi;
      }
    }
    for (let x = 0; x < 5; x++) {
      for (let y = 0; y < 5; y++) {
        const i = x + 5 * y;
        const j = y + 5 * ((2 * x + 3 * y) % 5);
        const [lo, hi] = rotl(s[2 * i]!, s[2 * i + 1]!, ROT[i]!);
        bLo[j] = lo;
        bHi[j] = hi;
      }
    }
    for (let y = 0; y < 5; y++) {
      for (let x = 0; x < 5; x++) {
        const i = x + 5 * y;
        const i1 = ((x + 1) % 5) + 5 * y;
        const i2 = ((x + 2) % 5) + 5 * y;
        s[2 * i] = bLo[i]! ^ (~bLo[i1]! & bLo[i2]!);
        s[2 * i + 1] = bHi[i]! ^ (~bHi[i1]! & bHi[i2]!);
      }
    }
    s[0]! ^= RC[round]![0];
    s[1]! ^= RC[round]![1];
  }
}

export function keccak256(data: Uint8Array): Uint8Array {
  const rate = 136;
  const s = new Uint32Array(50);
  const padded = new Uint8Array(Math.ceil((data.length + 1) / rate) * rate);
  padded.set(data);
  padded[data.length]! |= 0x01;
  padded[padded.length - 1]! |= 0x80;
  for (let off = 0; off < padded.length; off += rate) {
    for (let w = 0; w < rate / 4; w++) {
      const b = off + 4 * w;
      s[w]! ^= (padded[b]! | (padded[b + 1]! << 8) | (padded[b + 2]! << 16) | (padded[b + 3]! << 24)) >>> 0;
    }
    permute(s);
  }
  const out = new Uint8Array(32);
  for (let w = 0; w < 8; w++) for (let j = 0; j < 4; j++) out[4 * w + j] = (s[w]! >>> (8 * j)) & 0xff;
  return out;
}

/** EIP-55 mixed-case form of 20 address bytes. */
export function checksumAddress(bytes20: Uint8Array): string {
  const lower = Buffer.from(bytes20).toString('hex');
  const hash = keccak256(new TextEncoder().encode(lower));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const c = lower[i]!;
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0xf;
    out += c >= 'a' && nibble >= 8 ? c.toUpperCase() : c;
  }
  return out;
}
