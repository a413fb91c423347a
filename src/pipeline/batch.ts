// The one path a partition's rows take to staging, for a run and for `rebuild` alike: pages go
// through the transform into a spool on disk (and, for a run that keeps them, the pages as sent
// into another); a closed batch is written as Parquet, its rejects as Parquet and its raw pages
// compressed, each named for where it will land when the caller commits it.
import { join } from 'node:path';
import { folderOf, type Partition, type StreamDecl } from '../decl/stream.js';
import type { Page } from '../decl/request.js';
import { Transformer, type Batch, type PageOutcome } from '../transform/rows.js';
import type { ParquetWriter } from '../load/parquet.js';
import { compressRawPages, rawLine } from '../load/raw.js';
import { stringifyExact } from '../json.js';
import { Spool } from '../load/spool.js';
import { RAW, REJECTS, type StateStore } from '../state/store.js';
import { partitionStem, type ListingTag } from '../state/names.js';

/** [file, lake-relative target] pairs, as StateStore.commit takes them. */
export type Moves = Array<[string, string]>;

/** A batch written to staging. */
export interface Staged {
  data: Moves;
  /** Files that travel with the data: rejects, raw pages. */
  side: Moves;
  rows: number;
  rejected: number;
}

/** A batch closed for writing: what the transform counted, and its spools. */
export interface Closed {
  batch: Batch;
  dir: string;
  rows: Spool;
  raw: Spool;
}

export class BatchPath {
  /** The batch in the making, on disk: staged rows, and raw pages (as sent) when they are kept. */
  private spools?: { dir: string; rows: Spool; raw: Spool };
  /** The listing the files are named for (a chunk's, a range's: `rebuild` replays each apart). */
  private listing?: ListingTag;

  constructor(
    private readonly decl: StreamDecl,
    private readonly partition: Partition,
    private readonly store: StateStore,
    private readonly writer: ParquetWriter,
    /** `seq`: the partition's next file's place in its order (state/names.ts). */
    private readonly o: { runId: string; keepRaw: boolean; seq: () => number },
    public transformer: Transformer = new Transformer(decl, partition),
  ) {}

  /** Names the files of the batches written from now on for `listing`. */
  retag(listing: ListingTag): void {
    this.listing = listing;
  }

  private get spool(): { dir: string; rows: Spool; raw: Spool } {
    if (!this.spools) {
      const dir = this.store.stagingDir(this.decl.table, this.partition.id);
      this.spools = { dir, rows: new Spool(join(dir, 'batch.rows')), raw: new Spool(join(dir, 'batch.raw')) };
    }
    return this.spools;
  }

  /**
   * A page's items through the transform into the batch; the page as sent too, when raw pages are
   * kept. A page that brings no new row and says there are more (a loop: the caller stops the
   * listing) leaves no trace, not even its raw page. The last page of a listing is kept as sent
   * whatever its rows: `rebuild` ends a window at it.
   */
  add(page: Pick<Page, 'items' | 'bytes' | 'raw' | 'next'>): PageOutcome {
    const outcome = this.transformer.push(page.items, page.bytes);
    if (outcome.dropped && page.next !== undefined) return outcome;
    if (this.o.keepRaw) {
      // A body as sent is kept as its bytes, unless it is pretty-printed over several lines.
      if (page.raw && !page.raw.includes(0x0a)) this.spool.raw.appendBytes(page.raw);
      else this.spool.raw.append([rawLine(page.raw?.toString('utf8') ?? stringifyExact(page.items)!)]);
    }
    this.spool.rows.append(this.transformer.takeLines(), page.bytes);
    return outcome;
  }

  /** A listing starts again: what the batch held so far is dropped, and `transformer` takes over. */
  restart(transformer: Transformer): void {
    this.spools?.rows.discard();
    this.spools?.raw.discard();
    this.spools = undefined;
    this.transformer = transformer;
  }

  /** Ends the batch in the making (the next page starts another), for `write`. */
  close(): Closed {
    const batch = this.transformer.take();
    const { dir, rows, raw } = this.spool;
    this.spools = undefined;
    rows.append(batch.lines);
    rows.close();
    raw.close();
    return { batch, dir, rows, raw };
  }

  /** Writes a closed batch to staging, each file named for where it lands under `base` in the lake. */
  async write({ batch, dir, rows, raw }: Closed, base = ''): Promise<Staged> {
    const { decl, partition } = this;
    const stem = partitionStem(partition.id, this.o.seq(), this.listing);
    // The raw pages compress on libuv's threads while DuckDB writes the rows on its own.
    const compressed = raw.lines ? compressRawPages(raw.path, join(dir, 'raw'), stem) : Promise.resolve([]);
    compressed.catch(() => undefined); // awaited below; not unhandled if the write fails first
    const data = await this.writer.write(decl, rows.path, batch.rows, join(dir, 'data'), stem, folderOf(decl, partition.values));
    rows.discard();
    const rej = await this.writer.writeRejects(decl.table, partition.id, this.o.runId, batch.rejects, join(dir, 'rejects'), stem);
    const pages = await compressed;
    return {
      data: data.map((f): [string, string] => [f.staged, `${base}${decl.table}/${f.rel}`]),
      side: [
        ...rej.map((f): [string, string] => [f.staged, `${base}${REJECTS}/${decl.table}/${f.rel}`]),
        ...pages.map((f): [string, string] => [f.staged, `${base}${RAW}/${decl.table}/${f.rel}`]),
      ],
      rows: batch.rows,
      rejected: batch.rejects.length,
    };
  }
}
