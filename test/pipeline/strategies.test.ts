// The refresh strategies and the merge driver, against fakes of the store, the Parquet writer and
// the client: no DuckDB, no service, no lake on disk but a staging folder.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { STREAM_BY_TABLE } from '../../src/streams/index.js';
import { PartitionRun, type Job } from '../../src/pipeline/partition.js';
import { newStreamReport } from '../../src/pipeline/report.js';
import { strategyOf } from '../../src/pipeline/strategies.js';
import type { TableMergeInput } from '../../src/pipeline/merge.js';
import { ServiceError } from '../../src/errors.js';
import { TABLE_PARTITION, type PartitionState, type StateStore } from '../../src/state/store.js';
import type { ParquetWriter } from '../../src/load/parquet.js';
import type { Client } from '../../src/sources/client.js';
import type { StreamDecl } from '../../src/decl/stream.js';
import { ercTransfer, TRANSFER_TOKEN, transfersClient } from '../fakes.js';

const quiet = pino({ level: 'silent' });
const SUBNETS = STREAM_BY_TABLE.get('subnets')!;

interface Commit {
  state: PartitionState;
  moves: Array<[string, string]>;
  deletes: string[];
}

/** A store that keeps states in memory and records every commit. */
function fakeStore(states: PartitionState[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'strategies-'));
  const held = new Map(states.map((s) => [`${s.table}\0${s.partition}`, s]));
  const commits: Commit[] = [];
  const store = {
    lake: dir,
    load: (table: string, partition: string): PartitionState => held.get(`${table}\0${partition}`) ?? { table, partition, files: [], rows: 0, rejects: 0, cursor: {} },
    stagingDir: (table: string, partition: string) => join(dir, '_staging', table, partition),
    local: async (files: string[]) => files,
    commit: async (state: PartitionState, moves: Array<[string, string]>, deletes: string[] = []) => {
      commits.push({ state, moves, deletes });
      held.set(`${state.table}\0${state.partition}`, state);
    },
  };
  return { store: store as unknown as StateStore, commits };
}

/** A writer that names a file for each call and counts a row a fresh file; `merges` records what each merge was given. */
function fakeWriter() {
  const merges: Array<{ fresh: string[]; old: string[] }> = [];
  let n = 0;
  const writer = {
    write: async (_decl: StreamDecl, _rows: string, count: number) => (count ? [{ staged: `staged-${++n}.parquet`, rel: `f${n}.parquet` }] : []),
    writeRejects: async () => [],
    merge: async (_decl: StreamDecl, fresh: string[], old: string[]) => {
      merges.push({ fresh, old });
      return [{ staged: `merged-${++n}.parquet`, rel: `m${n}.parquet` }];
    },
    countRowsOf: async (files: string[]) => files.length,
  };
  return { writer: writer as unknown as ParquetWriter, merges };
}

const subnet = (id: string) => ({ subnetId: id, createBlockTimestamp: 1700000000, createBlockIndex: 1, isL1: false, blockchains: [] });

/** A data service of pages of subnets; `refuse` says which requests (numbered from 1) it answers 400. */
function fakeClient(pages: Array<{ ids: string[]; next?: string }>, refuse: (n: number, token?: string) => boolean = () => false) {
  const asked: Array<string | undefined> = [];
  const client = {
    baseUrl: 'http://fake',
    get: async (_path: string, query: Record<string, string>) => {
      asked.push(query.pageToken);
      if (refuse(asked.length, query.pageToken)) throw new ServiceError('400 Bad Request: page token expired', 400, '/v1/networks/{network}/subnets', false);
      const at = query.pageToken === undefined ? 0 : Number(query.pageToken);
      const page = pages[at]!;
      return { subnets: page.ids.map(subnet), ...(page.next ? { nextPageToken: page.next } : {}) };
    },
    post: async () => {
      throw new Error('no posts');
    },
  };
  return { client: client as unknown as Client, asked };
}

