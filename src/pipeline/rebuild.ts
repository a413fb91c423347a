// `chainlake rebuild <table>`: re-derives a table from its raw pages (kept under _raw/ by every
// run) without refetching: the pages are replayed through today's transform and the result replaces
// the table's files. An append stream's pages replay the run's own skipping of a refetched block, so
// its batches land as they are; any other table is reduced to the newest row per key (a merge table
// fetched a key again, or a page does not say where its window ended).
import type { Logger } from 'pino';
import { streamOf } from '../streams/index.js';
import { folderOf, type Partition, type StreamDecl } from '../decl/stream.js';
import type { ParquetWriter } from '../load/parquet.js';
import { readRawPages } from '../load/raw.js';
import { RAW, REJECTS, TABLE_PARTITION, type StateStore, type PartitionState } from '../state/store.js';
import { nextToken } from '../extract/paginate.js';
import { UsageError } from '../errors.js';
import { withLockedWriter } from './session.js';
import { BatchPath, type Moves } from './batch.js';
import { Transformer } from '../transform/rows.js';
import { coveredRange, highest, latestTime, type BlockKeys } from '../state/cursor.js';
import { compareNames, isTableData, nextSeq, nextStem, readName, type ReadName } from '../state/names.js';
import { ListingGate, type WindowBounds } from './window.js';
import { TimeGate } from './series.js';
import { commitTable } from './merge.js';

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

/** A window fetched in chunks: each chunk's files, by the block its range ends before. */
type ChunkedFiles = Map<number | 'head', Array<{ file: string; floor: number }>>;

interface Replayed {
  state: PartitionState;
  /** Data files in staging, each with its target in the table folder. */
  data: Moves;
  rejects: Moves;
  rejected: number;
  /** The data files are the table's already: every duplicate was skipped the way the run skips it. */
  final: boolean;
}

/**
 * Replays one partition's raw pages through the run's batch path into Parquet files, a batch at a
 * time. One batch is written by DuckDB (on its own threads) while the next is transformed. An
 * append stream paged by the generic paginator is replayed the way the run fetched it: each
 * listing's last page ends a block window, and the next window skips the newest block's rows seen
 * already. Its files then need no merge by key.
 */
