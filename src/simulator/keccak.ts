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
// For lane i (x + 5y): where rho-pi puts it (y + 5((2x + 3y) mod 5)), and its neighbours in chi.
const PI = ROT.map((_, i) => Math.floor(i / 5) + 5 * ((2 * (i % 5) + 3 * Math.floor(i / 5)) % 5));
const RC_LO = RC.map(([lo]) => lo);
const RC_HI = RC.map(([, hi]) => hi);

// Lanes are 64-bit words kept as two 32-bit halves (lo at 2i, hi at 2i + 1); the halves of a
// rotation are computed apart so that the permutation allocates nothing (the simulator checksums
// every address it makes, and a run asks for many).
const rotLo = (lo: number, hi: number, n: number) => (n === 0 ? lo : n < 32 ? (lo << n) | (hi >>> (32 - n)) : n === 32 ? hi : (hi << (n - 32)) | (lo >>> (64 - n)));
const rotHi = (lo: number, hi: number, n: number) => (n === 0 ? hi : n < 32 ? (hi << n) | (lo >>> (32 - n)) : n === 32 ? lo : (lo << (n - 32)) | (hi >>> (64 - n)));

const C = new Int32Array(10);
const B = new Int32Array(50);

function permute(s: Int32Array): void {
  for (let round = 0; round < 24; round++) {
    for (let x = 0; x < 5; x++) {
      C[2 * x] = s[2 * x]! ^ s[2 * x + 10]! ^ s[2 * x + 20]! ^ s[2 * x + 30]! ^ s[2 * x + 40]!;
      C[2 * x + 1] = s[2 * x + 1]! ^ s[2 * x + 11]! ^ s[2 * x + 21]! ^ s[2 * x + 31]! ^ s[2 * x + 41]!;
    }
    for (let x = 0; x < 5; x++) {
      const a = 2 * ((x + 1) % 5);
      const b = 2 * ((x + 4) % 5);
      const dLo = C[b]! ^ rotLo(C[a]!, C[a + 1]!, 1);
      const dHi = C[b + 1]! ^ rotHi(C[a]!, C[a + 1]!, 1);
      for (let y = 0; y < 50; y += 10) {
        s[2 * x + y]! ^= dLo;
        s[2 * x + y + 1]! ^= dHi;
      }
    }
    for (let i = 0; i < 25; i++) {
      const lo = s[2 * i]!;
      const hi = s[2 * i + 1]!;
      const j = PI[i]!;
      B[2 * j] = rotLo(lo, hi, ROT[i]!);
      B[2 * j + 1] = rotHi(lo, hi, ROT[i]!);
    }
    for (let y = 0; y < 25; y += 5) {
      for (let x = 0; x < 5; x++) {
        const i = 2 * (x + y);
        const i1 = 2 * (((x + 1) % 5) + y);
        const i2 = 2 * (((x + 2) % 5) + y);
        s[i] = B[i]! ^ (~B[i1]! & B[i2]!);
        s[i + 1] = B[i + 1]! ^ (~B[i1 + 1]! & B[i2 + 1]!);
      }
    }
    s[0]! ^= RC_LO[round]!;
    s[1]! ^= RC_HI[round]!;
  }
}

export function keccak256(data: Uint8Array): Uint8Array {
  const rate = 136;
  const s = new Int32Array(50);
  const padded = new Uint8Array(Math.ceil((data.length + 1) / rate) * rate);
  padded.set(data);
  padded[data.length]! |= 0x01;
  padded[padded.length - 1]! |= 0x80;
  for (let off = 0; off < padded.length; off += rate) {
    for (let w = 0; w < rate / 4; w++) {
      const b = off + 4 * w;
      s[w]! ^= padded[b]! | (padded[b + 1]! << 8) | (padded[b + 2]! << 16) | (padded[b + 3]! << 24);
    }
    permute(s);
  }
  const out = new Uint8Array(32);
  for (let w = 0; w < 8; w++) for (let j = 0; j < 4; j++) out[4 * w + j] = (s[w]! >>> (8 * j)) & 0xff;
  return out;
}

// The simulator derives its wallets and contracts from labels and makes the same ones page after
// page: their checksums are kept (a bounded map, emptied when full).
const checksums = new Map<string, string>();
const CHECKSUMS_KEPT = 65_536;

/** EIP-55 mixed-case form of 20 address bytes. */
export function checksumAddress(bytes20: Uint8Array): string {
  const lower = Buffer.from(bytes20).toString('hex');
  const known = checksums.get(lower);
  if (known !== undefined) return known;
  if (checksums.size >= CHECKSUMS_KEPT) checksums.clear();
  const out = mixedCase(lower);
  checksums.set(lower, out);
  return out;
}

function mixedCase(lower: string): string {
  const hash = keccak256(new TextEncoder().encode(lower));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const c = lower[i]!;
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0xf;
    out += c >= 'a' && nibble >= 8 ? c.toUpperCase() : c;
  }
  return out;
}
