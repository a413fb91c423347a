// The store's secret never leaks (docs/object-storage.md): runs, a failing run and reads of a lake
// on S3 (s3rver on loopback, behind a proxy that records every request and injects 503 SlowDown and
// resets) with a sentinel AWS_SECRET_ACCESS_KEY, then every byte chainlake printed or wrote (stdout,
// stderr, the store's objects, the local cache, the temporary folders) is searched for the secret
// in every form (test/leaks.ts), and the Parquet files' metadata and rows are read through DuckDB.
// The secret was really used: every request is signed (SigV4) with the access key it pairs with,
// and no request carries the secret itself.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { demoOfEachKind, runCli } from '../helpers.js';
import { cliHere } from '../lake-fixture.js';
import { leakFinder } from '../leaks.js';
import { ACCESS_KEY, BUCKET, s3Env, s3Proxy, startS3, type S3Server } from '../s3-fixture.js';

const SECRET = 'S3-SECRET+8d2e/DO=NOT=LEAK-wJalrXUtnFEMI';
const leaks = leakFinder([SECRET]);

let s3: S3Server;
let proxy: Awaited<ReturnType<typeof s3Proxy>>;
let failing: Awaited<ReturnType<typeof s3Proxy>>;
let root: string;
const outputs: Array<{ label: string; code: number | null; stdout: string; stderr: string }> = [];

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));
}

async function cli(label: string, args: string[], env: Record<string, string>): Promise<void> {
  const r = await runCli(args, env);
  outputs.push({ label, ...r });
}

/**
 * A command that only reads the lake, in this process with the same environment: what it prints,
 * sends and caches is searched as a child's, without a process's start-up each. Only once the
 * runs are done: the store answers from this process, and a command here would hold it up.
 */
async function here(label: string, args: string[], env: Record<string, string>): Promise<void> {
  const r = await cliHere(args, env);
  outputs.push({ label, ...r });
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'cl-sec-s3-'));
  for (const d of ['cache', 'tmp', 'out']) mkdirSync(join(root, d));
  s3 = await startS3();
  // A fault every few dozen requests: about twenty of each kind over the commands below, so that
  // retries (and what they log) are exercised, while the SDK's throttling backoff (half a second
  // and more for each SlowDown) does not become most of the test's time.
  proxy = await s3Proxy(s3.endpoint, { fault: (_, n) => (n % 40 === 0 ? 'slowdown' : n % 43 === 0 ? 'reset' : undefined) });
  // Every write refused with 500, every time.
  failing = await s3Proxy(s3.endpoint, { fault: (r) => (r.method === 'PUT' ? 'error500' : undefined) });
  // A lease bound of two minutes: the store answers from this process, and on a loaded machine a
  // renewal has waited past the 30 s bound's margin (the run then stops committing).
  const env = { ...s3Env(proxy.url, { secret: SECRET, cache: join(root, 'cache') }), TMPDIR: join(root, 'tmp'), CHAINLAKE_LEASE_SECONDS: '120' };
  const url = `s3://${BUCKET}/sec`;
  // A table of each kind: what reaches object storage is the same for every table of a kind.
  const run = ['run', demoOfEachKind(), '--simulator', '--flush-rows', '1000', '--log-level', 'trace', '--log-format', 'json'];
  // The commands that do not depend on one another go side by side.
  await Promise.all([
    cli('run', [...run, '--lake', url], env).then(() => cli('compact', ['compact', '--lake', url, '--target-rows', '100000'], env)),
    cli('run (writes refused)', [...run, '--lake', `s3://${BUCKET}/refused`], { ...env, AWS_ENDPOINT_URL_S3: failing.url, AWS_MAX_ATTEMPTS: '2' }),
    cli('query (no bucket)', ['query', '--lake', `s3://no-such-bucket/x`, 'SELECT 1'], env),
  ]);
  await Promise.all([
    cli('run (unknown access key)', [...run, '--lake', url], { ...env, AWS_ACCESS_KEY_ID: 'AKIA-UNKNOWN' }),
    here('status', ['status', '--lake', url], env),
    here('query', ['query', '--lake', url, '--file', 'sql/top_senders.sql'], env),
    here('check', ['check', '--lake', url, '--format', 'json'], env),
    here('export', ['export', 'erc_transfers', '--lake', url, '--to', join(root, 'out', 'x.parquet')], env),
  ]);
}, 300_000);

