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

