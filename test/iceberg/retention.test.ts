// A retention keeps an Iceberg snapshot readable after a compaction replaced its files: the files
// stay on disk, out of chainlake's views and checks, until the retention has passed; then they
// go, with the snapshots that named them, and nothing else changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { icebergMetadata } from 'icebird';
import { compactLake } from '../../src/pipeline/compact.js';
import { StateStore } from '../../src/state/store.js';
import { icebergPublisher } from '../../src/iceberg/table.js';
import { RETENTION_KEY } from '../../src/iceberg/metadata.js';
import { cliHere, demoLake } from '../lake-fixture.js';
import { quiet } from '../helpers.js';
import { icebergRows, serveLakes, tableUrl, viewRows } from '../iceberg-reader.js';

const HOUR = 3_600_000;
const T = 'erc_transfers';
let lake: string;
let restore: () => void;

beforeAll(async () => {
  restore = serveLakes();
  // Small batches: many files for the compaction to replace.
  ({ lake } = await demoLake([T], { run: { flushRows: 50 } }));
}, 60_000);

afterAll(() => restore?.());

const hint = () => readFileSync(join(lake, T, 'metadata', 'version-hint.text'), 'utf8').trim();
const retained = () => new StateStore(lake).all().flatMap((s) => s.retained ?? []);
/** The lake's store with a publisher whose clock is `ahead` ms past the real one. */
const storeAt = (ahead: number) => new StateStore(lake, { publisher: (s) => icebergPublisher(s, { now: () => Date.now() + ahead }) });

type Checked = { status: string; check: string; table: string; detail: string };

/** `chainlake check` passes; the result of the files check, which counts the kept files apart. */
async function checkPasses(): Promise<Checked> {
  const r = await cliHere(['check', '--lake', lake, '--format', 'json']);
  const checks = (JSON.parse(r.stdout) as { checks: Checked[] }).checks;
  expect(checks.filter((x) => x.status === 'fail')).toEqual([]);
  expect(r.code).toBe(0);
  return checks.find((c) => c.table === T && c.check === 'files owned by a partition')!;
}

describe('compact --retention', () => {
  let before: string;
  let rowsBefore: string[];

  it('keeps the snapshot before the compaction readable, its files on disk; the views and check see the current files alone', async () => {
    before = `v${hint()}.metadata.json`;
    ({ rows: rowsBefore } = await icebergRows(tableUrl(lake, T), { metadataFileName: before }));
    const reports = await compactLake(lake, [T], { logger: quiet, retainMs: HOUR });
    expect(reports[0]!.rowsRewritten).toBeGreaterThan(0);
    const kept = retained();
    expect(kept.length).toBeGreaterThan(1);
    for (const f of kept) expect(existsSync(join(lake, f)), f).toBe(true);
    const metadata = await icebergMetadata({ tableUrl: tableUrl(lake, T) });
    expect(metadata.properties![RETENTION_KEY]).toBe(String(HOUR));
    expect(metadata.snapshots!.length).toBeGreaterThan(2);
    // The older snapshot reads all its rows, from the files the compaction replaced.
    const { rows: old } = await icebergRows(tableUrl(lake, T), { metadataFileName: before });
    expect(old).toEqual(rowsBefore);
    // The current one holds the same rows once, as the views do: the kept files are read by neither.
    const { rows, fields } = await icebergRows(tableUrl(lake, T));
    expect(rows).toEqual(rowsBefore);
    expect(await viewRows(lake, T, fields)).toEqual(rows);
    expect((await checkPasses()).detail).toContain(`(and ${kept.length} files kept for older snapshots)`);
  });

  it('within the retention nothing goes; once it has passed, the kept files go with the snapshots that named them', async () => {
    const kept = retained();
    expect(await storeAt(HOUR / 2).expireRetained(T)).toBe(0);
    for (const f of kept) expect(existsSync(join(lake, f)), f).toBe(true);
    expect(await storeAt(HOUR + 60_000).expireRetained(T)).toBe(kept.length);
    for (const f of kept) expect(existsSync(join(lake, f)), f).toBe(false);
    expect(retained()).toEqual([]);
    const metadata = await icebergMetadata({ tableUrl: tableUrl(lake, T) });
    expect(metadata.snapshots!.map((s: { 'snapshot-id': number }) => s['snapshot-id'])).toEqual([metadata['current-snapshot-id']]);
    const { rows, fields } = await icebergRows(tableUrl(lake, T));
    expect(rows).toEqual(rowsBefore);
    expect(await viewRows(lake, T, fields)).toEqual(rows);
    expect((await checkPasses()).detail).not.toContain('kept for older snapshots');
  });

  it('refuses a retention that is not a duration, naming the flag', async () => {
    const r = await cliHere(['compact', '--lake', lake, '--retention', '6 weeks']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--retention "6 weeks": must be a duration such as 30m, 6h or 7d');
  });
});