async function replay(decl: StreamDecl, state: PartitionState, store: StateStore, writer: ParquetWriter, flushRows: number, report: RebuildReport, signal?: AbortSignal): Promise<Replayed> {
  const partition: Partition = { id: state.partition, path: {}, query: {}, values: state.values ?? {} };
  let seq = nextSeq(state.files);
  // An append stream's rows pass the gate its listing passed them through in the run (window.ts),
  // within what the run committed: no block above the cursor's, no time in the future. A series'
  // rows within the end its last fetch kept to, and not in the future.
  const now = Math.floor(Date.now() / 1000);
  const high = coveredRange(state.cursor).high;
  const bounds: WindowBounds = { start: 0, ...(high === undefined ? {} : { end: high + 1 }), maxTime: latestTime(now) };
  const blocks = decl.blockCursor !== undefined;
  const series = blocks || !decl.timeCursor ? undefined : new TimeGate({ end: state.cursor.until, maxTime: latestTime(now) });
  const gateOf = (range?: { from: number; to: number }, o: { skip?: BlockKeys; top?: BlockKeys } = {}) => new ListingGate(range, { ...o, bounds });
  let gate = gateOf();
  const batches = new BatchPath(decl, partition, store, writer, { runId: 'rebuild', keepRaw: false, seq: () => seq++ }, new Transformer(decl, partition, {}, blocks ? gate : series));
  // Another listing follows (a window, a chunk, a range): its own gate, carry and recent pages.
  const listing = (g: ListingGate) => {
    gate = g;
    if (blocks) batches.transformer.gate = g;
    batches.transformer.endListing();
  };
  const final = decl.refresh === 'append' && !decl.extract;
  const out: Replayed = { state, data: [], rejects: [], rejected: 0, final };
  let writing: Promise<void> = Promise.resolve();
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
    let chunks = windows.get(tag.window);
    if (!chunks) {
      windows.set(tag.window, (chunks = new Map()));
      segments.push(chunks);
    }
    chunks.set(tag.end, [...(chunks.get(tag.end) ?? []), { file: f.file, floor: tag.floor }]);
  }
  const first = new Map<string, number>();
  raws.forEach((f, i) => first.set(f.range, first.get(f.range) ?? i));
  // A series' ranges (merge tables: no windows in chunks) are replayed range by range.
  const rangeOf = (seg: RawFile | ChunkedFiles) => (seg instanceof Map ? '' : seg.range);
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
    for (const { page, bytes } of readRawPages(local!, { bytes: decl.bytesSafe, exact: decl.exactNumbers })) {
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
        const top = gate.getTop();
        listing(gateOf(undefined, { skip: top, top }));
      }
      if (batches.transformer.rows >= flushRows) await flush();
    }
  };
  let range: string | undefined;
  for (const seg of segments) {
    if (!(seg instanceof Map)) {
      // A series' ranges (merge tables) each with its own carry.
      if (range !== undefined && seg.range !== range) {
        await flush();
        listing(gateOf());
      }
      range = seg.range;
      await replayFile(seg.file, true);
      continue;
    }
    // A window in chunks: it starts where one listing's window would, skipping what the last one
    // committed of its newest block.
    await flush();
    const skip = gate.getTop();
    const tops = [skip];
    for (const [end, files] of seg) {
      // Rows at or above the chunk's end were dropped by the run as another chunk's.
      listing(gateOf({ from: 0, to: end === 'head' ? Infinity : end }, { skip }));
      for (const { file, floor } of files) {
        gate.floor = floor;
        await replayFile(file, false);
      }
      tops.push(gate.getTop());
      await flush();
    }
    const top = highest(tops);
    listing(gateOf(undefined, { skip: top, top }));
  }
  await flush();
  await writing;
  return out;
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
    const flushRows = o.flushRows ?? 10_000;
    const replayed: Replayed[] = [];
    for (const state of states) {
      report.partitions++;
      replayed.push(await replay(decl, state, store, writer, flushRows, report, o.signal));
    }
    const keep = (s: PartitionState) => s.files.filter((f) => f.startsWith(`${RAW}/`));
    const stamp = { runId: 'rebuild', at: new Date().toISOString(), status: 'complete' as const };
    if (decl.mergeScope === 'table') {
      // Every partition's rows merge into the table's one set of files, newest fetch first.
      const fresh = replayed.flatMap((r) => r.data.map(([s]) => s));
      report.rows = await commitTable(decl, fresh, store, writer, { replace: true, runId: 'rebuild', refreshed: false });
      for (const r of replayed)
        await store.commit({ ...r.state, files: [...keep(r.state), ...r.rejects.map(([, t]) => t)], rejects: r.rejected, lastRun: stamp }, r.rejects, r.state.files.filter((f) => f.startsWith(`${REJECTS}/`)));
    } else {
      for (const r of replayed) {
        const merged = r.final
          ? r.data
          : (await writer.merge(decl, r.data.map(([s]) => s), [], store.stagingDir(table, r.state.partition), nextStem(r.state.partition, r.state.files), folderOf(decl, r.state.values ?? {}))).map((f): [string, string] => [f.staged, `${table}/${f.rel}`]);
        const rows = await writer.countRowsOf(merged.map(([s]) => s));
        report.rows += rows;
        const drop = r.state.files.filter((f) => !f.startsWith(`${RAW}/`));
        await store.commit(
          { ...r.state, files: [...keep(r.state), ...[...merged, ...r.rejects].map(([, t]) => t)], rows, rejects: r.rejected, lastRun: stamp },
          [...merged, ...r.rejects],
          drop,
        );
      }
    }
  });
  report.seconds = (performance.now() - t0) / 1000;
  o.logger.info({ ...report }, 'rebuild finished');
  return report;
}
