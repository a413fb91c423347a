// One partition of a run, as both refreshes use it: its committed state, its batch path, the
// pages of its listing (the default paginator or the declaration's extractor), and what a batch
// adds to the stream's report. How it refreshes is append.ts or merge.ts.
import type { Logger } from 'pino';
import type { Client } from '../sources/client.js';
import type { ExtractContext, Partition, StreamConfig, StreamDecl } from '../decl/stream.js';
import type { Page, PaginateOptions } from '../decl/request.js';
import { paginate, PageTokenError } from '../extract/paginate.js';
import type { ParquetWriter } from '../load/parquet.js';
import type { StateStore, PartitionState } from '../state/store.js';
import PQueue from 'p-queue';
import type { Transformer } from '../transform/rows.js';
import { RunError } from '../errors.js';
import { BatchPath, type Moves, type Staged } from './batch.js';
import { nextSeq, type ListingTag } from '../state/names.js';
import type { StreamReport } from './report.js';
import type { SpecOptions } from './spec.js';
import { addNames } from '../text.js';

export interface Job {
  decl: StreamDecl;
  cfg: StreamConfig;
  partition: Partition;
  report: StreamReport;
  /** Rebuilt from scratch (--full-refresh of its table): resolved once, when the run is planned. */
  fullRefresh: boolean;
}

/** What a partition takes from the run's options. */
export type PartitionOptions = Pick<SpecOptions, 'flushRows' | 'keepRaw'> & {
  logger: Logger;
  signal?: AbortSignal;
};

/** How many times one partition restarts its listing after a refused page token, in one run. */
const MAX_RESTARTS = 3;

function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(values[k] ?? ''));
}

export class PartitionRun {
  state: PartitionState;
  readonly batches: BatchPath;
  readonly table: string;

  constructor(
    readonly job: Job,
    readonly store: StateStore,
    readonly writer: ParquetWriter,
    private readonly client: Client,
    private readonly o: PartitionOptions & { runId: string },
  ) {
    this.table = job.decl.table;
    // The partition's values (chain_id, network, ...) are kept so `rebuild` can re-derive its rows.
    this.state = { ...store.load(job.decl.table, job.partition.id), values: job.partition.values };
    this.seq = nextSeq([...this.state.files, ...(this.state.rebuild?.files ?? [])]);
    this.batches = new BatchPath(job.decl, job.partition, store, writer, this.batchOptions);
  }

  /** The place of the partition's next file in its order (state/names.ts): after every file it holds. */
  private seq: number;
  nextSeq(): number {
    return this.seq++;
  }

  private get batchOptions() {
    return { runId: this.o.runId, keepRaw: this.o.keepRaw !== false, seq: () => this.nextSeq() };
  }

  get fullRefresh(): boolean {
    return this.job.fullRefresh;
  }

  get flushRows(): number {
    return this.o.flushRows ?? 10_000;
  }

  get pageSize(): Record<string, string> {
    const { decl, cfg } = this.job;
    return decl.pageSize.max === 0 ? {} : { pageSize: String(cfg.pageSize ?? decl.pageSize.default) };
  }

  lastRun(complete: boolean): PartitionState['lastRun'] {
    return { runId: this.o.runId, at: new Date().toISOString(), status: complete ? 'complete' : 'partial' };
  }

  /** The commits under way, one after the other (settled() awaits them). */
  private committing: Promise<unknown> = Promise.resolve();

  /**
   * Commits the partition's next state (StateStore.commit) and keeps it. The commit goes on while
   * the next batch is fetched (on object storage it is several requests); the next stage() waits for it.
   */
  commit(next: PartitionState, moves: Moves, deletes: string[] = []): void {
    this.committing = this.committing.then(() => this.store.commit(next, moves, deletes));
    this.committing.catch(() => undefined); // thrown by the next stage() or settled()
    const { pending: _, ...state } = next;
    this.state = state;
  }

  /** Waits for the commits under way; throws the first that failed. */
  async settled(): Promise<void> {
    await this.committing;
  }

  /**
   * A page into the batch. One that brings no new row and says there are more is a loop (a
   * service that ignores the page token sends the same rows under a fresh one, endlessly): the
   * listing stops, nothing of that page in the batch.
   */
  page(page: Page, batches = this.batches): void {
    this.job.report.pages++;
    const outcome = batches.add(page);
    if (outcome.dropped && page.next !== undefined) {
      throw new RunError(
        `${this.job.decl.endpoint}: the service sent the same rows again (a page of ${outcome.twice} rows, none new to this listing, with a next page token); stopping this partition`,
      );
    }
  }

  /** The run's signal: a stop (SIGTERM, SIGINT) ends the partition after its commits so far. */
  get signal(): AbortSignal | undefined {
    return this.o.signal;
  }

