// Text a service sent is inert wherever a person reads it: a run's errors and log lines, the
// tables of `query`, `status` and `export-op`, and the errors the CLI prints. The measured case: a
// 404 whose message retitles the terminal (OSC 0), writes the clipboard (OSC 52), erases the line
// (CSI 2K) and prints a fake green "run finished: 0 errors".
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlString } from '../../src/load/paths.js';
import { slug, STATE } from '../../src/state/store.js';
import { json, scriptedServer } from '../helpers.js';
import { cliHereBytes } from '../lake-fixture.js';

const HOSTILE = 'no such chain\x1b]0;pwned\x07\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\x07\x1b[2K\r\x1b[32mrun finished: 0 errors\x1b[0m\n\u009b2K\u202eevil';
/** How HOSTILE reads once inert (on one line). */
const SHOWN = 'no such chain\\x1b]0;pwned\\x07\\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\\x07\\x1b[2K\\x0d\\x1b[32mrun finished: 0 errors\\x1b[0m\\x0a\\u009b2K\\u202eevil';

/**
 * The CLI's main in this process (the scripted service answers from here while it waits), no
 * colours: its bytes as a terminal would get them, log lines included (pino writes them to the
 * descriptor, which cliHereBytes captures).
 */
async function cli(args: string[]): Promise<{ code: number | null; stdout: Buffer; stderr: Buffer }> {
  const r = await cliHereBytes(args, { NO_COLOR: '1' });
  return { code: r.code, stdout: r.stdout, stderr: Buffer.from(r.stderr, 'utf8') };
}

/** No ESC or BEL byte, no other C0 but newline, no DEL, no C1, no bidi override or isolate. */
function expectInert(bytes: Buffer): void {
  expect(bytes.includes(0x1b)).toBe(false);
  expect(bytes.includes(0x07)).toBe(false);
  expect(bytes.toString('utf8')).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
}

const dir = mkdtempSync(join(tmpdir(), 'cl-text-'));

describe('a run against a service whose errors carry escape sequences', () => {
  let service: Awaited<ReturnType<typeof scriptedServer>>;
  const pipeline = join(dir, 'p.yaml');

  beforeAll(async () => {
    service = await scriptedServer((_req, res) => json(res, 404, { statusCode: 404, message: HOSTILE, error: 'Not Found' }));
    writeFileSync(pipeline, 'name: p\nstreams:\n  - { table: avg_tps, chainIds: ["43114"] }\n');
  });
  afterAll(() => service.close());

  const urls = () => ['--data-url', service.url, '--metrics-url', service.url, '--node-url', service.url];

  it('JSON log lines: the same text to a JSON reader, inert to a terminal; the report quotes it inert', async () => {
    const r = await cli(['run', pipeline, '--lake', join(dir, 'a'), '--log-format', 'json', ...urls()]);
    expect(r.code).toBe(4);
    expectInert(r.stdout);
    expectInert(r.stderr);
    const report = r.stdout.toString('utf8');
    expect(report).toContain('errors:');
    expect(report).toContain(SHOWN);
    const lines = r.stderr.toString('utf8').trim().split('\n').filter((l) => l.startsWith('{'));
    const failed = lines.map((l) => JSON.parse(l) as { msg: string; err?: string }).find((l) => l.msg === 'partition failed');
    expect(failed?.err).toContain(HOSTILE);
  });

  it('pretty log lines', async () => {
    const r = await cli(['run', pipeline, '--lake', join(dir, 'b'), '--log-format', 'pretty', ...urls()]);
    expect(r.code).toBe(4);
    expectInert(r.stdout);
    expectInert(r.stderr);
    expect(r.stderr.toString('utf8')).toContain('partition failed');
    expect(r.stderr.toString('utf8')).toContain('\\u009b2K\\u202eevil');
  });
});

