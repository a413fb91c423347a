// Every table of the demo lake is an Iceberg table that an independent reader (icebird) reads with
// exactly chainlake's rows: after a run, after a second run, and after `compact`; every snapshot
// the metadata keeps reads too, and the data files carry the schema's field ids. The runs are the
// shared lakes of the whole pipeline (lake-fixture.ts), which e2e reads too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { icebergManifests, icebergMetadata } from 'icebird';
import { STREAMS } from '../../src/streams/index.js';
import { compactLake } from '../../src/pipeline/compact.js';
import { StateStore } from '../../src/state/store.js';
import { ALL_TABLES as TABLES, cliHere, demoPipeline, lakeOf, sharedRerunLake, sharedWholeLake } from '../lake-fixture.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { openWarehouse } from '../../src/warehouse/views.js';
import { startSimulator } from '../../src/simulator/server.js';
import { existsSync, mkdtempSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { demoOfEachKind, quiet } from '../helpers.js';
import { exactRowsDiffer, icebergRows, parquetFieldIds, serveLakes, tableUrl, viewRows } from '../iceberg-reader.js';

let lake: string;
let restore: () => void;

beforeAll(async () => {
  restore = serveLakes();
  ({ lake } = await sharedWholeLake());
}, 300_000);

afterAll(() => restore?.());

/** Tables of `at` whose partitions list data files. */
function withData(at: string, tables = TABLES): string[] {
  const store = new StateStore(at);
  return tables.filter((t) => store.committedFiles(t).some((f) => f.startsWith(`${t}/`)));
}

/** Icebird reads each of `tables` (every table with data by default) of `at` with the rows of its view. */
async function sameRows(label: string, at: string, tables = withData(at)): Promise<void> {
  // The views of every table on one database, not one a table: most of the reading's CPU was the
  // start of a database.
  const warehouse = await openWarehouse(at);
  try {
    for (const t of tables) {
      const { rows, fields } = await icebergRows(tableUrl(at, t));
      expect(rows.length, `${label}: ${t}`).toBeGreaterThan(0);
      expect(rows, `${label}: ${t}`).toEqual(await viewRows(at, t, fields, warehouse));
    }
  } finally {
    warehouse.closeSync();
  }
}

/** Tables compacted: a keyed listing, a metric series and a snapshot of the node's state. */
const COMPACTED = ['erc_transfers', 'chain_metrics', 'validators'];

describe('the lake as Iceberg tables', () => {
  it('icebird reads every table of a run with the rows of chainlake\'s views', async () => {
    expect(withData(lake).length).toBeGreaterThan(40);
    await sameRows('first run', lake);
  });

  it('the snapshot lists exactly the files the partition states list, and their rows are exact to the digit', async () => {
    const store = new StateStore(lake);
    const warehouse = await openWarehouse(lake);
    try {
      for (const t of withData(lake)) {
        const metadata = await icebergMetadata({ tableUrl: tableUrl(lake, t) });
        const files = (await icebergManifests(metadata)).flatMap((m: { entries: Array<{ status: number; data_file: { file_path: string } }> }) => m.entries.filter((e) => e.status !== 2).map((e) => e.data_file.file_path));
        const listed = files.map((f: string) => fileURLToPath(f)).sort();
        expect(listed, t).toEqual(store.committedFiles(t).filter((f) => f.startsWith(`${t}/`)).map((f) => join(lake, f)).sort());
        expect(await exactRowsDiffer(lake, t, files, warehouse), t).toBe(0);
      }
    } finally {
      warehouse.closeSync();
    }
  });

  it('data files carry the field ids of the table schema (hyparquet reads them from the footers)', async () => {
    const store = new StateStore(lake);
    for (const t of ['erc_transfers', 'validators', 'chain_metrics', 'platform_transactions']) {
      const metadata = await icebergMetadata({ tableUrl: tableUrl(lake, t) });
      const schema = metadata.schemas.find((s: { 'schema-id': number }) => s['schema-id'] === metadata['current-schema-id'])!;
      const file = store.committedFiles(t).find((f) => f.startsWith(`${t}/`))!;
      const ids = await parquetFieldIds(join(lake, file));
      for (const f of schema.fields as Array<{ id: number; name: string }>) expect(ids.get(f.name), `${t}.${f.name}`).toBe(f.id);
    }
  });

  it('a second run and a compaction: each a new snapshot that reads as the views do; every snapshot kept reads', async () => {
    const again = (await sharedRerunLake()).lake;
    expect(withData(again).length).toBeGreaterThan(40);
    await sameRows('second run', again);
    // The compaction changes the lake: on a copy of the tables it compacts.
    const compacted = lakeOf(COMPACTED, again, join(mkdtempSync(join(tmpdir(), 'cl-ice-compact-')), 'lake'));
    const before = JSON.parse(readFileSync(join(compacted, 'erc_transfers/metadata/version-hint.text'), 'utf8'));
    // What a publish killed before its metadata file leaves: swept by the compaction.
    const stray = join(compacted, 'erc_transfers/metadata/00000000-0000-0000-0000-000000000000-m0.avro');
    writeFileSync(stray, 'a manifest no metadata names');
    await compactLake(compacted, COMPACTED, { logger: quiet });
    expect(existsSync(stray)).toBe(false);
    await sameRows('compacted', compacted, COMPACTED);
    const metadata = await icebergMetadata({ tableUrl: tableUrl(compacted, 'erc_transfers') });
    const current = metadata.snapshots!.find((s: { 'snapshot-id': number }) => s['snapshot-id'] === metadata['current-snapshot-id']);
    expect(current!.summary.operation).toBe('replace');
    expect(Number(JSON.parse(readFileSync(join(compacted, 'erc_transfers/metadata/version-hint.text'), 'utf8')))).toBeGreaterThan(before);
    // Every metadata version whose snapshot is still kept reads, with the rows its summary counts.
    for (const t of COMPACTED) {
      const m = await icebergMetadata({ tableUrl: tableUrl(compacted, t) });
      const kept = new Set(m.snapshots!.map((s: { 'snapshot-id': number }) => s['snapshot-id']));
      const versions = [...m['metadata-log']!.map((l: { 'metadata-file': string }) => l['metadata-file'].split('/').pop()), `v${readFileSync(join(compacted, t, 'metadata/version-hint.text'), 'utf8').trim()}.metadata.json`];
      let read = 0;
      for (const v of versions) {
        let old;
        try {
          old = await icebergMetadata({ tableUrl: tableUrl(compacted, t), metadataFileName: v });
        } catch {
          continue; // removed beyond the log's bound
        }
        if (!kept.has(old['current-snapshot-id']!)) continue;
        const snap = old.snapshots!.find((s: { 'snapshot-id': number }) => s['snapshot-id'] === old['current-snapshot-id']);
        const { rows } = await icebergRows(tableUrl(compacted, t), { metadataFileName: v });
        expect(rows.length, `${t} ${v}`).toBe(Number(snap!.summary['total-records']));
        read++;
      }
      expect(read, t).toBeGreaterThan(0);
    }
  }, 300_000);
});

describe('a declaration that gains a column', () => {
  it('evolves the schema with a new field id; old files are not rewritten and read with NULL there', async () => {
    const sim = await startSimulator({ port: 0, seed: 5 });
    const evolving = mkdtempSync(join(tmpdir(), 'cl-evolve-'));
    const decl = STREAMS.find((d) => d.table === 'erc_transfers')!;
    try {
      // One contract first; the others after the declaration gained a column.
      const p = demoPipeline(sim.url, ['erc_transfers']);
      const all = p.streams[0]!.contracts as string[];
      p.streams[0]!.contracts = all.slice(0, 1);
      await runPipeline(p, { lake: evolving, logger: quiet });
      const url = tableUrl(evolving, 'erc_transfers');
      const before = await icebergMetadata({ tableUrl: url });
      const oldFiles = new StateStore(evolving).committedFiles('erc_transfers').filter((f) => f.startsWith('erc_transfers/'));
      decl.columns.push({ name: 'zz_added', type: 'varchar', from: 'txHash', doc: 'a column a later version declares' });
      p.streams[0]!.contracts = all;
      await runPipeline(p, { lake: evolving, logger: quiet });
      const after = await icebergMetadata({ tableUrl: url });
      expect(after.schemas.length).toBe(before.schemas.length + 1);
      const schema = after.schemas.find((s: { 'schema-id': number }) => s['schema-id'] === after['current-schema-id'])!;
      for (const f of before.schemas[0]!.fields) expect(schema.fields.find((x: { name: string }) => x.name === f.name)!.id, f.name).toBe(f.id);
      const added = schema.fields.find((x: { name: string }) => x.name === 'zz_added')!;
      expect(added.id).toBe(before['last-column-id']! + 1);
      // The files of the first run are still the table's, as written: without the column.
      const files = new StateStore(evolving).committedFiles('erc_transfers').filter((f) => f.startsWith('erc_transfers/'));
      for (const f of oldFiles) {
        expect(files).toContain(f);
        expect((await parquetFieldIds(join(evolving, f))).has('zz_added')).toBe(false);
      }
      const fresh = files.filter((f) => !oldFiles.includes(f));
      expect(fresh.length).toBeGreaterThan(0);
      for (const f of fresh) expect((await parquetFieldIds(join(evolving, f))).get('zz_added')).toBe(added.id);
      const { rows, fields } = await icebergRows(url);
      expect(rows).toEqual(await viewRows(evolving, 'erc_transfers', fields));
      const at = fields.findIndex((f) => f.name === 'zz_added');
      const nulls = rows.filter((r) => JSON.parse(r)[at] === null).length;
      expect(nulls).toBeGreaterThan(0);
      expect(nulls).toBeLessThan(rows.length);
    } finally {
      decl.columns.pop();
      await sim.close();
    }
  });
});

describe('a run killed at any moment', () => {
  it('leaves every table at one whole snapshot (all its files there, its rows as its summary counts); the rerun reads as the views do', async () => {
    const killed = mkdtempSync(join(tmpdir(), 'cl-ice-kill-'));
    const pipeline = demoOfEachKind();
    const bin = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));
    const outcomes: string[] = [];
    for (const delay of [400, 900, 1400, 1900, 2600]) {
      // No warehouse file: nothing here reads one, and a run that ends rewrites it (seconds of CPU).
      const child = spawn(process.execPath, [bin, 'run', pipeline, '--simulator', '--flush-rows', '50', '--lake', killed, '--quiet', '--no-warehouse'], { stdio: 'ignore' });
      const timer = setTimeout(() => child.kill('SIGKILL'), delay);
      outcomes.push(await new Promise<string>((r) => child.on('exit', (code, signal) => r(signal ?? `exit ${code}`))));
      clearTimeout(timer);
      // As the kill left it, before any command rolls it forward: what an engine reads now.
      for (const t of TABLES) {
        const hint = join(killed, t, 'metadata', 'version-hint.text');
        if (!existsSync(hint)) continue;
        const metadata = await icebergMetadata({ tableUrl: tableUrl(killed, t) });
        const snap = metadata.snapshots!.find((s: { 'snapshot-id': number }) => s['snapshot-id'] === metadata['current-snapshot-id'])!;
        const { rows } = await icebergRows(tableUrl(killed, t));
        expect(rows.length, `${t} after a kill at ${delay} ms`).toBe(Number(snap.summary['total-records']));
      }
    }
    expect(outcomes.filter((o) => o === 'SIGKILL').length, outcomes.join(', ')).toBeGreaterThan(0);
    // The rerun in this process: the kills above are the processes this test is about.
    const done = await cliHere(['run', pipeline, '--simulator', '--flush-rows', '50', '--lake', killed, '--quiet', '--no-warehouse']);
    expect(done.code, done.stderr).toBe(0);
    const store = new StateStore(killed);
    const warehouse = await openWarehouse(killed);
    try {
      for (const t of TABLES.filter((x) => store.committedFiles(x).some((f) => f.startsWith(`${x}/`)))) {
        const { rows, fields } = await icebergRows(tableUrl(killed, t));
        expect(rows, t).toEqual(await viewRows(killed, t, fields, warehouse));
      }
    } finally {
      warehouse.closeSync();
    }
  });
});
