// Amount generation. Real token amounts are uint256; the edges that break naive clients
// (0, exactly 38 digits, 39 digits = past DECIMAL(38), 78 digits up to uint256 max) are produced
// on purpose, some at fixed positions so every listing is sure to contain them.
import type { Rng } from './hash.js';

export const UINT256_MAX = (1n << 256n) - 1n;
export const UINT256_MAX_STRING = UINT256_MAX.toString();

export type AmountClass = 'zero' | 'small' | 'typical' | 'd38' | 'd39' | 'd78' | 'max';

/** The classes forced at fixed positions of every listing, in this order. */
export const EDGE_CLASSES: readonly AmountClass[] = ['zero', 'd38', 'd39', 'd78', 'max'];

/** Positions i with i % EDGE_PERIOD in [EDGE_OFFSET, EDGE_OFFSET + EDGE_CLASSES.length) carry edge amounts. */
export const EDGE_PERIOD = 64;
export const EDGE_OFFSET = 9;

export function edgeClassAt(i: number): AmountClass | undefined {
  const r = i % EDGE_PERIOD;
  return r >= EDGE_OFFSET && r < EDGE_OFFSET + EDGE_CLASSES.length ? EDGE_CLASSES[r - EDGE_OFFSET] : undefined;
}

export function randomClass(rng: Rng): AmountClass {
  const u = rng.float();
  if (u < 0.03) return 'zero';
  if (u < 0.2) return 'small';
  if (u < 0.94) return 'typical';
  if (u < 0.96) return 'd38';
  if (u < 0.98) return 'd39';
  if (u < 0.995) return 'd78';
  return 'max';
}

const TEN = 10n;

export function amountOf(cls: AmountClass, rng: Rng, decimals = 18): string {
  switch (cls) {
    case 'zero':
      return '0';
    case 'small':
      return String(rng.range(1, 999_999));
    case 'typical': {
      // 0.001 .. 100k whole tokens in the smallest unit.
      const exp = Math.max(0, decimals - 3 + rng.int(9));
      return (BigInt(rng.range(1, 99_999)) * TEN ** BigInt(exp) + rng.bigBelow(TEN ** BigInt(exp) || 1n)).toString();
    }
    case 'd38':
      return (TEN ** 37n + rng.bigBelow(9n * TEN ** 37n)).toString();
    case 'd39':
      return (TEN ** 38n + rng.bigBelow(9n * TEN ** 38n)).toString();
    case 'd78':
      return (TEN ** 77n + rng.bigBelow(UINT256_MAX - TEN ** 77n)).toString();
    case 'max':
      return UINT256_MAX_STRING;
  }
}
