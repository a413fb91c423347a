// Fakes of what the pipeline's drivers talk to: the queue of a worker (pipeline/worker.ts) in
// memory, its leases lost when a test says so; a store of partition states in memory whose commits
// can be held or failed, and a Parquet writer that writes nothing (pipeline/batch.ts,
// partition.ts) and a data service of ERC transfers; a logger that keeps what it was told. Time is a FakeClock's: nothing here waits
// on the machine's.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { LeaseLost, QueueUnavailable, type QueuedJob } from '../src/cluster/queue.js';
import type { WorkerLease, WorkerQueue } from '../src/pipeline/worker.js';
import type { StreamDecl } from '../src/decl/stream.js';
import type { ParquetWriter, WrittenFile } from '../src/load/parquet.js';
import { STAGING, type PartitionState, type StateStore } from '../src/state/store.js';
import { ServiceError } from '../src/errors.js';
import type { Client } from '../src/sources/client.js';

/** A lease of a FakeQueue: its guard runs a commit unless the lease was lost or let go. */
export class FakeLease implements WorkerLease {
  released = false;
  lostReason?: string;
  /** Commits run under this lease. */
  commits = 0;

  constructor(
    readonly key: string,
    readonly run: string,
    private readonly onLost: (reason: string) => void,
  ) {}

  /** Another worker took the key over, or the run ended: found at a renewal. */
  lose(reason = `the lease of ${this.key} was taken over or its run ended`): void {
    if (this.lostReason || this.released) return;
    this.lostReason = reason;
    this.onLost(reason);
  }

  async guard<T>(commit: () => Promise<T>): Promise<T> {
    if (this.lostReason || this.released) throw new LeaseLost(`${this.lostReason ?? 'released'}: not committing`);
    const out = await commit();
    this.commits++;
    return out;
  }

  async release(): Promise<void> {
    this.released = true;
  }
}

interface FakeJob {
  id: string;
  data: { run: string; key: string } & Record<string, unknown>;
  state: 'created' | 'active' | 'completed' | 'failed';
}

/** A queue in memory: jobs handed out in order, each once until failed back; what was said to it is kept in `events`. */
export class FakeQueue implements WorkerQueue {
  readonly jobs: FakeJob[] = [];
  /** What the worker told the queue, in order. */
  readonly events: Array<{ kind: 'complete' | 'fail'; id: string; output?: unknown; message?: string }> = [];
  readonly leases: FakeLease[] = [];
  readonly runs = new Map<string, 'live' | 'silent' | 'ended'>();
  /** Keys a live worker elsewhere holds: lease() refuses them. */
  readonly heldElsewhere = new Set<string>();
  /** Calls that find the database away until set back to false. */
  away = false;
  /** take() hands out nothing: the jobs left are for other workers. */
  paused = false;
  /** Heard at every take(): a test's hook into the worker's loop. */
  onTake?: () => void;
  /** A commit to the queue that fails with this (once), as a database away during complete(). */
  failNextComplete?: Error;
  private ids = 0;

  add(run: string, key: string, data: Record<string, unknown>): string {
    const id = `job-${++this.ids}`;
    this.jobs.push({ id, data: { ...data, run, key }, state: 'created' });
    if (!this.runs.has(run)) this.runs.set(run, 'live');
    return id;
  }

  private check(): void {
    if (this.away) throw new QueueUnavailable("the queue's database fake did not answer");
  }

  async runState(runId: string): Promise<'live' | 'silent' | 'ended'> {
    this.check();
    return this.runs.get(runId) ?? 'ended';
  }

  async take<T>(_queue: string): Promise<QueuedJob<T> | undefined> {
    this.onTake?.();
    this.check();
    const job = this.paused ? undefined : this.jobs.find((j) => j.state === 'created');
    if (!job) return undefined;
    job.state = 'active';
    return { id: job.id, data: job.data as T & { run: string; key: string } };
  }

  async complete(_queue: string, id: string, output: object): Promise<void> {
    this.check();
    const err = this.failNextComplete;
    this.failNextComplete = undefined;
    if (err) throw err;
    this.job(id).state = 'completed';
    this.events.push({ kind: 'complete', id, output });
  }

  async fail(_queue: string, id: string, message: string): Promise<void> {
    this.check();
    // Handed out again, as pg-boss retries a failed job.
    this.job(id).state = 'created';
    this.events.push({ kind: 'fail', id, message });
  }

  async progress(): Promise<void> {
    this.check();
  }

  async lease(key: string, runId: string, _boundMs: number, onLost: (reason: string) => void): Promise<FakeLease | undefined> {
    this.check();
    if (this.heldElsewhere.has(key)) return undefined;
    const l = new FakeLease(key, runId, onLost);
    this.leases.push(l);
    return l;
  }

  private job(id: string): FakeJob {
    const j = this.jobs.find((x) => x.id === id);
    if (!j) throw new Error(`no job ${id}`);
    return j;
  }
}

/** A pino-shaped logger that keeps each message with its level. */
export function recordingLogger(): Logger & { lines: Array<{ level: string; msg: string; obj?: unknown }> } {
  const lines: Array<{ level: string; msg: string; obj?: unknown }> = [];
  const at =
    (level: string) =>
    (obj: unknown, msg?: string): void => {
      if (typeof obj === 'string') lines.push({ level, msg: obj });
      else lines.push({ level, msg: msg ?? '', obj });
    };
  const logger = { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), trace: at('trace'), fatal: at('fatal') };
  return logger as unknown as Logger & { lines: typeof lines };
}

/** A commit as a FakeStore was asked it. */
export interface FakeCommit {
  state: PartitionState;
  moves: Array<[string, string]>;
  deletes: string[];
}

