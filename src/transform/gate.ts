// What a listing's rows are asked as they are transformed (rows.ts): the gate's verdicts, which
// the pure machines that decide them (pipeline/window.ts, series.ts) return, and a field's getter,
// which series.ts reads times with. Apart from rows.ts so that those machines load nothing else.

/**
 * What a listing's gate says of a row: kept, committed already, outside its own range (another
 * listing of the window sends it), below its floor, or outside what was asked or can exist.
 */
export const KEEP = 0;
export const SKIPPED = 1;
export const OUTSIDE = 2;
export const BELOW = 3;
export const UNASKED = 4;
export type Verdict = typeof KEEP | typeof SKIPPED | typeof OUTSIDE | typeof BELOW | typeof UNASKED;

/**
 * Which rows of a listing are its own (pipeline/window.ts and series.ts decide): asked of each row
 * of a stream with a block or time cursor, with its block (NaN for none), key and time (Unix
 * seconds, NaN for none), after the rows sent twice are dropped.
 */
export interface RowGate {
  admit(block: number, key: string, time: number): Verdict;
  /** Why the last row it called UNASKED was, in words (`block 1200 is above the window's end 1100`). */
  readonly unasked?: string;
}

/** Reads a dot path (`reward.amount`) of an item: undefined where a step is missing. */
export function getter(path: string): (item: Record<string, unknown>) => unknown {
  const parts = path.split('.');
  if (parts.length === 1) return (item) => item[path];
  return (item) => {
    let v: unknown = item;
    for (const k of parts) {
      if (v === null || typeof v !== 'object') return undefined;
      v = (v as Record<string, unknown>)[k];
    }
    return v;
  };
}
