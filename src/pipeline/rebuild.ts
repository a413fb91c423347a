// `chainlake rebuild <table>`: re-derives a table from its raw pages (kept under _raw/ by every
// run) without refetching: the pages are replayed through today's transform and the result replaces
// the table's files. An append stream's pages replay the run's own skipping of a refetched block, so
// its batches land as they are; any other table is reduced to the newest row per key (a merge table
// fetched a key again, or a page does not say where its window ended).
import type { Logger } from 'pino';
import { streamOf } from '../streams/index.js';
import type { Partition, StreamDecl } from '../decl/stream.js';
import type { ParquetWriter } from '../load/parquet.js';
import { readRawPages } from '../load/raw.js';
import { RAW, TABLE_PARTITION, type StateStore, type PartitionState } from '../state/store.js';
import { nextToken } from '../extract/paginate.js';
import { UsageError } from '../errors.js';
import { withLockedWriter } from './session.js';
import { BatchPath } from './batch.js';
import { Transformer } from '../transform/rows.js';
import { coveredRange, latestTime, skipAt, type Cursor, type Listing } from '../state/cursor.js';
import { compareNames, isTableData, nextSeq, readName, type ReadName } from '../state/names.js';
import { WindowMachine } from './window.js';
import { TimeGate } from './series.js';
import { strategyOf, type RebuiltPartition } from './strategies.js';

export interface RebuildReport {
  table: string;
  partitions: number;
  rawFiles: number;
  pages: number;
  /** Rows the replay produced, before reducing each key to its newest row. */
  replayed: number;
  /** Rows of a block refetched by a later window, skipped as the run skipped them. */
  skipped: number;
  /** Rows the service sent twice, dropped as the run dropped them. */
  sentTwice: number;
  /** Rows outside what the run committed or what can exist (window.ts, series.ts), dropped as the run dropped them. */
  outside: number;
  /** Rows of the rebuilt table. */
  rows: number;
  rejects: number;
  seconds: number;
}

/** A raw file with what its name says, read once. */
interface RawFile {
  file: string;
  name?: ReadName;
  /** The range of a series it was fetched for (merge.ts), or '' for the series' one listing. */
  range: string;
}

/** A window fetched in chunks: where it started, and each chunk's files by the block its range ends before. */
interface ChunkedFiles {
  start: number;
  chunks: Map<number | 'head', Array<{ file: string; floor: number }>>;
}


/**
 * Replays one partition's raw pages through the run's batch path into Parquet files, a batch at a
 * time. One batch is written by DuckDB (on its own threads) while the next is transformed. An
 * append stream paged by the generic paginator is replayed the way the run fetched it: each
 * listing's last page ends a block window, and the next window skips the newest block's rows seen
 * already. Its files then need no merge by key.
 */
