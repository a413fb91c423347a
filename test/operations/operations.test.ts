// `chainlake export-op` as a child process against the simulator in this process (behind a proxy
// that records every request): the whole life of an export, a truncated one continued from
// nextDate, a FAILED one, --no-wait then status, the operations table and the files in the lake,
// the API key only ever in its header, and bad flags refused before anything is sent or written.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { MAX_EXPORT_DAYS } from '../../src/simulator/operations.js';
import { openWarehouse } from '../../src/warehouse/views.js';
import { query } from '../../src/warehouse/query.js';
import { json, keyedSimulator, scriptedServer, type Recorded } from '../helpers.js';
import { cliHere } from '../lake-fixture.js';
import { LakeLock } from '../../src/state/lock.js';

const KEY = 'sk-OPS-SENTINEL-5d2e';
const ADDRESS = '0x' + 'ab'.repeat(20);
const START = '/v1/operations/transactions:export';

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

async function operationsRows(lake: string): Promise<Array<Record<string, unknown>>> {
  const conn = await openWarehouse(lake);
  try {
    return (await query(conn, 'SELECT * FROM operations ORDER BY first_date, operation_id')).rows;
  } finally {
    conn.closeSync();
  }
}

function starts(requests: Recorded[]): Array<Record<string, unknown>> {
  return requests.filter((r) => r.method === 'POST' && r.url === START).map((r) => JSON.parse(r.body) as Record<string, unknown>);
}

