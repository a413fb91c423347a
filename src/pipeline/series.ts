// The refresh of a merge partition (a series, or a listing merged by key) as pure decisions: which
// time ranges are fetched at once, when a listing has reached what is committed, and which files a
// merge keeps, adds and deletes. merge.ts does the I/O around them. No clock: `now` is an argument.
import type { StreamDecl } from '../decl/stream.js';
import { RAW, REBUILD, REJECTS } from '../state/names.js';
import { getter, KEEP, OUTSIDE, UNASKED, type RowGate, type Verdict } from '../transform/gate.js';
import { FUTURE_SECONDS, isoSeconds, latestTime } from '../state/cursor.js';

const isRaw = (f: string) => f.startsWith(`${RAW}/`) || f.startsWith(`${REBUILD}/${RAW}/`);
const isRejects = (f: string) => f.startsWith(`${REJECTS}/`) || f.startsWith(`${REBUILD}/${REJECTS}/`);

/**
 * The time ranges of a listing fetched at once, from its start (the newest committed point, or
 * `startTimestamp`) to its end (`endTimestamp`, or `now`, Unix seconds). A series has a point per
 * interval, so how many pages a range holds is known before asking: ranges of a page each. A
 * listing at no regular interval (timeCursor.span) is cut into `chunks` ranges of equal length,
 * none shorter than its span. One range (the query as is) where the start is not known.
 */
export function timeRanges(decl: StreamDecl, query: Record<string, string>, now: number, chunks = 1): Array<Record<string, string>> {
  const tc = decl.timeCursor;
  if (!tc?.start || !tc.end || !(tc.step || tc.span) || query[tc.start] === undefined) return [query];
  const from = Number(query[tc.start]);
  const to = query[tc.end] !== undefined ? Number(query[tc.end]) : now;
  const span = tc.step ? tc.step(query) * Number(query.pageSize ?? 1) : Math.max(tc.span!, Math.ceil((to - from) / Math.max(1, chunks)));
  if (!(to - from > span)) return [query];
  const out: Array<Record<string, string>> = [];
  for (let a = from; a < to; a += span) {
    const q = { ...query, [tc.start]: String(a) };
    // Each range ends where the next begins. A service that reads the end as inclusive sends the
    // next range's first point too; the range's gate leaves it to that range (TimeGate).
    if (a + span < to) q[tc.end] = String(a + span);
    out.push(q);
  }
  return out;
}

/**
 * Which points of a listing of a series (or any listing with a time cursor) are its own: those
 * before the pipeline's end (`end`, exclusive, however the service reads it) and not in the
 * future (`maxTime`); of a range fetched beside others, those in its range [from, to) (a point of
 * another range is OUTSIDE: that range keeps it). A point after the end or in the future is
 * UNASKED: never committed, so the newest point, where the next run starts, never passes what
 * exists. Points below the start are the service's to round (usage metrics round it to the day).
 */
export class TimeGate implements RowGate {
  unasked?: string;

  constructor(readonly bounds: { start?: number; from?: number; to?: number; end?: number; maxTime?: number }) {}

  /** The gate of one listing of `decl` for `query` (its range) in a fetch configured by `cfg`, at `now` (Unix seconds). */
  static of(decl: StreamDecl, cfg: Record<string, unknown>, fetch: Record<string, string>, query: Record<string, string>, now: number): TimeGate {
    const tc = decl.timeCursor;
    const num = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : Number(v));
    return new TimeGate({
      start: tc?.start ? num(fetch[tc.start]) : undefined,
      from: tc?.start ? num(query[tc.start]) : undefined,
      to: tc?.end && query[tc.end] !== fetch[tc.end] ? num(query[tc.end]) : undefined,
      end: tc?.endOption ? num(cfg[tc.endOption]) : undefined,
      maxTime: latestTime(now),
    });
  }

  /** A point's verdict (Unix seconds; NaN: no time, kept). */
  verdict(t: number): Verdict {
    if (Number.isNaN(t)) return KEEP;
    const b = this.bounds;
    if (b.maxTime !== undefined && t > b.maxTime) {
      this.unasked = `time ${isoSeconds(t)} is in the future (now ${isoSeconds(b.maxTime - FUTURE_SECONDS)})`;
      return UNASKED;
    }
    if (b.end !== undefined && t >= b.end) {
      this.unasked = `time ${isoSeconds(t)} is at or after the end asked, ${isoSeconds(b.end)} (exclusive)`;
      return UNASKED;
    }
    if ((b.to !== undefined && t >= b.to) || (b.from !== undefined && t < b.from && (b.start === undefined || t >= b.start))) return OUTSIDE;
    return KEEP;
  }

  admit(_block: number, _key: string, time: number): Verdict {
    return this.verdict(time);
  }
}

/** The query of a partition's next fetch: a series with a start parameter resumes at its newest committed point. */
export function seriesQuery(decl: StreamDecl, query: Record<string, string>, newest: number | undefined): Record<string, string> {
  const tc = decl.timeCursor;
  if (!tc?.start || newest === undefined) return query;
  return { ...query, [tc.start]: String(Math.max(Number(query[tc.start] ?? 0), newest)) };
}

/**
 * One listing of a merge partition: the newest point it has sent, and when it stops. Without a
 * start parameter a series is listed newest first: once a page reaches below the newest committed
 * point, the rest is committed already.
 */
