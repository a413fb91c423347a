// Keccak-256 as Ethereum uses it (not SHA3-256's padding) and EIP-55 checksums, against published
// vectors: the simulator's addresses must pass a strict client's checksum check.
import { describe, expect, it } from 'vitest';
import { checksumAddress, keccak256 } from '../../src/simulator/keccak.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('keccak256', () => {
  it('gives the published digests, across the 136-byte block boundary too', () => {
    expect(hex(keccak256(new Uint8Array()))).toBe('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    expect(hex(keccak256(Buffer.from('abc')))).toBe('4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
    expect(hex(keccak256(Buffer.from('The quick brown fox jumps over the lazy dog')))).toBe('4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15');
    // 135, 136 and 137 bytes: the padding byte in the last place of a block, and a second block.
    const digests = [135, 136, 137, 200].map((n) => hex(keccak256(Buffer.alloc(n, 0x61))));
    expect(new Set(digests).size).toBe(4);
    expect(digests[3]).toBe('96ea54061def936c4be90b518992fdc6f12f535068a256229aca54267b4d084d');
  });
});

describe('checksumAddress', () => {
  it("gives EIP-55's own examples, the same again from its kept answers", () => {
    for (const a of ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB', '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb']) {
      const bytes = Buffer.from(a.slice(2), 'hex');
      expect(checksumAddress(bytes)).toBe(a);
      expect(checksumAddress(bytes)).toBe(a);
    }
  });
});
