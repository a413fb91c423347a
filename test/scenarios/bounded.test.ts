// Service text of megabytes (issue 36): a page token, an error message, field names, a redirect's
// host and a JSON-RPC error, each sent by a loopback service to `chainlake run`. What chainlake
// prints, logs and keeps of them (stderr and stdout, the run report in _runs/, `status`, `check`)
// stays within the bounds below, says how long the text was, and holds no part of the key.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerHead, json, runCli } from '../helpers.js';
import { leakFinder } from '../leaks.js';
import { cliHere } from '../lake-fixture.js';
import { LINE_CHARS, MAX_NAMES, OTHER_NAMES } from '../../src/text.js';
import { statusJson } from '../../src/cli/status.js';
import { checksJson, formatChecks } from '../../src/warehouse/check.js';
import type { PartitionState } from '../../src/state/store.js';

const MB4 = 4 * 1024 * 1024;
const KEY = 'sk-BOUNDED-SENTINEL-7f3e-DO-NOT-LEAK';
const leaks = leakFinder([KEY]);
/** No line printed is longer (a JSON log line holds its message and an error, each within LINE_CHARS)... */
const LINE_MAX = 2 * LINE_CHARS + 1000;
/** ...and no output or report is larger, where a string of the service's is 4 MiB. */
const TOTAL_MAX = 256 * 1024;
const CONTRACT = '0x' + 'ab'.repeat(20);
const OTHER = '0x' + 'cd'.repeat(20);
const THIRD = '0x' + 'ef'.repeat(20);

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handle: Handler = (_req, res) => json(res, 500, { message: 'no handler' });
let server: Server;
let url = '';
const work = mkdtempSync(join(tmpdir(), 'cl-bounded-'));

beforeAll(async () => {
  // A request line of megabytes (the page token sent back) is read, as a lax service would.
  server = createServer({ maxHeaderSize: 64 * 1024 * 1024 }, (req, res) => answerHead(req, res, 5000) || handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function pipeline(name: string, streams: string): string {
  const file = join(work, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${name}
sources:
  data: { url: "${url}", apiKey: "\${CHAINLAKE_API_KEY}", retries: 0 }
  node: { url: "${url}", retries: 0 }
streams:
${streams}
`,
  );
  return file;
}

/**
 * A run as a process: the service answers megabytes from this process, which a run here would
 * hold up past the request timeout on a loaded machine. No warehouse file: none of these cases is
 * about it, and its DuckDB views cost a run most of its CPU.
 */
const run = (name: string, streams: string) => runCli(['run', pipeline(name, streams), '--lake', join(work, name), '--log-format', 'json', '--no-warehouse'], { CHAINLAKE_API_KEY: KEY, CHAINLAKE_LOG_LEVEL: 'info' });

function reportOf(lake: string): { text: string; report: { streams: Array<{ errors: string[]; extraFields: Record<string, number> }> } } {
  const dir = join(lake, '_runs');
  const [file] = readdirSync(dir).filter((f) => f.endsWith('.json'));
  const text = readFileSync(join(dir, file!), 'utf8');
  return { text, report: JSON.parse(text) };
}

function expectBounded(where: string, text: string): void {
  expect(text.length, `${where}: ${text.length} chars`).toBeLessThan(TOTAL_MAX);
  const longest = Math.max(0, ...text.split('\n').map((l) => l.length));
  expect(longest, `${where}: a line of ${longest} chars`).toBeLessThanOrEqual(LINE_MAX);
  expect(leaks(where, Buffer.from(text))).toEqual([]);
  // Nor the head of the key, which a cut before the redaction leaves.
  expect(text, where).not.toContain(KEY.slice(0, 8));
}

// Processes that write and read megabytes: on a loaded machine, more than the minute a test is given by default.
describe('a service whose text is megabytes long', { timeout: 300_000 }, () => {
  it('a page token, a message echoing the key, and field names of megabytes: stderr, logs, the run report, status and check stay bounded and say what was cut', async () => {
    const item = {
      ['f'.repeat(MB4)]: 1,
      ...Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`drifted_${i}`, i])),
    };
    // One contract's listing sends a token of megabytes (not followed), another a message of
    // megabytes echoing the key, the third the drifted item.
    handle = (req, res) => {
      if (req.url!.includes(CONTRACT)) json(res, 200, { transfers: [], nextPageToken: 't'.repeat(MB4) });
      else if (req.url!.includes(OTHER)) json(res, 200, { transfers: [item] });
      else json(res, 404, { statusCode: 404, message: 'm'.repeat(290) + KEY + 'n'.repeat(MB4) });
    };
    const lake = join(work, 'token');
    const r = await run('token', `  - { table: erc_transfers, chainId: "43114", contracts: ["${CONTRACT}", "${OTHER}", "${THIRD}"], startBlock: 1, endBlock: 1000, chunks: 1 }`);
    expect(r.code, r.stderr.slice(0, 2000)).toBe(4);
    expectBounded('stderr', r.stderr);
    expectBounded('stdout', r.stdout);
    // The errors say how long the token was (it is never sent back), and the service's answer.
    expect(r.stderr).toMatch(/a page token of 4,194,304 characters, longer than the 8,192 chainlake follows \(\\?"t+…\[cut: [\d,]+ chars\]/);
    expect(r.stderr).toMatch(/GET \/v1\/chains\/43114\/tokens\/0xef[^ ]* \([^)]*\): the data service answered 404: mmm/);
    expect(r.stderr).toContain('[redacted]');
    const { text, report } = reportOf(lake);
    expectBounded('run report', text);
    const stream = report.streams[0]!;
    expect(stream.errors.join('\n')).toMatch(/page token of 4,194,304 characters[^\n]*t+…\[cut: /);
    // 5,001 drifted names: the first MAX_NAMES kept (the long one cut, saying its length), the rest in one count.
    expect(Object.keys(stream.extraFields)).toHaveLength(MAX_NAMES + 1);
    expect(Object.keys(stream.extraFields)).toContain(`${'f'.repeat(2000 - '…[cut: 4,194,304 chars]'.length)}…[cut: 4,194,304 chars]`);
    expect(stream.extraFields[OTHER_NAMES]).toBe(5001 - MAX_NAMES);
    // In this process: what they print is the subject, not a process's start-up (one each).
    for (const args of [['status'], ['status', '--format', 'json'], ['check'], ['check', '--format', 'json']]) {
      const s = await cliHere([...args, '--lake', lake]);
      expectBounded(args.join(' '), s.stdout + s.stderr);
    }
  });

  it('a redirect to a host named in 12,000 characters: the message says where, bounded', async () => {
    const host = 'a'.repeat(12_000) + '.example';
    handle = (_req, res) => json(res, 302, {}, { location: `http://${host}/v1/next` });
    const r = await run('redirect', `  - { table: erc_transfers, chainId: "43114", contracts: ["${CONTRACT}"], startBlock: 1, endBlock: 1000, chunks: 1 }`);
    expect(r.code, r.stderr.slice(0, 2000)).toBe(4);
    expect(r.stderr).toMatch(/redirected \(302\) to another host, http:\/\/a+…\[cut: 12,015 chars\]/);
    expectBounded('stderr', r.stderr);
    expectBounded('run report', reportOf(join(work, 'redirect')).text);
  });

  it('a JSON-RPC error of megabytes: the error line and the report stay bounded', async () => {
    handle = (_req, res) => json(res, 200, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'e'.repeat(MB4), data: { why: 'd'.repeat(MB4 / 4) } } });
    const r = await run('rpc', '  - { table: node_info }');
    expect(r.code, r.stderr.slice(0, 2000)).toBe(1);
    expect(r.stderr).toMatch(/JSON-RPC error -32000: e+…\[cut: 4,194,304 chars\]/);
    expectBounded('stderr', r.stderr);
    expectBounded('run report', reportOf(join(work, 'rpc')).text);
  });
});