async function replay(decl: StreamDecl, state: PartitionState, store: StateStore, writer: ParquetWriter, flushRows: number, report: RebuildReport, after: Promise<void>, signal?: AbortSignal): Promise<{ partition: RebuiltPartition; written: Promise<void> }> {
  const partition: Partition = { id: state.partition, path: {}, query: {}, values: state.values ?? {} };
  let seq = nextSeq(state.files);
  // A series' rows within the end its last fetch kept to, and not in the future.
  const maxTime = latestTime(Math.floor(Date.now() / 1000));
  const bp = decl.blockCursor;
  const series = bp || !decl.timeCursor ? undefined : new TimeGate({ end: state.cursor.until, maxTime });
  // No drift is counted: a rebuild's report does not say it (the run that fetched the pages did).
  const batches = new BatchPath(decl, partition, store, writer, { runId: 'rebuild', keepRaw: false, seq: () => seq++ }, new Transformer(decl, partition, {}, series, { drift: false }));
  // An append stream's windows are driven through the run's own machine (window.ts), window after
  // window: each chunk's rows pass the gate they passed in the run, and a window's end moves the
  // cursor the next starts from, skipping what it committed of its first block. A window whose
  // raw pages do not say its end is bounded by what the run committed (no block above the
  // cursor's); one whose start they do not say (the first: the pipeline's start block is not
  // kept) starts at block 0.
  const high = coveredRange(state.cursor).high;
  let cursor: Cursor = {};
  let machine: WindowMachine | undefined;
  let chunk = 0;
  const openWindow = (start: number, end: number | undefined, chunks: Listing[]) => {
    machine = new WindowMachine({ start, ...(end === undefined ? {} : { end }), endConfigured: false, chunks, splits: 0 }, skipAt(cursor, start), bp!, 1, 1, maxTime);
  };
  // The window's next chunk: its own gate, carry and recent pages.
  const nextChunk = () => {
    chunk = machine!.next(0)!.id;
    batches.transformer.gate = machine!.gate(chunk);
    batches.transformer.endListing();
  };
  // The chunk's listing is at its end; once every chunk's is, the window's cursor is where the next starts.
  const endChunk = () => {
    machine!.paged(chunk, undefined, 0, 0, 1);
    const intent = machine!.commit(chunk, { cursor, files: [], rows: 0, rejects: 0 }, { files: [], rows: 0, rejected: 0 }, {});
    if (intent.complete) cursor = intent.track.cursor;
  };
  const oneListing = () => {
    const start = cursor.nextBlock ?? 0;
    openWindow(start, high === undefined ? undefined : high + 1, [{ query: start > 0 ? { [bp!.start]: String(start) } : {}, files: [] }]);
    nextChunk();
  };
  // Another listing follows that is no window of the one before (a range of a series).
  const newListing = () => {
    if (!bp) return batches.transformer.endListing();
    cursor = {};
    oneListing();
  };
  if (bp) oneListing();
  const final = decl.refresh === 'append' && !decl.extract;
  const out: RebuiltPartition = { state, data: [], rejects: [], rejected: 0, final };
  // One COPY at a time on the writer's connection, the previous partition's last one included.
  let writing: Promise<void> = after;
  const flush = async () => {
    const closed = batches.close();
    report.replayed += closed.batch.rows;
    report.skipped += closed.batch.skipped;
    report.sentTwice += closed.batch.sentTwice;
    report.outside += closed.batch.outside;
    report.rejects += closed.batch.rejects.length;
    out.rejected += closed.batch.rejects.length;
    const previous = writing;
    writing = (async () => {
      await previous;
      const staged = await batches.write(closed);
      out.data.push(...staged.data);
      out.rejects.push(...staged.side);
    })();
    writing.catch(() => undefined); // awaited below or at the next flush; not an unhandled rejection meanwhile
    await previous;
  };
  // In the order the run fetched them: a name's place in its partition (state/names.ts).
  const raws: RawFile[] = state.files
    .filter((f) => f.startsWith(`${RAW}/`))
    .map((file) => {
      const name = readName(file);
      return { file, name, range: name?.listing?.kind === 'range' ? String(name.listing.start) : '' };
    })
    .sort((a, b) => compareNames(a.name, b.name));
  // The chunks of a window were fetched at once, their pages interleaved in time: each chunk is
  // replayed apart, with its own carry, cut at its floor as the run cut it, and skipping the rows of
  // the window's first block that an earlier window committed; the window's newest block is then
  // skipped by the next window, as one listing's is. Ranges of a series fetched at once (merge
  // tables, `.chunk<start>`) are replayed apart too, and merged by key as any merge table.
  const windows = new Map<number, ChunkedFiles>();
  const segments: Array<RawFile | ChunkedFiles> = [];
  for (const f of raws) {
    const tag = f.name?.listing;
    if (tag?.kind !== 'chunk') {
      segments.push(f);
      continue;
    }
    let w = windows.get(tag.window);
    if (!w) {
      windows.set(tag.window, (w = { start: tag.window, chunks: new Map() }));
      segments.push(w);
    }
    w.chunks.set(tag.end, [...(w.chunks.get(tag.end) ?? []), { file: f.file, floor: tag.floor }]);
  }
  const first = new Map<string, number>();
  raws.forEach((f, i) => first.set(f.range, first.get(f.range) ?? i));
  // A series' ranges (merge tables: no windows in chunks) are replayed range by range.
  const rangeOf = (seg: RawFile | ChunkedFiles) => ('chunks' in seg ? '' : seg.range);
  if (raws.some((f) => f.range !== '')) segments.sort((a, b) => first.get(rangeOf(a))! - first.get(rangeOf(b))!);
  const replayFile = async (f: string, lastPageEndsWindow: boolean) => {
    if (signal?.aborted) {
      await writing; // the writer's connection closes next: no COPY may be under way
      signal.throwIfAborted();
    }
    report.rawFiles++;
    // A raw file holds one batch of one listing, and pages of a table merged by key do not say
    // where a listing ended (a series stops paging at the newest committed point): each file is
    // compared with itself only, so a later run's refetch of a key is never taken for a repeat.
    if (!final) batches.transformer.newListing();
    const [local] = await store.local([f]);
    for await (const { page, bytes } of readRawPages(local!, { bytes: decl.bytesSafe, exact: decl.exactNumbers })) {
      report.pages++;
      const body = Array.isArray(page) ? undefined : (page as Record<string, unknown>);
      const items = body ? body[decl.items] : page;
      if (!Array.isArray(items)) throw new UsageError(`${f}: a raw page without "${decl.items}"`);
      batches.add({ items, bytes });
      // A page kept as its items only (several requests made it) does not say where its window
      // ended: such a partition is merged by key instead.
      if (!body) out.final = false;
      else if (lastPageEndsWindow && out.final && nextToken(body) === undefined) {
        // The window ended: the next starts at its newest block, skipping the rows of it seen already.
        if (bp) {
          endChunk();
          oneListing();
        } else batches.transformer.endListing();
      }
      if (batches.transformer.rows >= flushRows) await flush();
    }
  };
  const replayAll = async () => {
    let range: string | undefined;
    for (const seg of segments) {
      if (!('chunks' in seg)) {
        // A series' ranges (merge tables) each with its own carry.
        if (range !== undefined && seg.range !== range) {
          await flush();
          newListing();
        }
        range = seg.range;
        await replayFile(seg.file, true);
        continue;
      }
      // A window in chunks: it starts where one listing's window would, skipping what the last one
      // committed of its newest block.
      await flush();
      const ends = [...seg.chunks.keys()];
      const end = ends.includes('head') ? (high === undefined ? undefined : high + 1) : Math.max(...(ends as number[]));
      // Rows at or above a chunk's end were dropped by the run as another chunk's; each file was cut
      // at the floor its chunk had then.
      openWindow(seg.start, end, ends.map((e) => ({ query: e === 'head' ? {} : { [bp!.end]: String(e) }, files: [] })));
      for (const files of seg.chunks.values()) {
        nextChunk();
        for (const { file, floor } of files) {
          machine!.cutAt(chunk, floor);
          await replayFile(file, false);
        }
        endChunk();
        await flush();
      }
      oneListing();
    }
    await flush();
  };
  try {
    await replayAll();
  } catch (err) {
    // The writer's connection is closed or reused next: no COPY may be under way.
    await writing.catch(() => undefined);
    throw err;
  }
  // Its last batch is written while the next partition is read and transformed.
  return { partition: out, written: writing };
}

