// A partition's batches (pipeline/batch.ts BatchPath) and their commits (partition.ts), against a
// store in memory and a Parquet writer that writes nothing (test/fakes.ts): what a batch stages
// and names, what a page that loops or a restart leaves of it, the commits in the order made, one
// at a time, and a store or a writer that fails part way: nothing after it reaches the lake.
import { brotliDecompressSync } from 'node:zlib';
import { existsSync, readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { BatchPath } from '../../src/pipeline/batch.js';
import { PartitionRun, type Job } from '../../src/pipeline/partition.js';
import { newStreamReport } from '../../src/pipeline/report.js';
import { strategyOf } from '../../src/pipeline/strategies.js';
import { STREAM_BY_TABLE } from '../../src/streams/index.js';
import { Transformer } from '../../src/transform/rows.js';
import { partitionStem } from '../../src/state/names.js';
import { RAW, type PartitionState } from '../../src/state/store.js';
import type { Client } from '../../src/sources/client.js';
import { ercTransfer, FakeStore, FakeWriter, TRANSFER_TOKEN, transfersClient } from '../fakes.js';

const quiet = pino({ level: 'silent' });
const decl = STREAM_BY_TABLE.get('erc_transfers')!;
const cfg = { table: decl.table, chainId: '43114', contracts: [TRANSFER_TOKEN], startBlock: 100, endBlock: 200, chunks: 1 };
const partition = decl.partitions(cfg)[0]!;
const transfer = ercTransfer;

const page = (items: object[], next?: string) => ({ items, bytes: false, raw: Buffer.from(JSON.stringify({ transfers: items })), next });

const stores: FakeStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.remove();
});

function parts() {
  const store = new FakeStore();
  stores.push(store);
  const writer = new FakeWriter();
  let seq = 0;
  const batches = new BatchPath(decl, partition, store.asStore, writer.asWriter, { runId: 'run-1', keepRaw: true, seq: () => seq++ });
  return { store, writer, batches };
}

describe("a partition's batch", () => {
  it("goes to the writer from its spool, its files named in the partition's order for their place in the lake, its raw pages beside them", async () => {
    const { writer, batches } = parts();
    batches.add(page([transfer(150), transfer(140)], '1'));
    batches.add(page([transfer(130)]));
    const closed = batches.close();
    const first = await batches.write(closed);
    expect(first.rows).toBe(3);
    expect(writer.writes[0]!.rows).toBe(3);
    expect(writer.writes[0]!.lines).toHaveLength(3);
    expect(writer.writes[0]!.stem).toBe(partitionStem(partition.id, 0));
    expect(first.data.map(([, to]) => to)).toEqual([`${decl.table}/${writer.writes[0]!.folder ? writer.writes[0]!.folder + '/' : ''}${partitionStem(partition.id, 0)}-1.parquet`]);
    expect(first.side).toHaveLength(1);
    const [rawStaged, rawTo] = first.side[0]!;
    expect(rawTo.startsWith(`${RAW}/${decl.table}/`)).toBe(true);
    // The pages as sent, one line each, compressed.
    expect(brotliDecompressSync(readFileSync(rawStaged)).toString('utf8').trim().split('\n')).toHaveLength(2);
    // The spools are gone once written: the batch's files are all that is left to commit.
    expect(existsSync(closed.rows.path)).toBe(false);
    expect(existsSync(closed.raw.path)).toBe(false);
    // The next batch is the partition's next file, under the base it is given.
    batches.add(page([transfer(120)]));
    const second = await batches.write(batches.close(), '_rebuild/');
    expect(writer.writes[1]!.stem).toBe(partitionStem(partition.id, 1));
    expect(second.data[0]![1].startsWith(`_rebuild/${decl.table}/`)).toBe(true);
    expect(second.side[0]![1].startsWith(`_rebuild/${RAW}/${decl.table}/`)).toBe(true);
  });

  it('a page that brings no new row and says there are more leaves no trace, not even its raw page', async () => {
    const { writer, batches } = parts();
    const items = [transfer(150), transfer(140)];
    batches.add(page(items, '1'));
    expect(batches.add(page(items, '2')).dropped).toBe(true);
    const closed = batches.close();
    expect(closed.raw.lines).toBe(1);
    await batches.write(closed);
    expect(writer.writes[0]!.lines).toHaveLength(2);
  });

  it('a listing started again drops what the batch held: its rows and its raw pages', async () => {
    const { writer, batches } = parts();
    batches.add(page([transfer(150), transfer(140)], '1'));
    batches.restart(new Transformer(decl, partition));
    batches.add(page([transfer(130)]));
    const closed = batches.close();
    expect(closed.raw.lines).toBe(1);
    const staged = await batches.write(closed);
    expect(staged.rows).toBe(1);
    expect(writer.writes[0]!.lines).toHaveLength(1);
  });

  it('a writer that fails part way gives nothing to commit, and the next batch is written whole', async () => {
    const { writer, batches } = parts();
    writer.failAt = { kind: 'writeRejects', n: 1, err: new Error('disk full') };
    batches.add(page([transfer(150)]));
    // The data file was written, its rejects not: the batch is not handed on at all.
    await expect(batches.write(batches.close())).rejects.toThrow('disk full');
    expect(writer.writes).toHaveLength(1);
    writer.failAt = { kind: 'write', n: 2, err: new Error('duckdb gone') };
    batches.add(page([transfer(140)]));
    await expect(batches.write(batches.close())).rejects.toThrow('duckdb gone');
    batches.add(page([transfer(130)]));
    const staged = await batches.write(batches.close());
    expect(staged.rows).toBe(1);
    expect(writer.writes.at(-1)!.lines).toHaveLength(1);
  });
});

