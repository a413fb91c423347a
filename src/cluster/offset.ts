// The database's clock against this process's, from the round trips of its queries: what the
// shared budget's fixed windows (counted by the database's clock) begin and end at here.
//
// A round trip's halfway point is the estimate, off by up to half the trip; a trip held up on the
// way back (this process's event loop busy, a slow database) moves it by half the hold-up, and an
// offset read late places the window's end later here than it is, so requests go to the service in
// the next window counted in this one, which the others have filled. So the estimate kept is that
// of the shortest recent trip, as NTP does: a held-up trip is not believed while a clean one is at
// hand, and a clock that steps is followed once the trips before the step have left the record.

/** How many recent round trips the estimate is chosen from. */
export const OFFSET_SAMPLES = 16;

export interface OffsetSample {
  /** The round trip's length (ms, by this process's clock). */
  trip: number;
  /** The other clock less ours, taken halfway through it. */
  offset: number;
}

/** The offset of one round trip: asked at `sentAt`, answered with `remoteNow`, read at `readAt`. */
export function sampleOf(sentAt: number, remoteNow: number, readAt: number): OffsetSample {
  return { trip: Math.max(0, readAt - sentAt), offset: remoteNow - (sentAt + readAt) / 2 };
}

/** The samples kept after `s`: the last OFFSET_SAMPLES, oldest first. */
export function record(samples: readonly OffsetSample[], s: OffsetSample): OffsetSample[] {
  return [...samples, s].slice(-OFFSET_SAMPLES);
}

/** The offset to use: that of the shortest trip kept (the latest of equals); 0 before any. */
export function bestOffset(samples: readonly OffsetSample[]): number {
  let best: OffsetSample | undefined;
  for (const s of samples) if (!best || s.trip <= best.trip) best = s;
  return best?.offset ?? 0;
}
