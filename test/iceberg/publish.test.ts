// A commit rolled forward after a kill is published once: the process that began it may have
// published it already, and a later commit that removed files may have expired its snapshot since.
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { DuckDBInstance } from '@duckdb/node-api';
import { StateStore, type TableChange } from '../../src/state/store.js';
import { icebergPublisher, icebergReader, lakeUri } from '../../src/iceberg/table.js';
import { RETENTION_KEY } from '../../src/iceberg/metadata.js';
import { hostTag, tempOf, tempWriter } from '../../src/state/objects.js';

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

describe('a compaction with a retention, killed before it published', () => {
  it('is rolled forward by the next start: the snapshot names the new file, the replaced ones stay on disk, listed apart', async () => {
    const lake = await lakeWith(['a.parquet', 'b.parquet']);
    const store = new StateStore(lake, { publisher: icebergPublisher });
    const state = { table: 'blocks', partition: '43114', values: { chain_id: '43114' }, files: ['blocks/a.parquet', 'blocks/b.parquet'], rows: 2, rejects: 0, cursor: {} };
    await store.commit(state, []);
    await store.publisher!.adopt('blocks');
    await store.publisher!.expire('blocks', 3_600_000);
    // The rewritten file in staging; the commit's publish dies as a kill would end it.
    const staged = join(store.stagingDir('blocks', '43114'), 'c.parquet');
    mkdirSync(join(staged, '..'), { recursive: true });
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    await conn.run(`COPY (SELECT '43114' AS chain_id, CAST(unnest([100, 101]) AS BIGINT) AS block_number) TO '${staged}' (FORMAT parquet)`);
    conn.closeSync();
    const killed = new StateStore(lake, {
      publisher: (s) => ({ ...icebergPublisher(s), publish: () => Promise.reject(new Error('killed before it published')) }),
    });
    await expect(killed.commit({ ...state, files: ['blocks/c.parquet'] }, [[staged, 'blocks/c.parquet']], ['blocks/a.parquet', 'blocks/b.parquet'], { rewrite: true })).rejects.toThrow('killed');
    expect(new StateStore(lake).load('blocks', '43114').pending?.retains).toEqual(['blocks/a.parquet', 'blocks/b.parquet']);
    // The next start.
    const next = new StateStore(lake, { publisher: icebergPublisher });
    expect((await next.recover()).rolledForward).toBe(1);
    expect(await snapshotFiles(lake)).toEqual(['blocks/c.parquet']);
    const after = next.load('blocks', '43114');
    expect(after.pending).toBeUndefined();
    expect(after.files).toEqual(['blocks/c.parquet']);
    expect(after.retained).toEqual(['blocks/a.parquet', 'blocks/b.parquet']);
    for (const f of ['a', 'b', 'c']) expect(existsSync(join(lake, 'blocks', `${f}.parquet`)), f).toBe(true);
    // Within the hour nothing goes; the table keeps its retention.
    expect(await next.expireRetained('blocks')).toBe(0);
    const m = await icebergReader(next.objects, lakeUri(next)).current('blocks');
    expect(m!.metadata.properties[RETENTION_KEY]).toBe('3600000');
  });
});

describe('a version hint left far behind', () => {
  it('naming a version since deleted as old: the reader finds the newest one all the same', async () => {
    const files = Array.from({ length: 25 }, (_, i) => `f${i}.parquet`);
    const lake = await lakeWith(files);
    const p = publisherOf(lake);
    for (const [i, f] of files.entries()) await p.publish(change(`c${i}`, [f]));
    expect(existsSync(join(lake, 'blocks/metadata/v2.metadata.json'))).toBe(false);
    writeFileSync(join(lake, 'blocks/metadata/version-hint.text'), '2');
    const store = new StateStore(lake);
    const cur = await icebergReader(store.objects, lakeUri(store)).current('blocks');
    expect(cur!.version).toBe(25);
    expect((await snapshotFiles(lake)).length).toBe(25);
  });
});

describe('a publish killed while writing its temporary file', () => {
  it('names the temporary file by its writer\'s pid and host, read back', () => {
    expect(tempWriter(tempOf('/l/t/metadata/v3.metadata.json'))).toEqual({ pid: process.pid, host: hostTag() });
    expect(tempWriter(tempOf('/l/t/metadata/v3.metadata.json', true))).toEqual({ pid: process.pid, host: hostTag() });
    expect(tempWriter('v3.metadata.json.tmp-42-k3x9q1')).toEqual({ pid: 42 });
    expect(tempWriter('v3.metadata.json')).toBeUndefined();
  });


  it('leaves it to the next start, which deletes it; a temporary file of a writer still running stays', async () => {
    const lake = await lakeWith(['s.parquet']);
    const store = new StateStore(lake, { publisher: icebergPublisher });
    await store.commit({ ...store.load('blocks', 'p'), values: { chain_id: '43114' }, files: ['blocks/a.parquet'], rows: 1 }, [['blocks/s.parquet', 'blocks/a.parquet']]);
    const meta = join(lake, 'blocks/metadata');
    const before = readdirSync(meta).sort();
    // A pid that ran and ended: the writer killed between its write and its link or rename.
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const live = process.ppid;
    const here = hostTag();
    const elsewhere = here === '0badf00d' ? '0badf00e' : '0badf00d';
    // This host's, and one named before names had the host (its pid was this host's).
    const litter = [`v2.metadata.json.tmp-${dead}-${here}-k3x9q1`, `version-hint.text.tmp-${dead}-${here}`, `snap-1-1-x.avro.tmp-${dead}`];
    // A writer still running; another machine's sharing the folder (its pids are not ours); not a temporary name.
    const kept = [`v2.metadata.json.tmp-${live}-${here}-a1b2c3`, `v2.metadata.json.tmp-${dead}-${elsewhere}-a1b2c3`, `version-hint.text.tmp-${dead}-${elsewhere}`, 'v2.metadata.json.tmp-x', 'notes.tmp-12ab'];
    for (const f of [...litter, ...kept]) writeFileSync(join(meta, f), '{');
    const next = new StateStore(lake, { publisher: icebergPublisher });
    expect((await next.recover()).rolledForward).toBe(0);
    expect(readdirSync(meta).sort()).toEqual([...before, ...kept].sort());
    expect(await snapshotFiles(lake)).toEqual(['blocks/a.parquet']);
  });
});