describe('export-op against a service whose operations carry escape sequences', () => {
  let service: Awaited<ReturnType<typeof scriptedServer>>;
  const id = 'op-1\x1b]0;pwned\x07';

  beforeAll(async () => {
    service = await scriptedServer((req, res) => {
      if (req.method === 'POST') json(res, 200, { operationId: id, operationStatus: 'RUNNING\x1b[2K', message: HOSTILE, metadata: {} });
      else json(res, 200, { operationId: id, operationStatus: 'FAILED', message: HOSTILE, metadata: { code: 'ErrX\u009b' } });
    });
  });
  afterAll(() => service.close());

  it('start --no-wait: the table, the progress lines and the hint are inert', async () => {
    const lake = join(dir, 'ops');
    const r = await cli(['export-op', 'start', '--lake', lake, '--data-url', service.url, '--first-date', '2024-01-01', '--last-date', '2024-01-02', '--addresses', '0x' + '1'.repeat(40), '--include-chains', '43114', '--no-wait']);
    expect(r.code).toBe(0);
    expectInert(r.stdout);
    expectInert(r.stderr);
    expect(r.stdout.toString('utf8')).toContain('op-1\\x1b]0;pwned\\x07');
    expect(r.stderr.toString('utf8')).toContain(SHOWN);
  });

  it('status of a FAILED operation: the error line is inert', async () => {
    const r = await cli(['export-op', 'status', 'op-1', '--lake', join(dir, 'ops'), '--data-url', service.url]);
    expect(r.code).toBe(1);
    expectInert(r.stdout);
    expectInert(r.stderr);
    expect(r.stderr.toString('utf8')).toContain(`FAILED with ErrX\\u009b: ${SHOWN}`);
  });
});

describe('tables of a lake holding such text', () => {
  const lake = join(dir, 'lake');

  beforeAll(async () => {
    mkdirSync(join(lake, 'erc_transfers'), { recursive: true });
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    const name = `'USD Coin' || chr(27) || ']0;pwned' || chr(7) || chr(27) || '[2K' || chr(155) || chr(8238) || 'é 中'`;
    await conn.run(`COPY (SELECT ${name} AS token_name, 'USDC' AS token_symbol) TO ${sqlString(join(lake, 'erc_transfers', 'hostile.parquet'))} (FORMAT parquet)`);
    conn.closeSync();
    const partition = `43114/token\x1b]0;pwned\x07\u009b`;
    mkdirSync(join(lake, STATE, 'erc_transfers'), { recursive: true });
    writeFileSync(
      join(lake, STATE, 'erc_transfers', `${slug(partition)}.json`),
      JSON.stringify({ table: 'erc_transfers', partition, files: [], rows: 0, rejects: 0, cursor: {}, lastRun: { runId: 'r', at: '2026-01-01T00:00:00Z', status: 'complete' } }),
    );
  });

  it('query --format table prints a token name inert; csv and json keep it as it is', async () => {
    const sql = 'SELECT token_name, token_symbol FROM erc_transfers';
    const table = await cli(['query', '--lake', lake, sql]);
    expect(table.code).toBe(0);
    expectInert(table.stdout);
    expect(table.stdout.toString('utf8')).toContain('USD Coin\\x1b]0;pwned\\x07\\x1b[2K\\u009b\\u202eé 中');
    const rows = JSON.parse((await cli(['query', '--lake', lake, '--format', 'json', sql])).stdout.toString('utf8')) as Array<{ token_name: string }>;
    expect(rows[0]!.token_name).toBe('USD Coin\x1b]0;pwned\x07\x1b[2K\u009b\u202eé 中');
    expect((await cli(['query', '--lake', lake, '--format', 'csv', sql])).stdout.toString('utf8')).toContain('USD Coin\x1b]0;pwned\x07');
  });

  it('status prints a partition id inert, as text or as JSON', async () => {
    const r = await cli(['status', '--lake', lake]);
    expect(r.code).toBe(0);
    expectInert(r.stdout);
    expect(r.stdout.toString('utf8')).toContain('erc_transfers/43114/token\\x1b]0;pwned\\x07\\u009b');
    const doc = await cli(['status', '--lake', lake, '--format', 'json']);
    expectInert(doc.stdout);
    expect(JSON.parse(doc.stdout.toString('utf8')).partitions[0].partition).toBe('43114/token\x1b]0;pwned\x07\u009b');
  });
});
