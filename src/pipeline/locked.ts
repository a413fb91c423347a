// What `rebuild` and `compact` share: they rewrite a lake's files outside a run, holding its lock.
import { join } from 'node:path';
import { ParquetWriter } from '../load/parquet.js';
import { STAGING, StateStore } from '../state/store.js';

/**
 * Runs `work` with the lake's lock and a Parquet writer. What an earlier process left half done is
 * finished or dropped first (store.recover), and `work`'s own staging is cleared when it succeeds;
 * the writer closes and the lock goes whatever happens (a writer that fails to open included).
 * Nothing is committed once the lock was lost (the store's fence).
 */
export async function withLockedWriter<T>(lake: string, o: { wait?: boolean; onNote?: (note: string) => void }, work: (store: StateStore, writer: ParquetWriter) => Promise<T>): Promise<T> {
  const store = await StateStore.open(lake);
  const lock = await store.lock({ wait: o.wait, onNote: o.onNote });
  let writer: ParquetWriter | undefined;
  try {
    writer = await ParquetWriter.open(store.path(join(STAGING, 'duckdb')));
    await store.recover();
    const out = await work(store, writer);
    await store.recover();
    return out;
  } finally {
    writer?.close();
    await lock.release();
  }
}
