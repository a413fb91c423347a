// A lake on S3 (s3rver on loopback, behind a proxy that honours If-None-Match as AWS does) is read
// as Iceberg tables by an independent reader (icebird) from the store itself, after a run and after
// a compaction on the store, with the rows of chainlake's views; `check` compares the snapshot in
// the store with the partition states. The metadata's pointer is created only where none exists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../../src/streams/index.js';
import { readableLake } from '../../src/state/cache.js';
import { S3Objects } from '../../src/state/s3.js';
import { openWarehouse } from '../../src/warehouse/views.js';
import { demoOfEachKind, runCli } from '../helpers.js';
import { cliHere } from '../lake-fixture.js';
import { BUCKET, s3Env, s3Proxy, startS3, useEnv, type S3Server } from '../s3-fixture.js';
import { icebergRows, serveLakes, viewRows } from '../iceberg-reader.js';

let s3: S3Server;
let proxy: Awaited<ReturnType<typeof s3Proxy>>;
let restoreEnv: () => void;
let restoreFetch: () => void;
let env: Record<string, string>;
const URL_LAKE = `s3://${BUCKET}/ice`;

beforeAll(async () => {
  s3 = await startS3();
  proxy = await s3Proxy(s3.endpoint, { conditional: true });
  // The store answers from this process: on a loaded machine a renewal of the lake's lease can wait
  // past the 30 s bound's margin, and the run stops committing (scenarios/s3.test.ts). No case here
  // is about the bound.
  env = { ...s3Env(proxy.url), CHAINLAKE_LEASE_SECONDS: '120' };
  restoreEnv = useEnv(env);
  restoreFetch = serveLakes({ s3: { endpoint: s3.endpoint, bucket: BUCKET } });
  // Batches of 200 rows: several files a partition for the compaction to replace (the check below
  // says how many it kept for the snapshot before it), not hundreds for the reader to fetch.
  const r = await runCli(['run', demoOfEachKind(), '--simulator', '--flush-rows', '200', '--lake', URL_LAKE, '--quiet'], env);
  expect(r.code, r.stderr).toBe(0);
});

afterAll(async () => {
  restoreFetch?.();
  restoreEnv?.();
  await proxy?.close();
  await s3?.close();
});

async function sameRows(label: string): Promise<number> {
  const local = await readableLake(URL_LAKE);
  const objects = await S3Objects.open(URL_LAKE);
  // The views of every table on one database, not one a table (iceberg/read.test.ts).
  const warehouse = await openWarehouse(local);
  let tables = 0;
  try {
    for (const t of [...new Set(STREAMS.map((d) => d.table))]) {
      if (!(await objects.head(`${t}/metadata/version-hint.text`))) continue;
      const { rows, fields } = await icebergRows(`${URL_LAKE}/${t}`);
      expect(rows, `${label}: ${t}`).toEqual(await viewRows(local, t, fields, warehouse));
      tables++;
    }
  } finally {
    warehouse.closeSync();
  }
  return tables;
}

// The reader, the store and the compaction all work in this process: minutes on a loaded 2-core machine.
describe('a lake on S3 as Iceberg tables', { timeout: 600_000 }, () => {
  it('icebird reads every table from the store with the rows of the views, after a run and after a compaction with a retention', async () => {
    expect(await sameRows('run')).toBeGreaterThanOrEqual(9);
    const objects = await S3Objects.open(URL_LAKE);
    const before = `v${(await objects.get('erc_transfers/metadata/version-hint.text'))!.body.toString().trim()}.metadata.json`;
    const { rows: rowsBefore } = await icebergRows(`${URL_LAKE}/erc_transfers`, { metadataFileName: before });
    const c = await cliHere(['compact', '--lake', URL_LAKE, '--target-rows', '100000', '--retention', '1h'], env);
    expect(c.code, c.stderr).toBe(0);
    expect(await sameRows('compacted')).toBeGreaterThanOrEqual(9);
    // The snapshot before the compaction still reads from the store: its replaced files are kept.
    expect((await icebergRows(`${URL_LAKE}/erc_transfers`, { metadataFileName: before })).rows).toEqual(rowsBefore);
    const check = await cliHere(['check', '--lake', URL_LAKE, '--all'], env);
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toMatch(/Iceberg snapshot names the committed files\s+snapshot \d+ \(metadata v\d+\)/);
    expect(check.stdout).toMatch(/files owned by a partition\s+\d+ files?, each listed by one partition state \(and \d+ files kept for older snapshots\)/);
  });

  it('a metadata version is created once: a second create of the same key is refused (If-None-Match honoured)', async () => {
    const objects = await S3Objects.open(URL_LAKE);
    const key = 'erc_transfers/metadata/v999999.metadata.json';
    const before = proxy.refused;
    expect(await objects.create(key, '{"a":1}')).toBe(true);
    expect(await objects.create(key, '{"a":2}')).toBe(false);
    expect(proxy.refused).toBeGreaterThan(before);
    expect((await objects.get(key))!.body.toString()).toBe('{"a":1}');
    await objects.delete(key);
  });
});
