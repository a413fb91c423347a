// The lake on object storage end to end, as a user runs it: `chainlake run pipelines/demo.yaml
// --simulator --lake s3://...` against an S3-compatible server on loopback (s3rver, in this
// process) gives, downloaded, the same tables as a run into a local folder; `query` answers the
// bundled queries as on the local lake; compaction and rebuild on the store keep the local run's rows;
// a run whose copies fail after its state was written is rolled forward by the next one; faults
// of the store are retried (the first run meets them); and a second writer is refused, on a store that honours conditional
// writes (a proxy answering as AWS does) and on one that does not (s3rver, which the run says).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aboveInfo, demoOf, demoOfEachKind, lakeContents, runCli } from '../helpers.js';
import { cliHere } from '../lake-fixture.js';
import { BUCKET, downloadLake, s3Env, s3Proxy, startS3, useEnv, type Fault, type S3Server } from '../s3-fixture.js';

let s3: S3Server;
let env: Record<string, string>;
let restore: () => void;
let local: string;
let localTables: Record<string, string[]>;
const URL_MAIN = `s3://${BUCKET}/lake`;
// The demo's tables of each kind (helpers.ts), in batches of 1,000 rows: several commits a
// partition, each a few requests to the store.
let RUN: string[];

const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));

/**
 * The lake at `url`, its tables' folders downloaded, read as tables (sorted rows per table). The
 * views of a folder without states read every Parquet file in it: a file left in a table's folder
 * and not committed shows as rows. The raw pages, states and run reports are not tables.
 */
async function tablesOf(url: string): Promise<Record<string, string[]>> {
  const dir = tmp('cl-down-');
  await downloadLake(url, dir, { only: (key) => !key.startsWith('_') && key.endsWith('.parquet') });
  return lakeContents(dir);
}

