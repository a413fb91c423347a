// A commit rolled forward after a kill is published once: the process that began it may have
// published it already, and a later commit that removed files may have expired its snapshot since.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { DuckDBInstance } from '@duckdb/node-api';
import { StateStore, type TableChange } from '../../src/state/store.js';
import { icebergPublisher, icebergReader, lakeUri } from '../../src/iceberg/table.js';

async function lakeWith(files: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'cl-publish-'));
  mkdirSync(join(dir, 'blocks'));
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  for (const [i, f] of files.entries()) await conn.run(`COPY (SELECT '43114' AS chain_id, CAST(${100 + i} AS BIGINT) AS block_number) TO '${join(dir, 'blocks', f)}' (FORMAT parquet)`);
  conn.closeSync();
  return dir;
}

const change = (commit: string, added: string[], removed: string[] = [], more: Partial<TableChange> = {}): TableChange => ({
  table: 'blocks',
  values: { chain_id: '43114' },
  added: added.map((f) => `blocks/${f}`),
  removed: removed.map((f) => `blocks/${f}`),
  commit,
  ...more,
});

/** A process's publisher: its own memory of what it published last. */
const publisherOf = (lake: string) => new StateStore(lake, { publisher: icebergPublisher }).publisher!;

async function snapshotFiles(lake: string): Promise<string[]> {
  const store = new StateStore(lake);
  return (await icebergReader(store.objects, lakeUri(store)).snapshotFiles('blocks'))!.files;
}

describe('a commit rolled forward', () => {
  it('published by the killed process, after this process has published another: not published again', async () => {
    const lake = await lakeWith(['a.parquet', 'b.parquet', 'c.parquet']);
    const killed = publisherOf(lake);
    await killed.publish(change('A', ['a.parquet']));
    await killed.publish(change('B', ['b.parquet']));
    // The next process rolls forward two partitions' pending commits: C was not published, B was.
    const next = publisherOf(lake);
    await next.publish(change('C', ['c.parquet'], [], { rolledForward: true }));
    await next.publish(change('B', ['b.parquet'], [], { rolledForward: true }));
    expect(await snapshotFiles(lake)).toEqual(['blocks/a.parquet', 'blocks/b.parquet', 'blocks/c.parquet']);
  });

  it('whose snapshot a later commit removing files expired: not published again', async () => {
    const lake = await lakeWith(['a.parquet', 'b.parquet', 'd.parquet']);
    const killed = publisherOf(lake);
    await killed.publish(change('A', ['a.parquet']));
    await killed.publish(change('B', ['b.parquet']));
    const next = publisherOf(lake);
    // A compaction of another partition: its snapshot expires every earlier one, B's with them.
    await next.publish(change('D', ['d.parquet'], ['a.parquet'], { rewrite: true, rolledForward: true }));
    await next.publish(change('B', ['b.parquet'], [], { rolledForward: true }));
    expect(await snapshotFiles(lake)).toEqual(['blocks/b.parquet', 'blocks/d.parquet']);
    // One that only removes, already shown: nothing changes.
    await next.publish(change('D2', [], ['a.parquet'], { rolledForward: true }));
    expect(await snapshotFiles(lake)).toEqual(['blocks/b.parquet', 'blocks/d.parquet']);
  });

  it('not published before: published once', async () => {
    const lake = await lakeWith(['a.parquet', 'b.parquet']);
    await publisherOf(lake).publish(change('A', ['a.parquet']));
    await publisherOf(lake).publish(change('B', ['b.parquet'], [], { rolledForward: true }));
    expect(await snapshotFiles(lake)).toEqual(['blocks/a.parquet', 'blocks/b.parquet']);
  });
});