  /** A batch path of its own, for one of several listings of the partition fetched at once (chunks); `listing` names its files. */
  newBatchPath(transformer: Transformer, listing?: ListingTag): BatchPath {
    const { decl, partition } = this.job;
    const batches = new BatchPath(decl, partition, this.store, this.writer, this.batchOptions, transformer);
    if (listing) batches.retag(listing);
    return batches;
  }

  /** Requests the service could have under way beyond those it has (ClientPort.room): room for another chunk. */
  get room(): number {
    return this.client.room?.() ?? 0;
  }

  /** Counts one of the partition's chunks toward the service's room while it pages. */
  openListing(): () => void {
    return this.client.openListing?.() ?? (() => undefined);
  }

  /**
   * Writes the batch so far to staging, named for where each file will land (under `base`). The
   * batches of a partition's chunks are written one at a time: they share its writer.
   */
  stage(base = '', batches = this.batches): Promise<Staged> {
    return this.writes.add(() => this.write(base, batches));
  }

  private readonly writes = new PQueue({ concurrency: 1 });
  private saidOutside = false;

  /** Something the run says of the partition that is not an error: in the report and the log. */
  note(message: string): void {
    this.job.report.notes.push(`${this.job.partition.id}: ${message}`);
    this.o.logger.warn({ table: this.table, partition: this.job.partition.id }, message);
  }

  private async write(base: string, batches: BatchPath): Promise<Staged> {
    const { decl, partition, report } = this.job;
    await this.committing;
    const closed = batches.close();
    const staged = await batches.write(closed, base);
    const { batch } = closed;
    report.rows += batch.rows;
    report.rejects += batch.rejects.length;
    report.over38 += batch.over38;
    report.skipped += batch.skipped;
    report.sentTwice += batch.sentTwice;
    if (batch.outside) {
      report.outside += batch.outside;
      report.outsideFirst ??= batch.outsideFirst;
      // Said once a partition: a service that sends such rows mostly sends many.
      if (!this.saidOutside) this.o.logger.warn({ table: decl.table, partition: partition.id, outside: batch.outside, first: batch.outsideFirst }, 'rows outside what was asked or can exist, dropped (never committed)');
      this.saidOutside = true;
    }
    if (batch.sentTwice) this.o.logger.warn({ table: decl.table, partition: partition.id, sentTwice: batch.sentTwice }, 'rows sent twice by the service, dropped');
    addNames(report.extraFields, batch.extraFields);
    if (batch.rejects.length) this.o.logger.warn({ table: decl.table, partition: partition.id, rejects: batch.rejects.length, first: batch.rejects[0]!.reason }, 'rows rejected');
    return staged;
  }

  /**
   * The partition's requests as an extractor sees them, for `query` from `startToken` on. Every
   * listing of the partition (its chunks too) is one flow: partitions share the budget equally,
   * whatever the number of their chunks.
   */
  context(query: Record<string, string> = { ...this.job.partition.query }, startToken?: string, signal = this.o.signal): ExtractContext {
    const { decl, partition, report, cfg } = this.job;
    const request = { endpoint: decl.endpoint, stats: report, signal, weight: decl.weight, flow: `${decl.table}/${partition.id}`, exact: decl.exactNumbers };
    const base: PaginateOptions = {
      ...request,
      path: fillPath(decl.endpoint, partition.path),
      query,
      items: decl.items,
      startToken,
      // Pages as bytes only where the paginator hands them straight to the transform.
      bytes: decl.bytesSafe === true && !decl.extract,
    };
    return {
      ...request,
      client: this.client,
      path: base.path,
      query,
      partition,
      config: cfg,
      startToken,
      paginate: (o = {}) => paginate(this.client, { ...base, ...o }),
    };
  }

  /** The pages of the partition's listing for `query`, from `startToken` on; `signal` stops it (default: the run's). */
  pages(query: Record<string, string>, startToken?: string, signal?: AbortSignal): AsyncGenerator<Page> {
    const x = this.context(query, startToken, signal ?? this.o.signal);
    if (!this.job.decl.extract) return x.paginate();
    return this.job.decl.extract({ ...x, paginate: (o = {}) => x.paginate({ startToken: undefined, ...o }) });
  }

  /**
   * Pages a listing with `list`; after a refused page token (an expired one) `restart` puts the
   * listing back at its first page and it is paged again, up to MAX_RESTARTS times a run.
   */
  async restarting<T>(list: () => Promise<T>, restart: () => void): Promise<T> {
    for (let restarts = 1; ; restarts++) {
      try {
        return await list();
      } catch (err) {
        if (!(err instanceof PageTokenError)) throw err;
        if (restarts > MAX_RESTARTS) throw err.cause;
        this.job.report.restarts++;
        this.o.logger.warn({ table: this.table, partition: this.job.partition.id, err: err.message }, 'page token refused: restarting the listing from its first page');
        restart();
      }
    }
  }
}