describe('export-op against a service whose operation is megabytes long', { timeout: 300_000 }, () => {
  it('start --no-wait: the table of operations and the progress lines are bounded', async () => {
    const id = 'op-' + 'i'.repeat(MB4);
    handle = (_req, res) => json(res, 200, { operationId: id, operationStatus: 'RUNNING', message: 'm'.repeat(MB4), metadata: {} });
    const lake = join(work, 'ops');
    const r = await runCli(['export-op', 'start', '--lake', lake, '--data-url', url, '--first-date', '2024-01-01', '--last-date', '2024-01-02', '--addresses', '0x' + '1'.repeat(40), '--include-chains', '43114', '--no-wait'], { CHAINLAKE_API_KEY: KEY });
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    expectBounded('stdout', r.stdout);
    expect(r.stdout).toContain('…[cut: 4,194,307 chars]');
    expectBounded('stderr', r.stderr);
    expect(r.stderr).toContain('…[cut: ');
  });
});

describe('status and check on a lake that holds such text', () => {
  it('status --format json: a cursor holding a page token of megabytes is shown bounded, saying its length', () => {
    const state = { table: 'erc_transfers', partition: '43114/0xab', cursor: { window: { query: { startBlock: '1' }, token: 't'.repeat(MB4), files: [], rows: 0 } }, rows: 0, rejects: 0, files: [] };
    const out = JSON.stringify(statusJson('/lake', [state as unknown as PartitionState]), null, 1);
    expectBounded('status --format json', out);
    expect(out).toMatch(/"token": "t+…\[cut: 4,194,304 chars\]"/);
  });

  it('check: a detail quoting a value of megabytes is bounded, as text and as JSON', () => {
    const detail = `1 key on more than one row, e.g. ${'v'.repeat(MB4)}`;
    const results = [{ check: 'unique key', table: 'erc_transfers', status: 'fail' as const, detail }];
    for (const [where, out] of [['check', formatChecks(results)], ['check --format json', JSON.stringify(checksJson('/lake', results))]] as const) {
      expectBounded(where, out);
      expect(out).toContain(`…[cut: ${detail.length.toLocaleString('en-US')} chars]`);
    }
  });
});
