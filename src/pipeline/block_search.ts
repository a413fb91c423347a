// The first block at or after a time, found by asking for a few blocks' times: a search between a
// block known to be before the time and one known to be at or after it. Each probe is where the
// times of the two suggest (interpolation: block times are regular enough that it lands near the
// answer at once); where two probes in a row leave more than half the range, the next one halves
// it, so an irregular chain still costs a number of probes that grows with the log of its length.
// No I/O here: the caller gives the function that fetches a block's time.
import { RunError } from '../errors.js';
import type { BlockTime } from '../decl/stream.js';
import { isoSeconds } from '../state/cursor.js';
import type { Resolved } from '../state/block_times.js';

/** The first block at or after the time, or none yet: the chain's newest block (`head`) is older. */
export type Found = { block: number } | { afterHead: BlockTime };

/**
 * Probes the search makes at most on a chain of `blocks` blocks: the genesis probe, then at most
 * three per halving of the range (two interpolations that fail to halve it, then a halving).
 */
export function maxProbes(blocks: number): number {
  return 1 + 3 * Math.ceil(Math.log2(Math.max(2, blocks)));
}

interface Point {
  n: number;
  t: number;
  /** Its time was fetched (not inferred from a resolution): a probe's time must be in order with it. */
  fetched: boolean;
}

/**
 * The first block whose time is at or after `target` (Unix seconds), given the chain's newest block
 * and `timeOf(n)`, which fetches block n's time. `known`: earlier resolutions of the chain, which
 * bound the search without a request. Times that are out of order (a block older than one below
 * it) are the service's error, said rather than searched through.
 */
export async function firstBlockAt(target: number, head: BlockTime, timeOf: (n: number) => Promise<number>, known: readonly Resolved[] = []): Promise<Found> {
  if (head.timestamp < target) return { afterHead: head };
  let hi: Point = { n: head.number, t: head.timestamp, fetched: true };
  let lo: Point | undefined;
  for (const k of known) {
    if (k.time === target) return { block: k.block };
    // k.block is at or after k.time, the block below it before.
    if (k.time >= target && k.block < hi.n) hi = { n: k.block, t: k.time, fetched: false };
    if (k.time < target && k.block - 1 >= 0 && k.block - 1 > (lo?.n ?? -1)) lo = { n: k.block - 1, t: k.time, fetched: false };
  }
  if (lo && lo.n >= hi.n) {
    // A block below the head older than the head's time: the remembered answers are of another chain.
    throw new RunError(`block ${lo.n + 1} is the first at or after ${isoSeconds(lo.t)} by the lake's record, above the chain's head (block ${head.number} at ${isoSeconds(head.timestamp)}): the record is of another chain, or the chain went back`);
  }
  let misses = 0;
  for (;;) {
    if (lo && hi.n - lo.n <= 1) return { block: hi.n };
    if (!lo && hi.n === 0) return { block: 0 };
    const span = lo ? hi.n - lo.n : hi.n + 1;
    let n: number;
    if (!lo) n = 0;
    else if (misses >= 2) n = lo.n + Math.floor(span / 2);
    else n = lo.n + Math.ceil(((target - lo.t) / (hi.t - lo.t)) * span);
    if (lo) n = Math.min(hi.n - 1, Math.max(lo.n + 1, n));
    const genesis = !lo;
    const t = await timeOf(n);
    if (!Number.isFinite(t) || (lo?.fetched && t < lo.t) || (hi.fetched && t > hi.t)) {
      const [a, b] = lo?.fetched && t < lo.t ? [lo, { n, t }] : [{ n, t }, hi];
      throw new RunError(`the chain's block times are out of order: block ${a.n} at ${isoSeconds(a.t)}, block ${b.n} at ${isoSeconds(b.t)}; cannot find the first block at or after ${isoSeconds(target)}`);
    }
    if (t >= target) {
      if (!lo) return { block: 0 };
      hi = { n, t, fetched: true };
    } else lo = { n, t, fetched: true };
    const left = hi.n - lo.n;
    misses = genesis || misses >= 2 || left * 2 <= span ? 0 : misses + 1;
  }
}