describe('export-op against the simulator', () => {
  let keyed: Awaited<ReturnType<typeof keyedSimulator>>;
  let sim: Simulator;
  let proxy: typeof keyed.proxy;
  const dir = mkdtempSync(join(tmpdir(), 'cl-ops-'));
  const env = { CHAINLAKE_API_KEY: KEY };
  const source = () => ['--data-url', proxy.url];
  beforeAll(async () => {
    keyed = await keyedSimulator(KEY);
    ({ sim, proxy } = keyed);
  });
  afterAll(() => keyed.close());

  it('follows a truncated export through RUNNING to its end, continues it from nextDate, and lands both parts and both rows', async () => {
    const lake = join(dir, 'lifecycle');
    const before = proxy.requests.length;
    const r = await cliHere(['export-op', 'start', ...source(), '--lake', lake, '--first-date', '2025-01-01', '--last-date', '2025-02-15', '--addresses', ADDRESS, '--include-chains', '43114'], env);
    expect(r.stderr).not.toMatch(/Error|\n\s+at /);
    expect(r.code).toBe(0);
    const seen = proxy.requests.slice(before);

    // Two operations: 2025-01-01 for 31 days, then from the nextDate the first one gave.
    expect(starts(seen)).toEqual([
      { type: 'TRANSACTION_EXPORT_EVM', firstDate: '2025-01-01', lastDate: '2025-02-15', options: { addresses: [ADDRESS], includeChains: ['43114'] } },
      { type: 'TRANSACTION_EXPORT_EVM', firstDate: '2025-02-01', lastDate: '2025-02-15', options: { addresses: [ADDRESS], includeChains: ['43114'] } },
    ]);
    expect(MAX_EXPORT_DAYS).toBe(31);
    expect(r.stderr).toMatch(/started \(2025-01-01\.\.2025-02-15\): RUNNING[\s\S]*COMPLETED_WITH_WARNING WarnTruncatedExport[\s\S]*continuing from 2025-02-01[\s\S]*started \(2025-02-01\.\.2025-02-15\): RUNNING[\s\S]*: COMPLETED/);

    const rows = await operationsRows(lake);
    expect(rows.map((x) => [x.operation_status, x.code, x.first_date, x.last_date, x.next_date])).toEqual([
      ['COMPLETED_WITH_WARNING', 'WarnTruncatedExport', '2025-01-01', '2025-02-15', '2025-02-01'],
      ['COMPLETED', null, '2025-02-01', '2025-02-15', null],
    ]);
    const [first, second] = rows as [Record<string, unknown>, Record<string, unknown>];
    expect(second.continues_operation_id).toBe(first.operation_id);
    expect(first.continues_operation_id).toBeNull();
    expect(first.operation_type).toBe('TRANSACTION_EXPORT_EVM');
    expect(JSON.parse(first.options as string)).toEqual({ addresses: [ADDRESS], includeChains: ['43114'] });
    for (const row of rows) {
      expect(row.created_at).toMatch(/^\d{4}-\d{2}-\d{2} /);
      expect(row.updated_at! >= row.created_at!).toBe(true);
      // Each operation was polled at least once after it started RUNNING.
      expect(seen.filter((q) => q.method === 'GET' && q.url === `/v1/operations/${row.operation_id as string}`).length).toBeGreaterThanOrEqual(1);
    }

    // The files: in the lake, as the rows say (size and sha256), each holding its operation's days.
    for (const [row, from, to] of [[first, '2025-01-01', '2025-01-31'], [second, '2025-02-01', '2025-02-15']] as const) {
      expect(row.download_path).toBe(`exports/${row.operation_id as string}/transactions-${from}-${to}.csv.gz`);
      const bytes = readFileSync(join(lake, row.download_path as string));
      expect(String(bytes.length)).toBe(String(row.download_bytes));
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(row.download_sha256);
      const lines = gunzipSync(bytes).toString('utf8').trim().split('\n');
      expect(lines[0]).toBe('chain,date,block_timestamp,tx_hash,address,counterparty,direction,amount');
      expect(lines.length).toBeGreaterThan(1);
      for (const line of lines.slice(1)) {
        const [chain, date, , , address] = line.split(',');
        expect([chain, address]).toEqual(['43114', ADDRESS]);
        expect(date! >= from && date! <= to).toBe(true);
      }
    }
    // Nothing half-done is left: no staged file, no lock.
    expect(filesUnder(join(lake, '_staging'))).toEqual([]);
    expect(await LakeLock.held(lake)).toBe(false);
    // The table is checked and exported like every other: key unique, files owned, rows as committed.
    const checked = await cliHere(['check', '--lake', lake, '--all']);
    expect(checked.code, checked.stdout).toBe(0);
    expect(checked.stdout).toMatch(/PASS\s+operations\s+rows match partition states/);
    expect(checked.stdout).toMatch(/PASS\s+operations\s+key unique/);
    const out = join(dir, 'operations.csv');
    const exported = await cliHere(['export', 'operations', '--lake', lake, '--to', out, '--columns', 'operation_id,operation_status']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(readFileSync(out, 'utf8').trim().split('\n').slice(1).sort()).toEqual(rows.map((x) => `${x.operation_id},${x.operation_status}`).sort());

    // The key went in its header on every API request, never in a URL; the file store got no key.
    const api = seen.filter((q) => q.url.startsWith('/v1/'));
    expect(api.length).toBeGreaterThanOrEqual(4);
    for (const q of api) {
      expect(q.headers['x-data-api-key']).toBe(KEY);
      expect(q.url).not.toContain(KEY);
      expect(q.body).not.toContain(KEY);
    }
    const downloads = sim.operations.downloads.filter((d) => d.url.includes(first.operation_id as string) || d.url.includes(second.operation_id as string));
    expect(downloads).toHaveLength(2);
    for (const d of downloads) {
      expect(JSON.stringify(d.headers)).not.toContain(KEY);
      expect(d.url).not.toContain(KEY);
    }
    // Nor did it reach the output or the lake.
    expect(r.stdout + r.stderr).not.toContain(KEY);
    for (const f of filesUnder(lake)) expect(readFileSync(f).includes(Buffer.from(KEY)), f).toBe(false);
  });

  it('reports a FAILED operation with its code and message, exits 1, and records it', async () => {
    const lake = join(dir, 'failed');
    const r = await cliHere(['export-op', 'start', ...source(), '--lake', lake, '--first-date', '2025-10-01', '--last-date', '2030-01-01', '--addresses', ADDRESS, '--include-chains', '43114'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/operation \S+ FAILED with ErrInvalidRequest: lastDate: 2030-01-01 is after today \(2025-11-01\)/);
    const rows = await operationsRows(lake);
    expect(rows.map((x) => [x.operation_status, x.code, x.message, x.download_path])).toEqual([['FAILED', 'ErrInvalidRequest', 'lastDate: 2030-01-01 is after today (2025-11-01)', null]]);
    expect(existsSync(join(lake, 'exports'))).toBe(false);

    const unsupported = await cliHere(['export-op', 'start', ...source(), '--lake', lake, '--first-date', '2025-01-01', '--last-date', '2025-01-02', '--addresses', ADDRESS, '--include-chains', '99999'], env);
    expect(unsupported.code).toBe(1);
    expect(unsupported.stderr).toContain('FAILED with ErrInvalidRequest: options.includeChains: chain 99999 is not supported');
    expect((await operationsRows(lake)).map((x) => x.operation_status)).toEqual(['FAILED', 'FAILED']);
  });

  it('refuses bad flags with exit 2 naming each flag, sending and writing nothing', async () => {
    const lake = join(dir, 'refused');
    const base = ['export-op', 'start', ...source(), '--lake', lake];
    const ok = ['--first-date', '2025-01-01', '--last-date', '2025-01-02', '--addresses', ADDRESS, '--include-chains', '43114'];
    const cases: Array<[string[], string[]]> = [
      [['--first-date', '2025-02-30', '--last-date', '2025-03-01', '--addresses', ADDRESS, '--include-chains', '43114'], ['--first-date: "2025-02-30" is not a calendar date']],
      [['--first-date', '2025-3-1', '--last-date', '2025-03-01', '--addresses', ADDRESS, '--include-chains', '43114'], ['--first-date: "2025-3-1" is not a date of the form YYYY-MM-DD']],
      [['--first-date', '2025-03-02', '--last-date', '2025-03-01', '--addresses', ADDRESS, '--include-chains', '43114'], ['--first-date: "2025-03-02" is after the last date "2025-03-01"']],
      [['--last-date', '2025-03-01', '--addresses', ADDRESS, '--include-chains', '43114'], ['--first-date is required (YYYY-MM-DD)']],
      [['--first-date', '2025-01-01', '--last-date', '2025-01-02', '--include-chains', '43114'], ['--addresses: is required']],
      [['--first-date', '2025-01-01', '--last-date', '2025-01-02', '--addresses', `0x12,${ADDRESS}`, '--include-chains', '43114,c-chain'], ['--addresses: "0x12" is not an EVM address', '--include-chains: "c-chain" is not an EVM chain id']],
      [['--first-date', '2025-01-01', '--last-date', '2025-01-02', '--addresses', `${ADDRESS},,${ADDRESS}`, '--include-chains', '43114'], ['--addresses: an empty entry', 'is listed twice']],
      [['--type', 'TRANSACTION_EXPORT_FOO', ...ok], ['--type: "TRANSACTION_EXPORT_FOO" is not one of TRANSACTION_EXPORT_EVM']],
      [['--type', 'TRANSACTION_EXPORT_PRIMARY_NETWORK', '--first-date', '2025-01-01', '--last-date', '2025-01-02', '--addresses', ADDRESS, '--include-chains', '43114'], ['--addresses: "' + ADDRESS + '" is not a P-/X-chain address', '--include-chains: "43114" is not one of']],
      [['--c-chain-evm-addresses', ADDRESS, ...ok], ['--c-chain-evm-addresses: belongs to the primary-network exports']],
      [['--max-wait', '0', ...ok], ['--max-wait "0": a number of seconds > 0']],
    ];
    const before = proxy.requests.length;
    const results = await Promise.all(cases.map(([flags]) => cliHere([...base, ...flags], env)));
    cases.forEach(([flags, messages], i) => {
      expect(results[i]!.code, flags.join(' ')).toBe(2);
      for (const m of messages) expect(results[i]!.stderr, flags.join(' ')).toContain(m);
    });
    expect(proxy.requests.length).toBe(before);
    expect(existsSync(lake)).toBe(false);
  });

  it('a wrong key is refused by the service (401, exit 1) and is not printed', async () => {
    const lake = join(dir, 'wrong-key');
    const wrong = 'sk-WRONG-KEY-77ab';
    const r = await cliHere(['export-op', 'start', ...source(), '--lake', lake, '--first-date', '2025-01-01', '--last-date', '2025-01-02', '--addresses', ADDRESS, '--include-chains', '43114'], { CHAINLAKE_API_KEY: wrong });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('answered 401');
    expect(r.stdout + r.stderr).not.toContain(wrong);
    expect(existsSync(join(lake, 'operations'))).toBe(false);
  });
});

describe('export-op --no-wait, then status, on a simulator clock the test moves', () => {
  let clock = Date.UTC(2025, 10, 1);
  let sim: Simulator;
  const dir = mkdtempSync(join(tmpdir(), 'cl-ops-clock-'));
  beforeAll(async () => {
    sim = await startSimulator({ now: () => clock });
  });
  afterAll(() => sim.close());

  it('records RUNNING, then COMPLETED with the request fields kept, downloads once', async () => {
    const lake = join(dir, 'lake');
    const started = await cliHere(['export-op', 'start', '--no-wait', '--data-url', sim.url, '--lake', lake, '--first-date', '2025-03-01', '--last-date', '2025-03-10', '--addresses', ADDRESS, '--include-chains', '43114']);
    expect(started.code).toBe(0);
    let rows = await operationsRows(lake);
    expect(rows.map((x) => [x.operation_status, x.download_path])).toEqual([['RUNNING', null]]);
    const id = rows[0]!.operation_id as string;
    expect(started.stdout).toContain(id);

    const still = await cliHere(['export-op', 'status', id, '--data-url', sim.url, '--lake', lake]);
    expect(still.code).toBe(0);
    expect(still.stdout).toMatch(new RegExp(`${id}\\s+RUNNING`));
    expect(existsSync(join(lake, 'exports'))).toBe(false);

    clock += 60_000;
    const done = await cliHere(['export-op', 'status', id, '--data-url', sim.url, '--lake', lake]);
    expect(done.code).toBe(0);
    rows = await operationsRows(lake);
    expect(rows).toHaveLength(1);
    expect(rows.map((x) => [x.operation_status, x.first_date, x.last_date, x.download_path])).toEqual([
      ['COMPLETED', '2025-03-01', '2025-03-10', `exports/${id}/transactions-2025-03-01-2025-03-10.csv.gz`],
    ]);
    const file = join(lake, rows[0]!.download_path as string);
    const mtime = statSync(file).mtimeMs;
    const fetched = sim.operations.downloads.length;

    const again = await cliHere(['export-op', 'status', id, '--data-url', sim.url, '--lake', lake]);
    expect(again.code).toBe(0);
    expect(sim.operations.downloads.length).toBe(fetched);
    expect(statSync(file).mtimeMs).toBe(mtime);
    // The download link is a bearer link: it is neither printed nor kept.
    for (const out of [started, still, done, again]) expect(out.stdout + out.stderr).not.toMatch(/signature=|expires=/);
    for (const f of filesUnder(lake)) expect(readFileSync(f).includes(Buffer.from('signature=')), f).toBe(false);
  });

  it('the simulator: 400 with the standard body for a body that is no request, signed links that expire', async () => {
    const post = (body: string) => fetch(`${sim.url}${START}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for (const [body, message] of [
      ['{not json', 'the body is not valid JSON'],
      ['[]', 'the body must be a JSON object'],
      ['{"type":"TRANSACTION_EXPORT_X","options":{}}', 'type must be one of: TRANSACTION_EXPORT_EVM'],
      ['{"type":"TRANSACTION_EXPORT_EVM"}', 'options must be an object'],
      ['{"type":"TRANSACTION_EXPORT_EVM","options":{"addresses":"0x1"}}', 'options.addresses must be an array of strings'],
    ]) {
      const res = await post(body!);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ message: expect.stringContaining(message!), error: 'Bad Request', statusCode: 400 });
    }
    // A request of the right shape that is wrong (no dates) is an operation that fails.
    const created = await post(JSON.stringify({ type: 'TRANSACTION_EXPORT_EVM', options: { addresses: [ADDRESS], includeChains: ['43114'] } }));
    expect(created.status).toBe(201);
    const op = (await created.json()) as { operationId: string; operationStatus: string };
    expect(op.operationStatus).toBe('RUNNING');
    clock += 1000;
    const failed = await (await fetch(`${sim.url}/v1/operations/${op.operationId}`)).json();
    expect(failed).toMatchObject({ operationStatus: 'FAILED', metadata: { code: 'ErrInvalidRequest' }, message: 'firstDate: is required; lastDate: is required' });
    expect(failed.metadata.downloadUrl).toBeUndefined();

    // The deprecated startDate/endDate name the same dates.
    const ok = (await (await post(JSON.stringify({ type: 'TRANSACTION_EXPORT_EVM', startDate: '2025-01-01', endDate: '2025-01-02', options: { addresses: [ADDRESS], includeChains: ['43114'] } }))).json()) as { operationId: string };
    clock += 60_000;
    const done = (await (await fetch(`${sim.url}/v1/operations/${ok.operationId}`)).json()) as { operationStatus: string; metadata: { downloadUrl: string } };
    expect(done.operationStatus).toBe('COMPLETED');
    const link = done.metadata.downloadUrl;
    expect((await fetch(link)).status).toBe(200);
    expect((await fetch(link.replace(/signature=[0-9a-f]+/, 'signature=' + '0'.repeat(64)))).status).toBe(403);
    clock += 2 * 3_600_000;
    expect((await fetch(link)).status).toBe(403);
  });

  it('status of an unknown operation exits 1 with the service message', async () => {
    const r = await cliHere(['export-op', 'status', 'no-such-operation', '--data-url', sim.url, '--lake', join(dir, 'unknown')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('answered 404: operation no-such-operation not found');
  });
});

describe('export-op against a scripted service', () => {
  it('takes the reference 200 (not only 201) and millisecond timestamps, and tries a POST once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-ops-scripted-'));
    const op = { operationId: 'op-1', operationType: 'TRANSACTION_EXPORT_EVM', createdAtTimestamp: 1_735_689_600_000, updatedAtTimestamp: 1_735_689_600_000 };
    let url = '';
    const server = await scriptedServer((req, res) => {
      if (req.method === 'POST') return json(res, 200, { ...op, operationStatus: 'RUNNING', metadata: {} });
      if (req.url === '/v1/operations/op-1') return json(res, 200, { ...op, operationStatus: 'COMPLETED', updatedAtTimestamp: 1_735_689_660_000, metadata: { downloadUrl: `${url}/files/x%20y.csv?token=1` } });
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.end('a,b\n1,2\n');
    });
    url = server.url;
    try {
      const lake = join(dir, 'lake');
      const r = await cliHere(['export-op', 'start', '--data-url', server.url, '--lake', lake, '--first-date', '2025-01-01', '--last-date', '2025-01-01', '--addresses', ADDRESS, '--include-chains', '43114']);
      expect(r.code).toBe(0);
      const rows = await operationsRows(lake);
      expect(rows.map((x) => [x.operation_status, x.created_at, x.updated_at, x.download_path])).toEqual([['COMPLETED', '2025-01-01 00:00:00+00', '2025-01-01 00:01:00+00', 'exports/op-1/x_y.csv']]);
      expect(readFileSync(join(lake, 'exports/op-1/x_y.csv'), 'utf8')).toBe('a,b\n1,2\n');
    } finally {
      await server.close();
    }

    const failing = await scriptedServer((_req, res) => json(res, 503, { message: 'down', error: 'Service Unavailable', statusCode: 503 }));
    try {
      const r = await cliHere(['export-op', 'start', '--data-url', failing.url, '--lake', join(dir, 'lake2'), '--first-date', '2025-01-01', '--last-date', '2025-01-01', '--addresses', ADDRESS, '--include-chains', '43114']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('503 down');
      // Starting an export is not idempotent: a retry could start a second one.
      expect(failing.requests).toHaveLength(1);
    } finally {
      await failing.close();
    }
  });
});