function jobOf(decl: StreamDecl, id: string, fullRefresh = false): Job {
  const [partition] = decl.partitions({ table: decl.table, network: id });
  return { decl, cfg: { table: decl.table, network: id }, partition: partition!, report: newStreamReport(decl.table), fullRefresh };
}

const THREE_PAGES = [{ ids: ['a', 'b'], next: '1' }, { ids: ['c'], next: '2' }, { ids: ['d'] }];

describe('merge into the table (subnets)', () => {
  it('stages a partition for the table: its rows wait in staging, its state commits without data files', async () => {
    const { store, commits } = fakeStore();
    const { writer } = fakeWriter();
    const { client } = fakeClient(THREE_PAGES);
    const job = jobOf(SUBNETS, 'mainnet');
    const out = await strategyOf(SUBNETS).refresh(new PartitionRun(job, store, writer, client, { logger: quiet, keepRaw: false, runId: 'r' }));
    expect(out?.fresh).toEqual(['staged-1.parquet']);
    expect(commits).toHaveLength(1);
    expect(commits[0]!.state.partition).toBe('mainnet');
    expect(commits[0]!.state.files).toEqual([]);
    expect(commits[0]!.state.rows).toBe(4);
    expect(job.report.pages).toBe(3);
  });

  it('a refused page token restarts the listing from its first page, up to 3 times a run, then fails with the service\'s answer', async () => {
    const { store } = fakeStore();
    const { writer } = fakeWriter();
    // The second page's token is refused twice: the listing is paged from its start again each time.
    const twice = fakeClient(THREE_PAGES, (n, token) => token === '1' && n <= 5);
    const job = jobOf(SUBNETS, 'mainnet');
    const out = await strategyOf(SUBNETS).refresh(new PartitionRun(job, store, writer, twice.client, { logger: quiet, keepRaw: false, runId: 'r' }));
    expect(twice.asked).toEqual([undefined, '1', undefined, '1', undefined, '1', '2']);
    expect(job.report.restarts).toBe(2);
    // Rows of the listings cut short are not kept: one batch of the four rows.
    expect(out?.fresh).toHaveLength(1);
    const always = fakeClient(THREE_PAGES, (_n, token) => token === '1');
    const failing = jobOf(SUBNETS, 'fuji');
    const run = strategyOf(SUBNETS).refresh(new PartitionRun(failing, store, writer, always.client, { logger: quiet, keepRaw: false, runId: 'r' }));
    await expect(run).rejects.toThrow(/page token expired/);
    expect(failing.report.restarts).toBe(3);
    expect(always.asked.filter((t) => t === undefined)).toHaveLength(4);
  });

  it("commits the table once its partitions are done: a full refresh only when every partition fetched, a replace only on a complete fetch", async () => {
    const finish = async (decl: StreamDecl, fullRefresh: boolean, fetched: boolean[]) => {
      const { store, commits } = fakeStore([{ table: decl.table, partition: TABLE_PARTITION, files: [`${decl.table}/old.parquet`], rows: 5, rejects: 0, cursor: {} }]);
      const { writer, merges } = fakeWriter();
      const jobs = fetched.map((_, i) => jobOf(decl, `n${i}`, fullRefresh));
      const outs = fetched.map((ok, i): TableMergeInput | undefined => (ok ? { job: jobs[i]!, fresh: [`fresh-${i}.parquet`] } : undefined));
      await strategyOf(decl).finish(jobs, outs, store, (f) => f(writer), 'r');
      return { commits, merges };
    };
    const merged = await finish(SUBNETS, false, [true, false]);
    expect(merged.merges).toEqual([{ fresh: ['fresh-0.parquet'], old: ['subnets/old.parquet'] }]);
    expect(merged.commits.map((c) => c.state.partition)).toEqual([TABLE_PARTITION]);
    expect(merged.commits[0]!.deletes).toEqual(['subnets/old.parquet']);
    expect((await finish(SUBNETS, true, [true, false])).commits).toEqual([]);
    expect((await finish(SUBNETS, true, [true, true])).merges).toEqual([{ fresh: ['fresh-0.parquet', 'fresh-1.parquet'], old: [] }]);
    const replace = { ...SUBNETS, refresh: 'replace' } as StreamDecl;
    expect((await finish(replace, false, [true, true])).merges[0]!.old).toEqual([]);
    expect((await finish(replace, false, [true, false])).merges[0]!.old).toEqual(['subnets/old.parquet']);
  });

  it('works the partitions of a table as one job that holds the table\'s state; others each their own', () => {
    expect(strategyOf(SUBNETS).shared).toBe(TABLE_PARTITION);
    for (const table of ['erc_transfers', 'chain_metrics', 'native_balances']) expect(strategyOf(STREAM_BY_TABLE.get(table)!).shared, table).toBeUndefined();
  });

  it("commits a rebuild: the table's rows from every partition's replay, each partition keeping its raw pages and its new rejects", async () => {
    const raw = '_raw/subnets/mainnet-1.jsonl.gz';
    const state: PartitionState = { table: 'subnets', partition: 'mainnet', files: [raw, '_rejects/subnets/old.parquet'], rows: 4, rejects: 1, cursor: {} };
    const { store, commits } = fakeStore([{ table: 'subnets', partition: TABLE_PARTITION, files: ['subnets/old.parquet'], rows: 4, rejects: 0, cursor: {} }, state]);
    const { writer, merges } = fakeWriter();
    const rows = await strategyOf(SUBNETS).commitRebuild(SUBNETS, [{ state, data: [['staged-a.parquet', 'subnets/a.parquet']], rejects: [['staged-r.parquet', '_rejects/subnets/r.parquet']], rejected: 2, final: false }], store, writer);
    expect(rows).toBe(1);
    // Replayed rows replace the table's: nothing of the old files is merged in.
    expect(merges).toEqual([{ fresh: ['staged-a.parquet'], old: [] }]);
    expect(commits.map((c) => [c.state.partition, c.state.files, c.deletes])).toEqual([
      [TABLE_PARTITION, ['subnets/m1.parquet'], ['subnets/old.parquet']],
      ['mainnet', [raw, '_rejects/subnets/r.parquet'], ['_rejects/subnets/old.parquet']],
    ]);
  });
});