const job = (): Job => ({ decl, cfg, partition, report: newStreamReport(decl.table), fullRefresh: false });

const state = (n: number): PartitionState => ({ table: decl.table, partition: partition.id, files: [`f${n}`], rows: n, rejects: 0, cursor: { nextBlock: 100 + n } });

describe("a partition's commits", () => {
  it('reach the store one at a time in the order made, and a batch is staged only once those before it landed', async () => {
    const store = new FakeStore();
    stores.push(store);
    const writer = new FakeWriter();
    const p = new PartitionRun(job(), store.asStore, writer.asWriter, {} as Client, { logger: quiet, keepRaw: false, runId: 'run-1' });
    store.hold = true;
    p.commit(state(1), [['a', 'f1']]);
    p.commit(state(2), [['b', 'f2']]);
    p.page(page([transfer(150)]));
    const staged = p.stage();
    await new Promise((r) => setImmediate(r));
    expect(store.asked).toBe(1);
    expect(writer.writes).toHaveLength(0);
    store.letOne();
    await new Promise((r) => setImmediate(r));
    expect(store.asked).toBe(2);
    expect(writer.writes).toHaveLength(0);
    store.letOne();
    await staged;
    await p.settled();
    expect(store.commits.map((c) => c.state.rows)).toEqual([1, 2]);
    expect(writer.writes).toHaveLength(1);
    // The partition's state is the last one made, not the last one landed.
    expect(p.state.rows).toBe(2);
  });

  it('after a commit the store failed, nothing more reaches it: the next stage throws its error and writes nothing', async () => {
    const store = new FakeStore();
    stores.push(store);
    const writer = new FakeWriter();
    const p = new PartitionRun(job(), store.asStore, writer.asWriter, {} as Client, { logger: quiet, keepRaw: false, runId: 'run-1' });
    store.failCommit = { at: 1, err: new Error('the store refused the write') };
    p.commit(state(1), [['a', 'f1']]);
    p.commit(state(2), [['b', 'f2']]);
    p.page(page([transfer(150)]));
    await expect(p.stage()).rejects.toThrow('the store refused the write');
    await expect(p.settled()).rejects.toThrow('the store refused the write');
    expect(store.asked).toBe(1);
    expect(store.commits).toEqual([]);
    expect(writer.writes).toHaveLength(0);
  });

  it("an append whose store fails its second commit fails with the store's error, the first batch alone in the lake", async () => {
    const store = new FakeStore();
    stores.push(store);
    const writer = new FakeWriter();
    const PAGES = [
      { items: [transfer(150), transfer(140)], next: '1' },
      { items: [transfer(130), transfer(120)], next: '2' },
      { items: [transfer(100)] },
    ];
    const { client } = transfersClient(PAGES);
    store.failCommit = { at: 2, err: new Error('the store refused the write') };
    const p = new PartitionRun(job(), store.asStore, writer.asWriter, client, { logger: quiet, keepRaw: false, runId: 'run-1', flushRows: 2 });
    await expect(
      (async () => {
        await strategyOf(decl).refresh(p);
        await p.settled();
      })(),
    ).rejects.toThrow('the store refused the write');
    expect(store.commits).toHaveLength(1);
    const landed = store.commits[0]!;
    expect(landed.state.rows).toBe(2);
    expect(landed.state.files).toEqual(landed.moves.map(([, t]) => t));
    // No batch was staged after the failed commit: the third page's rows are nowhere.
    expect(writer.writes.length).toBeLessThanOrEqual(2);
    expect(store.load(decl.table, partition.id).rows).toBe(2);
  });
});