afterAll(async () => {
  await proxy?.close();
  await failing?.close();
  await s3?.close();
});

const byLabel = (l: string) => outputs.find((o) => o.label === l)!;

describe('the store secret never leaks', () => {
  it('the commands did what they should, and the secret signed every request without being sent', () => {
    expect(byLabel('run').code, byLabel('run').stderr.slice(-2000)).toBe(0);
    expect(byLabel('compact').code, byLabel('compact').stderr).toBe(0);
    expect(proxy.faults.slowdown).toBeGreaterThan(5);
    expect(proxy.faults.reset).toBeGreaterThan(5);
    const refused = byLabel('run (writes refused)');
    expect(refused.code).toBe(1);
    expect(refused.stderr + refused.stdout).toContain('InternalError (HTTP 500)');
    const unknown = byLabel('run (unknown access key)');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('the store refused access to the bucket (HTTP 403)');
    for (const l of ['status', 'query', 'check', 'export']) expect(byLabel(l).code, `${l}: ${byLabel(l).stderr}`).toBe(0);
    expect(byLabel('query (no bucket)').code).toBe(2);
    // Signed with the access key of the environment (or the unknown one of that run).
    const signed = proxy.requests.filter((r) => /^AWS4-HMAC-SHA256 Credential=(S3RVER|AKIA-UNKNOWN)\/.* Signature=[0-9a-f]{64}$/.test(String(r.headers.authorization)));
    expect(proxy.requests.length).toBeGreaterThan(200);
    expect(signed.length).toBe(proxy.requests.length);
    expect(signed.filter((r) => String(r.headers.authorization).includes(`Credential=${ACCESS_KEY}/`)).length).toBeGreaterThan(200);
    for (const r of [...proxy.requests, ...failing.requests]) expect(leaks(`${r.method} ${r.url}`, Buffer.from(`${r.url}\n${JSON.stringify(r.headers)}`))).toEqual([]);
  });

  it('no secret in any stdout or stderr', () => {
    expect(byLabel('run').stderr.split('\n').filter((l) => l.startsWith('{')).length).toBeGreaterThan(20);
    expect(outputs.flatMap((o) => [...leaks(`${o.label} stdout`, Buffer.from(o.stdout)), ...leaks(`${o.label} stderr`, Buffer.from(o.stderr))])).toEqual([]);
  });

  it("no secret in any object of the store, file of the cache, temporary folder or export", () => {
    const files = [...walk(s3.dir), ...walk(root)];
    expect(files.filter((f) => f.includes('_state')).length).toBeGreaterThan(20);
    expect(files.filter((f) => f.includes('.parquet')).length).toBeGreaterThan(20);
    expect(files.flatMap((f) => leaks(f, readFileSync(f)))).toEqual([]);
  });

  it('no secret in Parquet metadata or rows (read through DuckDB)', async () => {
    const parquet = walk(join(root, 'cache')).filter((f) => f.endsWith('.parquet') && !f.includes('/_staging/'));
    expect(parquet.length).toBeGreaterThan(10);
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    const list = `[${parquet.map((f) => `'${f.replace(/'/g, "''")}'`).join(', ')}]`;
    const text = async (sql: string) => Buffer.from(JSON.stringify((await conn.runAndReadAll(sql)).getRowObjectsJson()));
    try {
      expect(leaks('parquet_kv_metadata', await text(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${list})`))).toEqual([]);
      expect(leaks('parquet_metadata', await text(`SELECT * FROM parquet_metadata(${list})`))).toEqual([]);
      for (const f of parquet) expect(leaks(`rows of ${f}`, await text(`SELECT t::VARCHAR AS row FROM read_parquet('${f.replace(/'/g, "''")}') t`))).toEqual([]);
    } finally {
      conn.closeSync();
    }
  });
});