/**
 * A store of partition states in memory, staging in a folder of its own. `failCommit` fails the
 * commit of that number (from 1) with the error given; `hold` keeps each commit under way until
 * the test lets it go, so that what waits for it shows.
 */
export class FakeStore {
  readonly lake = mkdtempSync(join(tmpdir(), 'cl-fake-store-'));
  readonly commits: FakeCommit[] = [];
  /** Commits asked for, landed or not. */
  asked = 0;
  failCommit?: { at: number; err: Error };
  hold = false;
  private readonly waiting: Array<() => void> = [];
  private readonly states = new Map<string, PartitionState>();

  /** As a StateStore, for the drivers that take one: only the methods above are there. */
  get asStore(): StateStore {
    return this as unknown as StateStore;
  }

  load(table: string, partition: string): PartitionState {
    return this.states.get(`${table}\0${partition}`) ?? { table, partition, files: [], rows: 0, rejects: 0, cursor: {} };
  }

  stagingDir(table: string, partition: string): string {
    return join(this.lake, STAGING, table, `${partition}-${this.asked}-${Math.random().toString(36).slice(2, 8)}`);
  }

  async commit(state: PartitionState, moves: Array<[string, string]>, deletes: string[] = []): Promise<void> {
    const n = ++this.asked;
    if (this.hold) await new Promise<void>((r) => this.waiting.push(r));
    if (this.failCommit?.at === n) throw this.failCommit.err;
    this.commits.push({ state, moves, deletes });
    this.states.set(`${state.table}\0${state.partition}`, state);
  }

  /** Commits held (hold) and not let go yet. */
  get held(): number {
    return this.waiting.length;
  }

  /** Lets the oldest held commit go on. */
  letOne(): void {
    this.waiting.shift()?.();
  }

  remove(): void {
    rmSync(this.lake, { recursive: true, force: true });
  }
}

/**
 * A Parquet writer that writes nothing: it names a file for each batch with rows and records what
 * it was given (the batch's lines, read from the spool). `failAt` fails a call of that kind and number.
 */
export class FakeWriter {
  readonly writes: Array<{ table: string; rows: number; lines: string[]; stem: string; folder: string }> = [];
  readonly rejects: Array<{ table: string; partition: string; runId: string; count: number; stem: string }> = [];
  failAt?: { kind: 'write' | 'writeRejects'; n: number; err: Error };
  private n = 0;

  get asWriter(): ParquetWriter {
    return this as unknown as ParquetWriter;
  }

  private readonly calls = { write: 0, writeRejects: 0 };

  private fails(kind: 'write' | 'writeRejects'): void {
    const n = ++this.calls[kind];
    if (this.failAt?.kind === kind && this.failAt.n === n) throw this.failAt.err;
  }

  async write(decl: StreamDecl, rowsPath: string, rows: number, dir: string, stem: string, folder: string): Promise<WrittenFile[]> {
    this.fails('write');
    const text = existsSync(rowsPath) ? readFileSync(rowsPath, 'utf8') : '';
    this.writes.push({ table: decl.table, rows, lines: text.split('\n').filter((l) => l !== ''), stem, folder });
    if (!rows) return [];
    const name = `${stem}-${++this.n}.parquet`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, name), '');
    return [{ staged: join(dir, name), rel: folder ? `${folder}/${name}` : name }];
  }

  async writeRejects(table: string, partition: string, runId: string, rejects: unknown[], dir: string, stem: string): Promise<WrittenFile[]> {
    this.fails('writeRejects');
    this.rejects.push({ table, partition, runId, count: rejects.length, stem });
    if (!rejects.length) return [];
    const name = `${stem}.rejects.parquet`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, name), '');
    return [{ staged: join(dir, name), rel: name }];
  }
}

/** The token the ERC transfers of transfersClient() move. */
export const TRANSFER_TOKEN = '0x' + 'ab'.repeat(20);

/** An ERC-20 transfer as the data service lists one (erc_transfers): the `i`th of block `block`. */
export const ercTransfer = (block: number, i = 0) => ({
  blockNumber: String(block),
  blockTimestamp: 1700000000 + block,
  blockHash: '0x' + block.toString(16).padStart(64, '0'),
  txHash: '0x' + (block * 10 + i).toString(16).padStart(64, '0'),
  logIndex: i,
  from: { address: '0x' + '01'.repeat(20) },
  to: { address: '0x' + '02'.repeat(20) },
  value: '100000000000000000000000000000000000000001',
  erc20Token: { address: TRANSFER_TOKEN, name: 'T', symbol: 'T', decimals: 18 },
});

/**
 * A data service that lists `pages` of transfers, the page token being the next page's index, and
 * answers the chain's head at block 1000; `refuse` says which page tokens it answers 400.
 */
export function transfersClient(pages: Array<{ items: object[]; next?: string }>, refuse: (token?: string) => boolean = () => false) {
  const asked: Array<string | undefined> = [];
  const fake = {
    baseUrl: 'http://fake',
    get: async (path: string, query: Record<string, string>) => {
      // The chain's head, which a window's end is checked against.
      if (path.endsWith('/blocks')) return { blocks: [{ blockNumber: '1000', blockTimestamp: 1700001000 }] };
      asked.push(query.pageToken);
      if (refuse(query.pageToken)) throw new ServiceError('400 Bad Request: page token expired', 400, path, false);
      const page = pages[query.pageToken === undefined ? 0 : Number(query.pageToken)]!;
      return { transfers: page.items, ...(page.next ? { nextPageToken: page.next } : {}) };
    },
    post: async () => {
      throw new Error('no posts');
    },
  };
  return { client: fake as unknown as Client, asked };
}