describe('merge into the partition (chain_metrics)', () => {
  it("commits a rebuild per partition: a final replay as it is, another merged by key; old data goes, raw pages stay", async () => {
    const decl = STREAM_BY_TABLE.get('chain_metrics')!;
    const raw = '_raw/chain_metrics/p-1.jsonl.gz';
    const a: PartitionState = { table: decl.table, partition: 'a', files: [raw, 'chain_metrics/old-a.parquet'], rows: 3, rejects: 0, cursor: {} };
    const b: PartitionState = { ...a, partition: 'b', files: [raw, 'chain_metrics/old-b.parquet'] };
    const { store, commits } = fakeStore([a, b]);
    const { writer, merges } = fakeWriter();
    const rows = await strategyOf(decl).commitRebuild(
      decl,
      [
        { state: a, data: [['s1.parquet', 'chain_metrics/n1.parquet']], rejects: [], rejected: 0, final: true },
        { state: b, data: [['s2.parquet', 'chain_metrics/n2.parquet'], ['s3.parquet', 'chain_metrics/n3.parquet']], rejects: [], rejected: 0, final: false },
      ],
      store,
      writer,
    );
    expect(merges.map((m) => m.fresh)).toEqual([['s2.parquet', 's3.parquet']]);
    expect(commits.map((c) => [c.state.partition, c.state.files, c.deletes, c.state.rows])).toEqual([
      ['a', [raw, 'chain_metrics/n1.parquet'], ['chain_metrics/old-a.parquet'], 1],
      ['b', [raw, 'chain_metrics/m1.parquet'], ['chain_metrics/old-b.parquet'], 1],
    ]);
    expect(rows).toBe(2);
  });
});

