import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StateStore, writeAtomic, slug } from '../../src/state/store.js';
import { ParquetWriter } from '../../src/load/parquet.js';
import { Transformer } from '../../src/transform/rows.js';
import { chainMetrics } from '../../src/streams/chain_metrics.js';
import { openWarehouse } from '../../src/warehouse/views.js';
import { query } from '../../src/warehouse/query.js';

function lake() {
  return mkdtempSync(join(tmpdir(), 'cl-lake-'));
}

function staged(store: StateStore, name: string): string {
  const dir = store.stagingDir('t', 'p');
  mkdirSync(dir, { recursive: true });
  const f = join(dir, name);
  writeFileSync(f, name);
  return f;
}

describe('state store commit protocol', () => {
  it('moves staged files into place with the cursor, and replaces files atomically', async () => {
    const store = new StateStore(lake());
    let s = store.load('t', 'p');
    s = await store.commit({ ...s, files: ['t/a.parquet'], cursor: { nextBlock: 10 }, rows: 5 }, [[staged(store, 'a.parquet'), 't/a.parquet']]);
    expect(existsSync(store.path('t/a.parquet'))).toBe(true);
    expect(store.load('t', 'p')).toMatchObject({ files: ['t/a.parquet'], cursor: { nextBlock: 10 }, rows: 5 });
    expect(store.load('t', 'p').pending).toBeUndefined();
    s = await store.commit({ ...s, files: ['t/b.parquet'], cursor: {}, rows: 1 }, [[staged(store, 'b.parquet'), 't/b.parquet']], ['t/a.parquet']);
    expect(existsSync(store.path('t/a.parquet'))).toBe(false);
    expect(s.files).toEqual(['t/b.parquet']);
  });

  it('rolls forward a commit whose state was written but whose files were not moved', async () => {
    const root = lake();
    const store = new StateStore(root);
    const src = staged(store, 'c.parquet');
    const rel = src.slice(root.length + 1);
    writeAtomic(join(root, '_state', 't', `${slug('p')}.json`), JSON.stringify({ table: 't', partition: 'p', files: ['t/c.parquet'], rows: 1, rejects: 0, cursor: { nextBlock: 3 }, pending: { moves: [[rel, 't/c.parquet']], deletes: [] } }));
    const litter = staged(store, 'uncommitted.parquet');
    expect((await store.recover()).rolledForward).toBe(1);
    expect(existsSync(join(root, 't/c.parquet'))).toBe(true);
    expect(existsSync(litter)).toBe(false);
    expect(store.load('t', 'p').pending).toBeUndefined();
  });

  it('refuses paths outside the lake', () => {
    const store = new StateStore(lake());
    expect(() => store.path('../escape')).toThrow(/outside the lake/);
    expect(() => store.path('/etc/passwd')).toThrow(/outside the lake/);
    // Partition ids come from config values; their file names stay one plain name inside the lake.
    for (const id of ['../../etc/x', 'a/../../b', 'mainnet/nodeIds=NodeID-x', '..']) {
      const name = slug(id);
      expect(name).toMatch(/^[A-Za-z0-9._-]+$/);
      expect(name.startsWith('..')).toBe(false);
      expect(() => store.stagingDir('t', id)).not.toThrow();
    }
  });
});

describe('parquet writer', () => {
  it('lands exact types that DuckDB reads back', async () => {
    const root = lake();
    const store = new StateStore(root);
    const t = new Transformer(chainMetrics, { id: '43114/txCount/day', path: {}, query: {}, values: { chainId: '43114', metric: 'txCount', timeInterval: 'day' } });
    t.push([{ timestamp: 1700006400, value: 12.5 }, { timestamp: 1700092800, value: 3 }]);
    const w = await ParquetWriter.open();
    const dir = store.stagingDir('chain_metrics', 'p');
    const files = await w.writeBatch(chainMetrics, t.take(), dir, 'x');
    w.close();
    await store.commit({ ...store.load('chain_metrics', 'p'), files: files.map((f) => `chain_metrics/${f.rel}`), rows: 2 }, files.map((f) => [f.staged, `chain_metrics/${f.rel}`]));
    const conn = await openWarehouse(root);
    const r = await query(conn, `SELECT chain_id, typeof(chain_id) ct, typeof(timestamp) tt, timestamp, value FROM chain_metrics ORDER BY timestamp`);
    expect(r.rows).toEqual([
      { chain_id: '43114', ct: 'VARCHAR', tt: 'TIMESTAMP WITH TIME ZONE', timestamp: '2023-11-15 00:00:00+00', value: 12.5 },
      { chain_id: '43114', ct: 'VARCHAR', tt: 'TIMESTAMP WITH TIME ZONE', timestamp: '2023-11-16 00:00:00+00', value: 3 },
    ]);
    expect(readdirSync(join(root, 'chain_metrics'))).toHaveLength(1);
  });
});

describe('staged text', () => {
  it('carries any text exactly: control characters, the framing bytes, empty strings, unicode, lists', async () => {
    const { ercTransfers } = await import('../../src/streams/erc_transfers.js');
    const names = ['a\nb\r\nc', 'x\x1fy', '\x01', '', '\x02z', 'é漢字🙂 "quoted", comma', '\\N', 'NULL'];
    const t = new Transformer(ercTransfers, { id: 'p', path: {}, query: {}, values: { chainId: '43114' } });
    t.push(
      names.map((name, i) => ({
        blockNumber: String(i + 1), blockTimestamp: 1700000000 + i, blockHash: '0xb', txHash: `0x${i}`, logIndex: i,
        from: { address: '0x' + 'a'.repeat(40), name }, to: { address: '0x' + 'b'.repeat(40) }, value: '1',
        erc20Token: { address: '0x' + 'c'.repeat(40), name: 'T', symbol: name, decimals: 6, ercType: 'ERC-20' },
      })),
    );
    const root = lake();
    const store = new StateStore(root);
    const w = await ParquetWriter.open();
    const files = await w.writeBatch(ercTransfers, t.take(), store.stagingDir('erc_transfers', 'p'), 'x');
    w.close();
    await store.commit({ ...store.load('erc_transfers', 'p'), files: files.map((f) => `erc_transfers/${f.rel}`) }, files.map((f) => [f.staged, `erc_transfers/${f.rel}`]));
    const conn = await openWarehouse(root);
    const r = await query(conn, `SELECT from_name, token_symbol, to_name FROM erc_transfers ORDER BY block_number`);
    expect(r.rows.map((x) => x.from_name)).toEqual(names);
    expect(r.rows.map((x) => x.token_symbol)).toEqual(names);
    expect(r.rows.every((x) => x.to_name === null)).toBe(true);
  });
});