/** Rebuilds a table from its raw pages. An abort of `signal` stops it before the next raw file, the table untouched. */
export async function rebuildTable(lake: string, table: string, o: { logger: Logger; flushRows?: number; signal?: AbortSignal }): Promise<RebuildReport> {
  const decl = streamOf('rebuild', table);
  const t0 = performance.now();
  const report: RebuildReport = { table, partitions: 0, rawFiles: 0, pages: 0, replayed: 0, skipped: 0, sentTwice: 0, outside: 0, rows: 0, rejects: 0, seconds: 0 };
  await withLockedWriter(lake, { onNote: (note) => o.logger.warn(note) }, async (store, writer) => {
    const states = store.statesOf(table).filter((s) => s.partition !== TABLE_PARTITION);
    if (states.some((s) => s.rebuild)) throw new UsageError(`rebuild: a --full-refresh of ${table} is in progress; finish it with \`chainlake run ... --full-refresh ${table}\` first`);
    if (!states.some((s) => s.files.some((f) => f.startsWith(`${RAW}/`))))
      throw new UsageError(`rebuild: ${table} has no raw pages in ${store.lake} (runs with --no-raw keep none); run the pipeline instead`);
    // A partition whose rows are not all in its raw pages would lose them.
    const lacking = states.filter((s) => s.rawIncomplete || (s.files.some((f) => isTableData(table, f)) && !s.files.some((f) => f.startsWith(`${RAW}/`))));
    if (lacking.length)
      throw new UsageError(`rebuild: ${lacking.length === 1 ? 'the partition' : `${lacking.length} partitions`} ${lacking.slice(0, 3).map((s) => s.partition).join(', ')}${lacking.length > 3 ? ', ...' : ''} of ${table} hold rows that no raw page keeps (a \`chainlake reset\`, or runs that kept none): a rebuild would lose them; refetch with \`chainlake run ... --full-refresh ${table}\``);
    // Nothing is committed before the whole table is replayed, so a batch need not be a run's
    // commit: a file of 40,000 rows costs DuckDB less a row than four of 10,000 (each COPY reads,
    // compresses and closes its file), for some 30 MB more of its buffers at the peak.
    const flushRows = o.flushRows ?? 40_000;
    const replayed: RebuiltPartition[] = [];
    // DuckDB writes a batch while the main thread transforms the next, so the two share the cores:
    // one thread of DuckDB's per COPY spends a quarter less CPU on it than two, and takes no
    // longer while the transform holds the other core. A merge by key (below) gets them all.
    await writer.withThreads(1, async () => {
      let written = Promise.resolve();
      for (const state of states) {
        report.partitions++;
        const r = await replay(decl, state, store, writer, flushRows, report, written, o.signal);
        replayed.push(r.partition);
        written = r.written;
      }
      await written;
    });
    report.rows = await strategyOf(decl).commitRebuild(decl, replayed, store, writer);
  });
  report.seconds = (performance.now() - t0) / 1000;
  o.logger.info({ ...report }, 'rebuild finished');
  return report;
}