describe('append (erc_transfers)', () => {
  const decl = STREAM_BY_TABLE.get('erc_transfers')!;
  const token = TRANSFER_TOKEN;
  const transfer = ercTransfer;
  /** Newest first, as the service lists them: two transfers a page, blocks 150 down to 100, within [100, 200). */
  const PAGES = [
    { items: [transfer(150, 0), transfer(140, 0)], next: '1' },
    { items: [transfer(130, 0), transfer(120, 0)], next: '2' },
    { items: [transfer(100, 0)] },
  ];
  const client = (refuse?: (token?: string) => boolean) => transfersClient(PAGES, refuse);
  const job = (fullRefresh = false): Job => {
    const cfg = { table: decl.table, chainId: '43114', contracts: [token], startBlock: 100, endBlock: 200, chunks: 1 };
    return { decl, cfg, partition: decl.partitions(cfg)[0]!, report: newStreamReport(decl.table), fullRefresh };
  };

  it('commits batch by batch with the token that continues the listing, then the window done at its end', async () => {
    const { store, commits } = fakeStore();
    const { writer } = fakeWriter();
    const { client: c, asked } = client();
    await strategyOf(decl).refresh(new PartitionRun(job(), store, writer, c, { logger: quiet, keepRaw: false, runId: 'r', flushRows: 2 }));
    expect(asked).toEqual([undefined, '1', '2']);
    expect(commits.length).toBeGreaterThanOrEqual(2);
    // Every commit but the last holds the token of the page after it.
    for (const c of commits.slice(0, -1)) expect(JSON.stringify(c.state.cursor)).toMatch(/"token":"[12]"/);
    const last = commits.at(-1)!.state;
    expect(last.cursor.nextBlock).toBe(200);
    expect(last.cursor.window).toBeUndefined();
    expect(last.rows).toBe(5);
    expect(last.files).toEqual(commits.flatMap((c) => c.moves.map(([, t]) => t)));
  });

  it('a full refresh pages into _rebuild/ and swaps the rebuilt files in at its end, the old ones deleted', async () => {
    const old: PartitionState = { table: decl.table, partition: job().partition.id, files: ['erc_transfers/chain=43114/old.parquet'], rows: 9, rejects: 0, cursor: { nextBlock: 200 } };
    const { store, commits } = fakeStore([old]);
    const { writer } = fakeWriter();
    await strategyOf(decl).refresh(new PartitionRun(job(true), store, writer, client().client, { logger: quiet, keepRaw: false, runId: 'r', flushRows: 2 }));
    const staged = commits.slice(0, -1);
    expect(staged.every((c) => c.moves.every(([, t]) => t.startsWith('_rebuild/')) && c.state.files.includes(old.files[0]!))).toBe(true);
    const swap = commits.at(-1)!;
    expect(swap.state.rebuild).toBeUndefined();
    expect(swap.state.rows).toBe(5);
    expect(swap.deletes).toEqual(old.files);
    expect(swap.moves.map(([, t]) => t)).toEqual(swap.state.files);
  });

  it('a refused page token restarts the listing at its first page; the rows committed before are not counted again', async () => {
    const { store, commits } = fakeStore();
    const { writer } = fakeWriter();
    let refused = 0;
    const { client: c, asked } = client((t) => t === '2' && refused++ === 0);
    const p = job();
    await strategyOf(decl).refresh(new PartitionRun(p, store, writer, c, { logger: quiet, keepRaw: false, runId: 'r', flushRows: 2 }));
    expect(p.report.restarts).toBe(1);
    expect(asked).toEqual([undefined, '1', '2', undefined, '1', '2']);
    expect(commits.at(-1)!.state.cursor.nextBlock).toBe(200);
    expect(commits.at(-1)!.state.rows).toBe(5);
  });
});
