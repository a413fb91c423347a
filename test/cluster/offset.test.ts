// The database's clock against ours, from round trips given as numbers (no clock, no database).
import { describe, expect, it } from 'vitest';
import { bestOffset, OFFSET_SAMPLES, record, sampleOf, type OffsetSample } from '../../src/cluster/offset.js';

/** A round trip to a clock `truth` ms ahead of ours: `out` ms there, `back` ms back. */
const trip = (at: number, truth: number, out: number, back: number) => sampleOf(at, at + out + truth, at + out + back);

describe('the offset of the shared budget\'s clock', () => {
  it('is the halfway estimate of a clean round trip', () => {
    expect(bestOffset([])).toBe(0);
    expect(bestOffset([trip(1000, 250, 2, 2)])).toBe(250);
    expect(sampleOf(1000, 1260, 1004)).toEqual({ trip: 4, offset: 258 });
  });

  it('does not believe a trip held up on its way back while a clean one is kept', () => {
    let kept: OffsetSample[] = [];
    kept = record(kept, trip(0, 0, 1, 1));
    // The answer waited 120 ms for this process's event loop: halfway, it says -60 ms.
    const held = trip(500, 0, 1, 121);
    expect(held.offset).toBe(-60);
    kept = record(kept, held);
    expect(bestOffset(kept)).toBe(0);
    // The same held-up trip alone, the old way, places the window's end 60 ms late here.
    expect(bestOffset([held])).toBe(-60);
  });

  it('follows a clock that steps, once the trips before the step have left the record', () => {
    let kept: OffsetSample[] = [];
    for (let i = 0; i < OFFSET_SAMPLES; i++) kept = record(kept, trip(i * 1000, 0, 1, 1));
    // The other clock steps 2 s ahead; its trips are slower than the clean ones before.
    for (let i = 0; i < OFFSET_SAMPLES - 1; i++) {
      kept = record(kept, trip((OFFSET_SAMPLES + i) * 1000, 2000, 2, 2));
      expect(bestOffset(kept)).toBe(0);
    }
    kept = record(kept, trip(2 * OFFSET_SAMPLES * 1000, 2000, 2, 2));
    expect(kept).toHaveLength(OFFSET_SAMPLES);
    expect(bestOffset(kept)).toBe(2000);
  });

  it('takes the latest of equally short trips', () => {
    expect(bestOffset([trip(0, 10, 1, 1), trip(100, 30, 1, 1)])).toBe(30);
  });
});