/** Objects under each table's prefix, against the files the partition states list. */
async function listingAgainstStates(url: string): Promise<{ listed: string[]; committed: string[]; staging: string[]; lock: boolean; tables: string[] }> {
  const { S3Objects } = await import('../../src/state/s3.js');
  const o = await S3Objects.open(url);
  const all = (await o.list('')).map((x) => x.key);
  const states = await Promise.all(all.filter((k) => k.startsWith('_state/')).map(async (k) => JSON.parse((await o.get(k))!.body.toString()) as { table: string; files: string[] }));
  const committed = states.flatMap((s) => s.files).sort();
  // A table's Iceberg metadata (<table>/metadata/) is not a data file: check compares it with the states.
  const listed = all.filter((k) => !k.startsWith('_state/') && !k.startsWith('_runs/') && !k.startsWith('_staging/') && k !== '_lock' && !/^[^/_][^/]*\/metadata\//.test(k)).sort();
  return { listed, committed, staging: all.filter((k) => k.startsWith('_staging/')), lock: all.includes('_lock'), tables: [...new Set(states.map((s) => s.table))].sort() };
}

beforeAll(async () => {
  RUN = ['run', demoOfEachKind(), '--simulator', '--flush-rows', '1000'];
  s3 = await startS3();
  // The store answers from this process: on a loaded machine a renewal of the lake's lease has
  // waited past the 30 s bound's margin, and the run stopped committing. No case here is about
  // the bound.
  env = { ...s3Env(s3.endpoint), CHAINLAKE_LEASE_SECONDS: '120' };
  restore = useEnv(env);
  local = tmp('cl-local-');
  // No warehouse file beside the local lake: what is compared is read from its Parquet files. In
  // this process: the lake is what is compared, not how a process makes it.
  const l = await cliHere([...RUN, '--lake', local, '--quiet', '--no-warehouse']);
  expect(l.code, l.stderr).toBe(0);
  localTables = await lakeContents(local);
});

afterAll(async () => {
  restore?.();
  await s3?.close();
});

// Each case runs a dozen CLIs one after another against the store: minutes on a loaded 2-core machine.
describe('a lake on S3', { timeout: 600_000 }, () => {
  // The run meets faults of the store on every twentieth request (what a store under load
  // answers): they are retried, and the lake is the one a run without them writes.
  it('a run, its faults of the store (503 SlowDown, 500, resets) retried, gives the tables of a local run; a listing of a table shows committed files only; the run says the store ignores conditions', async () => {
    const kinds: Fault[] = ['slowdown', 'error500', 'reset'];
    const proxy = await s3Proxy(s3.endpoint, { fault: (_, n) => (n % 20 === 0 ? kinds[(n / 20) % 3] : undefined) });
    try {
      const r = await runCli([...RUN, '--lake', URL_MAIN, '--log-format', 'json'], { ...env, AWS_ENDPOINT_URL_S3: proxy.url });
      expect(r.code, aboveInfo(r.stderr)).toBe(0);
      expect(r.stdout).toContain(`(lake ${URL_MAIN})`);
      expect(r.stderr).toMatch(/the store at s3:\/\/\S+\/_lock ignores conditional writes/);
      for (const k of kinds) expect(proxy.faults[k!] ?? 0, k).toBeGreaterThan(2);
    } finally {
      await proxy.close();
    }
    const tables = await tablesOf(URL_MAIN);
    expect(Object.values(tables).flat().length).toBeGreaterThan(5000);
    expect(tables).toEqual(localTables);
    const l = await listingAgainstStates(URL_MAIN);
    expect(l.listed).toEqual(l.committed);
    expect(l.staging).toEqual([]);
    expect(l.lock).toBe(false);
  });

  // `check` on the store is the rolled-forward case's (check --all, with the Iceberg snapshot).
  it('query answers the bundled queries as on the local lake; status, export and the warehouse file (with the rows too) work; check names a missing lake', async () => {
    const dir = 'sql';
    const files = readdirSync(dir).filter((x) => x.endsWith('.sql'));
    // `chainlake query` on an s3:// lake copies what changed into its cache and queries the copy:
    // a query goes through the CLI, as a user runs it (a process, its copy in the cache) ...
    const throughCli = ['top_senders.sql'].filter((f) => files.includes(f));
    expect(throughCli).toHaveLength(1);
    const out = join(tmp('cl-exp-'), 'transfers.csv');
    const withRows = join(tmp('cl-wh-'), 'rows.duckdb');
    const queries = Promise.all(
      throughCli.map(async (f) => {
        const onS3 = await runCli(['query', '--lake', URL_MAIN, '--file', join(dir, f), '--format', 'csv'], env);
        return { f, onS3: onS3.stdout, code: onS3.code, stderr: onS3.stderr };
      }),
    );
    // The other commands that only read the lake run in this process, one after another: what they
    // show is what they read from the store, not a process's start-up.
    const reads = (async () => [
      await cliHere(['status', '--lake', URL_MAIN, '--format', 'json'], env),
      await cliHere(['export', 'erc_transfers', '--lake', URL_MAIN, '--to', out], env),
      await cliHere(['warehouse', '--lake', URL_MAIN, '--out', join(tmp('cl-wh-'), 'w.duckdb')], env),
      await cliHere(['warehouse', '--lake', URL_MAIN, '--out', withRows, '--rows'], env),
      await cliHere(['check', '--lake', `s3://${BUCKET}/nothing-here`], env),
    ])();
    // ... and every bundled query the same way in this process, on the copy the store gives.
    const { readableLake } = await import('../../src/state/cache.js');
    const { openWarehouse } = await import('../../src/warehouse/views.js');
    const { writeQuery } = await import('../../src/warehouse/query.js');
    const csv = async (lake: string) => {
      const conn = await openWarehouse(lake);
      try {
        const out: Record<string, string> = {};
        for (const f of files) {
          let text = '';
          await writeQuery(conn, readFileSync(join(dir, f), 'utf8'), 'csv', async (t) => void (text += t));
          out[f] = text;
        }
        return out;
      } finally {
        conn.closeSync();
      }
    };
    const [s3Answers, diskAnswers] = [await csv(await readableLake(URL_MAIN)), await csv(local)];
    const cli = await queries;
    const [status, exp, wh, rowsWh, missing] = await reads;
    for (const { f, code, stderr } of cli) expect(code, `${f}: ${stderr}`).toBe(0);
    // The CLI's answers on the store against this process's on the local lake (the same writer of CSV).
    for (const { f, onS3, onDisk } of [...cli.map(({ f, onS3 }) => ({ f, onS3, onDisk: diskAnswers[f]! })), ...files.map((f) => ({ f, onS3: s3Answers[f]!, onDisk: diskAnswers[f]! }))]) {
      // The run reports differ by id and time; every other query answers the same.
      if (f === 'runs_recent.sql') expect(onS3).toContain('demo');
      else expect(onS3, f).toBe(onDisk);
      expect(onS3.split('\n').length, f).toBeGreaterThan(1);
    }
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).lake).toBe(URL_MAIN);
    expect(exp.code, exp.stderr).toBe(0);
    expect(readFileSync(out, 'utf8').trim().split('\n').length - 1).toBe(localTables.erc_transfers!.length);
    expect(wh.code, wh.stderr).toBe(0);
    // With the rows: written from the lake's copy, and read by `query --warehouse` while current
    // (an s3:// lake's file is the one named: none by default).
    expect(rowsWh.code, rowsWh.stderr).toBe(0);
    expect(rowsWh.stdout).toContain('with the rows of');
    const viewSql = "SELECT sql FROM duckdb_views() WHERE view_name = 'erc_transfers' AND database_name = current_database(); SELECT (SELECT sql FROM duckdb_views() WHERE view_name = 'erc_transfers' AND database_name = current_database()) AS v, (SELECT count(*) FROM erc_transfers) AS n";
    const fromRows = await cliHere(['query', '--lake', URL_MAIN, '--warehouse', withRows, '--format', 'json', viewSql], env);
    const fromFiles = await cliHere(['query', '--lake', URL_MAIN, '--format', 'json', viewSql], env);
    expect(fromRows.code, fromRows.stderr).toBe(0);
    const [r] = JSON.parse(fromRows.stdout) as Array<{ v: string; n: string }>;
    const [f] = JSON.parse(fromFiles.stdout) as Array<{ v: string; n: string }>;
    expect(r!.v).toContain('chainlake_rows');
    expect(f!.v).toContain('read_parquet');
    expect(Number(r!.n)).toBe(localTables.erc_transfers!.length);
    expect(f!.n).toBe(r!.n);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--lake s3://${BUCKET}/nothing-here: no lake there`);
  });

  it('a lake URL that is not s3://bucket/prefix, or a bucket that does not exist, exits 2 naming it', async () => {
    const cases = [
      ['gs://b/lake', '--lake gs://b/lake: gs:// is not a lake location; give a folder or s3://bucket/prefix'],
      ['s3://ab/lake', '--lake s3://ab/lake: "ab" is not a bucket name'],
      [`s3://${BUCKET}/a/../b`, 'has an empty, . or .. part'],
      ['s3://no-such-bucket/lake', '--lake s3://no-such-bucket/lake: the bucket no-such-bucket does not exist at this endpoint'],
    ] as const;
    const runs = await Promise.all(cases.map(([lake]) => cliHere([...RUN, '--lake', lake, '--quiet'], env)));
    cases.forEach(([lake, says], i) => {
      expect(runs[i]!.code, lake).toBe(2);
      expect(runs[i]!.stderr, lake).toContain(says);
    });
  });

  // On the lake of the first run, which the tests above only read.
  // Compaction and rebuild keep a lake's rows on disk (test/pipeline/compact.test.ts, rebuild.test.ts):
  // on the store they keep the local run's.
  it('compaction and rebuild on the store keep the rows of the local run', async () => {
    const url = URL_MAIN;
    const before = (await listingAgainstStates(url)).listed.filter((k) => k.startsWith('erc_transfers/')).length;
    for (const args of [['compact', '--target-rows', '100000'], ['rebuild', 'erc_transfers']]) {
      const a = await runCli([...args, '--lake', url], env);
      expect(a.code, a.stderr).toBe(0);
    }
    const l = await listingAgainstStates(url);
    expect(l.listed).toEqual(l.committed);
    expect(l.listed.filter((k) => k.startsWith('erc_transfers/')).length).toBeLessThan(before);
    expect(await tablesOf(url)).toEqual(localTables);
  });

  it('a run whose copies fail after the state was written is rolled forward by the next run', async () => {
    const url = `s3://${BUCKET}/rolled`;
    // Two tables, not every kind: what is shown is the roll-forward of one table's several commits
    // and of a table keyed by its snapshot time, and two runs of every kind cost as much as the
    // first case's run twice over.
    const ROLLED = ['erc_transfers', 'node_info'];
    const run = ['run', demoOf(ROLLED), '--simulator', '--flush-rows', '1000'];
    const copyFails = await s3Proxy(s3.endpoint, { fault: (r) => (r.headers['x-amz-copy-source'] ? 'error500' : undefined) });
    try {
      const r = await runCli([...run, '--lake', url, '--quiet'], { ...env, AWS_ENDPOINT_URL_S3: copyFails.url, AWS_MAX_ATTEMPTS: '1' });
      expect(r.code).toBe(1);
      expect(copyFails.faults.error500).toBeGreaterThan(0);
    } finally {
      await copyFails.close();
    }
    const cut = await listingAgainstStates(url);
    // The states name files that are still under staging keys; the table folders hold none of them.
    expect(cut.staging.length).toBeGreaterThan(0);
    expect(cut.listed).toEqual([]);
    const again = await runCli([...run, '--lake', url, '--log-format', 'json'], env);
    expect(again.code, aboveInfo(again.stderr)).toBe(0);
    expect(again.stderr).toContain('finished commits of an interrupted run');
    const l = await listingAgainstStates(url);
    expect(l.listed).toEqual(l.committed);
    expect(l.staging).toEqual([]);
    // A table keyed by the snapshot time gains a snapshot per run that got that far: the cut run's,
    // once rolled forward, where it wrote the table's state before the copies failed (whether it
    // got there before the first failure stopped it depends on the order its jobs ran in), and
    // the second run's. Those are compared as sets of rows without the time.
    const { STREAMS } = await import('../../src/streams/index.js');
    const snapshots = new Set(STREAMS.filter((d) => d.key.includes('snapshot_at')).map((d) => d.table));
    const distinct = (t: Record<string, string[]>) => Object.fromEntries(Object.entries(t).map(([k, rows]) => [k, snapshots.has(k) ? [...new Set(rows)] : rows]));
    const got = await tablesOf(url);
    for (const t of ROLLED.filter((x) => snapshots.has(x))) expect(got[t]!.length > new Set(got[t]).size, `${t}: two snapshots`).toBe(cut.tables.includes(t));
    const want = Object.fromEntries(Object.entries(localTables).map(([t, rows]) => [t, ROLLED.includes(t) ? rows : []]));
    for (const t of ROLLED) expect(want[t]!.length, t).toBeGreaterThan(0);
    expect(distinct(got)).toEqual(distinct(want));
    // Each table's Iceberg snapshot on the store names the files its states list, the rolled-forward commits' too.
    const check = await cliHere(['check', '--lake', url, '--all'], env);
    expect(check.code, check.stdout.split('\n').filter((x) => x.startsWith('FAIL')).join('\n')).toBe(0);
    expect(check.stdout).toMatch(/Iceberg snapshot names the committed files\s+snapshot \d+/);
  });

  it('a second writer is refused: by the lock object taken with If-None-Match where the store honours it', async () => {
    const proxy = await s3Proxy(s3.endpoint, { conditional: true });
    const back = useEnv({ AWS_ENDPOINT_URL_S3: proxy.url });
    try {
      const url = `s3://${BUCKET}/locked`;
      const { S3LeaseBackend, S3Objects } = await import('../../src/state/s3.js');
      const { LakeLock } = await import('../../src/state/lock.js');
      const backend = await S3LeaseBackend.open(await S3Objects.open(url));
      expect(backend.conditional).toBe(true);
      const held = await LakeLock.acquire(url, { backend });
      const refusedBefore = proxy.refused;
      // One table: the lock is what is shown, and it is taken before any table is read.
      const one = demoOf(['avg_tps']);
      const r = await runCli(['run', one, '--simulator', '--lake', url, '--log-format', 'json'], { ...env, AWS_ENDPOINT_URL_S3: proxy.url });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(`the lake ${url} is in use by another chainlake run (pid ${process.pid}`);
      expect(r.stderr).not.toContain('ignores conditional writes');
      expect(proxy.refused).toBeGreaterThan(refusedBefore);
      await held.release();
      // Once let go, the lake takes a run.
      const ok = await runCli(['run', one, '--simulator', '--lake', url, '--quiet'], { ...env, AWS_ENDPOINT_URL_S3: proxy.url });
      expect(ok.code, ok.stderr).toBe(0);
    } finally {
      back();
      await proxy.close();
    }
  });
});
