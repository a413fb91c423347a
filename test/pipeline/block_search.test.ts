// The first block at or after a time, on fake chains: exact wherever the time falls (on a block,
// between two, in a halt of the chain, before genesis, after the head), in few requests.
import { describe, expect, it } from 'vitest';
import { firstBlockAt, maxProbes } from '../../src/pipeline/block_search.js';
import type { Resolved } from '../../src/state/block_times.js';

const T0 = 1_600_000_000;

/** A chain of `times` (block n's time is times[n]) and a fetch that counts its requests. */
function chain(times: number[]) {
  const asked: number[] = [];
  const head = { number: times.length - 1, timestamp: times[times.length - 1]! };
  const timeOf = async (n: number) => {
    asked.push(n);
    if (!(n >= 0 && n <= head.number)) throw new Error(`block ${n} does not exist`);
    return times[n]!;
  };
  /** What the search must find: the first block at or after t, by looking at every block. */
  const truth = (t: number) => {
    const i = times.findIndex((x) => x >= t);
    return i < 0 ? undefined : i;
  };
  return { times, head, timeOf, asked, truth };
}

function seeded(seed: number) {
  return () => (seed = (seed * 48271) % 2147483647) / 2147483647;
}

const N = 200_000;
const CHAINS = {
  'regular, a block every 2 s': Array.from({ length: N }, (_, n) => T0 + 2 * n),
  'several blocks a second': Array.from({ length: N }, (_, n) => T0 + Math.floor(n / 3)),
  'random gaps of 1 to 9 s': ((r) => {
    let t = T0;
    return Array.from({ length: N }, () => (t += 1 + Math.floor(r() * 9)));
  })(seeded(5)),
  'a halt of three days in the middle': Array.from({ length: N }, (_, n) => T0 + 2 * n + (n >= N / 2 ? 3 * 86_400 : 0)),
  'genesis at time 0, then every 2 s': Array.from({ length: N }, (_, n) => (n === 0 ? 0 : T0 + 2 * n)),
  'ever slower (block n at n^3 / 1e9 s)': Array.from({ length: N }, (_, n) => T0 + Math.floor(n ** 3 / 1e9)),
};

describe('firstBlockAt', () => {
  for (const [name, times] of Object.entries(CHAINS)) {
    it(`${name}: exact at, between and around blocks, within the bound of requests`, async () => {
      const c = chain(times);
      const r = seeded(17);
      const targets = [times[1]!, times[N - 1]!, times[N / 2]!, times[N / 2]! + 1, times[N / 2 - 1]! + 1, times[1234]!, times[1234]! - 1];
      for (let i = 0; i < 40; i++) targets.push(times[1]! + Math.floor(r() * (times[N - 1]! - times[1]!)));
      let most = 0;
      for (const t of targets) {
        c.asked.length = 0;
        const found = await firstBlockAt(t, c.head, c.timeOf);
        expect(found, `time ${t}`).toEqual({ block: c.truth(t) });
        most = Math.max(most, c.asked.length);
      }
      expect(most).toBeLessThanOrEqual(maxProbes(N));
      expect(maxProbes(N)).toBe(55);
    });
  }

  it('a regular chain costs a handful of requests, the most a few dozen', async () => {
    const c = chain(CHAINS['regular, a block every 2 s']);
    const costs: number[] = [];
    for (const t of [T0 + 1, T0 + 2 * 12_345, T0 + 2 * 12_345 + 1, T0 + 2 * 150_000 - 1]) {
      c.asked.length = 0;
      expect(await firstBlockAt(t, c.head, c.timeOf)).toEqual({ block: c.truth(t) });
      costs.push(c.asked.length);
    }
    // Genesis, the block interpolation points at, the one below it.
    expect(Math.max(...costs)).toBeLessThanOrEqual(4);
  });

  it('before genesis: block 0, after one request; after the head: none yet, and no request', async () => {
    const c = chain(CHAINS['regular, a block every 2 s']);
    expect(await firstBlockAt(T0 - 86_400, c.head, c.timeOf)).toEqual({ block: 0 });
    expect(await firstBlockAt(T0, c.head, c.timeOf)).toEqual({ block: 0 });
    expect(c.asked).toEqual([0, 0]);
    c.asked.length = 0;
    expect(await firstBlockAt(c.head.timestamp + 1, c.head, c.timeOf)).toEqual({ afterHead: c.head });
    expect(await firstBlockAt(c.head.timestamp, c.head, c.timeOf)).toEqual({ block: N - 1 });
    expect(c.asked.length).toBeLessThanOrEqual(4);
  });

  it('earlier resolutions bound the search: a time resolved before costs nothing, a time near one little', async () => {
    const c = chain(CHAINS['random gaps of 1 to 9 s']);
    const t = c.times[80_000]!;
    const known: Resolved[] = [{ time: t, block: 80_000 }];
    expect(await firstBlockAt(t, c.head, c.timeOf, known)).toEqual({ block: 80_000 });
    expect(c.asked).toEqual([]);
    const near = c.times[80_050]! + 1;
    expect(await firstBlockAt(near, c.head, c.timeOf, [...known, { time: c.times[80_100]!, block: 80_100 }])).toEqual({ block: c.truth(near) });
    expect(c.asked.length).toBeLessThanOrEqual(1 + 3 * Math.ceil(Math.log2(100)));
    expect(c.asked).not.toContain(0);
  });

  it("a remembered block above the chain's head is said, not searched from", async () => {
    const c = chain(CHAINS['regular, a block every 2 s']);
    const shorter = { number: 1000, timestamp: c.times[1000]! };
    await expect(firstBlockAt(c.times[900]!, shorter, c.timeOf, [{ time: c.times[500]!, block: 5000 }])).rejects.toThrow(
      "block 5000 is the first at or after 2020-09-13T12:43:20Z by the lake's record, above the chain's head (block 1000 at 2020-09-13T13:00:00Z)",
    );
    expect(c.asked).toEqual([]);
  });

  it('block times out of order are said, naming the blocks, not searched through', async () => {
    const times = Array.from({ length: 1000 }, (_, n) => T0 + 2 * n);
    // Block 699 newer than block 700, which the search finds first.
    times[699] = T0 + 2 * 900;
    const c = chain(times);
    await expect(firstBlockAt(T0 + 2 * 700, c.head, c.timeOf)).rejects.toThrow('block times are out of order: block 699 at 2020-09-13T12:56:40Z, block 700 at 2020-09-13T12:50:00Z');
  });
});