export class SeriesListing {
  /** The newest point sent (Unix seconds). */
  top?: number;
  /** The oldest point of an item sent that has not settled (timeCursor.settled). */
  private held?: number;

  /**
   * `timeOf`: an item's point, NaN for none; undefined for a listing that is no series. `gate`:
   * the points it keeps; the others tell nothing of where the listing stands.
   */
  constructor(
    private readonly newest: number | undefined,
    private readonly hasStart: boolean,
    private readonly timeOf?: (item: unknown) => number,
    private readonly settled?: (item: Record<string, unknown>) => boolean,
    private readonly gate?: TimeGate,
  ) {}

  /** Where the next run pages back to: the newest point sent, or the oldest unsettled one if older. */
  get point(): number | undefined {
    return this.held === undefined || this.top === undefined ? this.top : Math.min(this.top, this.held);
  }

  /** A page's items were added to the batch (`batchRows` it holds now): commit now, and whether the listing ends. */
  paged(items: unknown[], next: string | undefined, batchRows: number, flushRows: number): { commit: boolean; stop: boolean } {
    let oldest: number | undefined;
    if (this.timeOf) {
      for (const item of items) {
        const t = this.timeOf(item);
        if (!Number.isFinite(t) || (this.gate && this.gate.verdict(t) !== KEEP)) continue;
        this.top = this.top === undefined ? t : Math.max(this.top, t);
        oldest = oldest === undefined ? t : Math.min(oldest, t);
        if (this.settled && !this.settled(item as Record<string, unknown>)) this.held = this.held === undefined ? t : Math.min(this.held, t);
      }
    }
    const reached = this.timeOf !== undefined && !this.hasStart && this.newest !== undefined && oldest !== undefined && oldest < this.newest;
    return { commit: next === undefined || reached || batchRows >= flushRows, stop: reached };
  }

  /** A page token was refused: the listing starts again, nothing of it kept. */
  restart(): void {
    this.top = undefined;
    this.held = undefined;
  }
}

/**
 * An item's point (Unix seconds, NaN for none) as the time cursor's column reads it: its path, or
 * the first present of its paths, dotted into the item. The listing sees items before explode, so
 * an exploded row's path into its item (`_parent.x`) is the item's `x`.
 */
export function timeOf(decl: StreamDecl): ((item: unknown) => number) | undefined {
  const tc = decl.timeCursor;
  const from = tc ? decl.columns.find((c) => c.name === tc.column)?.from : undefined;
  if (from === undefined) return undefined;
  const unexplode = (p: string) => (decl.explode && p.startsWith('_parent.') ? p.slice('_parent.'.length) : p);
  const gets = (Array.isArray(from) ? from : [from]).map((p) => getter(unexplode(p)));
  return (item) => {
    if (item === null || typeof item !== 'object') return NaN;
    for (const get of gets) {
      const v = get(item as Record<string, unknown>);
      if (v !== undefined && v !== null) return Number(v);
    }
    return NaN;
  };
}

/** The newest point of a partition after a fetch: the newest its listings sent, or the one it had. */
export function newestOf(tops: Array<number | undefined>, newest: number | undefined): number | undefined {
  const sent = tops.filter((t): t is number => t !== undefined);
  return sent.length ? Math.max(...sent) : newest;
}

/** How a partition's files change with a merge by key into its own files. */
export interface MergePlan {
  /** The partition's files after the commit. */
  files: string[];
  /** Files the commit deletes. */
  deletes: string[];
  /** The merge's output (or, for a whole fetch, nothing) takes the place of the old data files. */
  replaced: boolean;
}

/**
 * The files of a partition merged into its own files. `added`: the lake paths of the merge's output
 * and of the fetch's rejects and raw pages. `whole`: this fetch is the partition's whole truth
 * (full refresh, replace table): what it committed before goes, raw pages included (a rebuild
 * replays only the fetch that the table holds). Rejects are always those of the latest fetch.
 */
export function partitionMerge(files: string[], added: string[], merged: boolean, whole: boolean): MergePlan {
  const oldData = files.filter((f) => !isRejects(f) && !isRaw(f));
  const oldRejects = files.filter(isRejects);
  const oldRaw = whole ? files.filter(isRaw) : [];
  const replaced = merged || whole;
  const keepRaw = files.filter((f) => isRaw(f) && !oldRaw.includes(f));
  return {
    files: [...(replaced ? [] : oldData), ...keepRaw, ...added],
    deletes: [...(replaced ? oldData : []), ...oldRejects, ...oldRaw],
    replaced,
  };
}

/** The data files a partition merges (neither rejects nor raw pages). */
export function dataFilesOf(files: string[]): string[] {
  return files.filter((f) => !isRejects(f) && !isRaw(f));
}

/**
 * The files of a partition whose rows merge into its table's (mergeScope: table): the data commits
 * with the table; the partition keeps the rejects of its latest fetch and the raw pages of every
 * fetch (of this one only, when it is whole).
 */
export function tableScopePartition(files: string[], added: string[], whole: boolean): { files: string[]; deletes: string[] } {
  const deletes = files.filter((f) => isRejects(f) || whole);
  return { files: [...files.filter((f) => !deletes.includes(f)), ...added], deletes };
}
