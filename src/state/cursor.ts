// A partition's cursor, kept in its state file (store.ts) and committed with the files it covers:
// for an append stream, where its committed rows end and the window being paged; for a merge, the
// newest point and when it was fetched.

/** Rows of one block already committed, by key: the next window refetches that block and skips them. */
export interface BlockKeys {
  block: number;
  keys: string[];
}

/** Carried across pages of one partition; stored with the checkpoint. */
export interface Carry {
  group?: string;
  seen?: Record<string, number>;
}

export interface Cursor {
  /** append: where the next window starts (inclusive); everything below is committed. */
  nextBlock?: number;
  /** append: rows of block `nextBlock` already committed, by key (skipped when refetched). */
  skip?: BlockKeys;
  /** append: a window being paged, with the page token to continue from. */
  window?: {
    query: Record<string, string>;
    token?: string;
    /** Highest block committed in this window and its keys. */
    top?: BlockKeys;
    carry?: Carry;
    /** Files and rows committed by this window: a restart (expired page token) replaces them. */
    files: string[];
    rows?: number;
  };
  /** merge with a time cursor: the newest committed point (Unix seconds). */
  newest?: number;
  /** merge: when the partition was last fetched. */
  refreshedAt?: string;
}


/** The first block of an append partition's next window: the configured start, or where its committed rows end, whichever is later. */
export function nextWindowStart(cursor: Cursor, startBlock: number | undefined): number {
  return Math.max(startBlock ?? 0, cursor.nextBlock ?? 0);
}

/**
 * The first block of the next window, or undefined when there is none to fetch: every block below
 * the configured end is committed, and no full refresh asks for them again.
 */
export function windowToFetch(cursor: Cursor, startBlock: number | undefined, endBlock: number | undefined, rebuilding: boolean): number | undefined {
  const start = nextWindowStart(cursor, startBlock);
  return endBlock !== undefined && start >= endBlock && !rebuilding ? undefined : start;
}

/** The rows of a window's first block committed already, skipped when that block is fetched again. */
export function skipAt(cursor: Cursor, start: number): BlockKeys | undefined {
  return cursor.nextBlock === start ? cursor.skip : undefined;
}

/**
 * The cursor once the window from `start` (whose first block's committed rows were `skip`) is
 * paged to its end. With an end block, every block below it is done. Without one, the newest
 * block seen (`top`) is refetched next time, as it may have grown; its rows committed now are
 * skipped by key.
 */
export function afterWindow(start: number, end: number | undefined, top: BlockKeys | undefined, skip: BlockKeys | undefined): Cursor {
  if (end !== undefined) return { nextBlock: end };
  return top ? { nextBlock: top.block, skip: top } : { nextBlock: start, skip };
}

/**
 * Where an append partition's committed rows may lie, from its cursor: `high` is the highest block
 * a committed row may have, `hw` the high-water block whose committed rows the cursor lists by key
 * (the next run refetches that block and skips exactly those keys).
 */
export function coveredRange(c: Cursor): { high?: number; hw?: { block: number; keys: number } } {
  let high: number | undefined;
  let hw: { block: number; keys: number } | undefined;
  if (c.nextBlock !== undefined) {
    if (c.skip && c.skip.block === c.nextBlock) {
      high = c.nextBlock;
      hw = { block: c.skip.block, keys: c.skip.keys.length };
    } else {
      // Ended at an exclusive endBlock, or nothing committed at the start block yet.
      high = c.nextBlock - 1;
    }
  }
  const top = c.window?.top;
  if (top && (high === undefined || top.block >= high)) {
    high = top.block;
    hw = { block: top.block, keys: top.keys.length };
  }
  return { high, hw };
}
