// A service that is not to be trusted (issue "never trust the wire"): `chainlake run` and
// `chainlake export-op` (as child processes where memory or time is measured, in this process
// where only what they send, print and keep is) against a loopback server that misbehaves as broken
// services, proxies and attackers do, with a second port standing for a foreign host that
// records whatever reaches it. Each case asserts what must hold whatever the service sends: the
// key never leaves its origin, the run's peak RSS (VmHWM, read from /proc while it runs) stays
// under the project's cap, the run ends in time with the right exit code and a message naming the
// endpoint and the cause, nothing lands outside the lake or from a refused answer, and what is
// printed is inert.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerHead, json, scriptedServer } from '../helpers.js';
import { cliHereBytes } from '../lake-fixture.js';
import { leakFinder } from '../leaks.js';

const BIN = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));
const KEY = 'sk-HOSTILE-SENTINEL-4b1d-DO-NOT-LEAK';
const leaks = leakFinder([KEY]);
/** The project's memory cap for a run, whatever a service sends. */
const RSS_CAP_MB = 300;
const CONTRACT = '0x' + 'ab'.repeat(20);
const MB = 1024 * 1024;

interface Output {
  code: number | null;
  stdout: string;
  stderr: string;
  out: Buffer;
  err: Buffer;
  ms: number;
  /** Peak resident set of the process (VmHWM), MB. */
  peakMb: number;
}

/**
 * The CLI as a child; its peak RSS read from /proc every 20 ms (VmHWM only grows). A run writes no
 * warehouse file: no case is about it, and its DuckDB views cost a run most of its CPU.
 */
function cli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Output> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    // The peak memory is the CLI's own: its allocator as a user's run has it, not as the suite sets it (tmpdir.setup.ts).
    const { DUCKDB_JE_MALLOC_CONF: _suite, ...inherited } = process.env;
    const child = spawn(process.execPath, [BIN, ...args, ...(args[0] === 'run' ? ['--no-warehouse'] : [])], { cwd, env: { ...inherited, CHAINLAKE_API_KEY: KEY, CHAINLAKE_LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let peakKb = 0;
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
      } catch {
        // gone
      }
    }, 20);
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      const o = Buffer.concat(out);
      const e = Buffer.concat(err);
      resolve({ code, stdout: o.toString(), stderr: e.toString(), out: o, err: e, ms: Date.now() - t0, peakMb: peakKb / 1024 });
    });
  });
}

/**
 * The CLI's main in this process, in `cwd`, with the environment `cli` gives its child: for the
 * cases about what a command sends, prints and keeps, not its memory or its time (no peak RSS).
 */
async function here(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Output> {
  const t0 = Date.now();
  const back = process.cwd();
  process.chdir(cwd);
  try {
    const r = await cliHereBytes([...args, ...(args[0] === 'run' ? ['--no-warehouse'] : [])], { CHAINLAKE_API_KEY: KEY, CHAINLAKE_LOG_LEVEL: 'info', ...env });
    return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr, out: r.stdout, err: Buffer.from(r.stderr), ms: Date.now() - t0, peakMb: NaN };
  } finally {
    process.chdir(back);
  }
}

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/** The misbehaving service: its handler is set per test. */
let handle: Handler = (_req, res) => json(res, 500, { message: 'no handler' });
let service: Awaited<ReturnType<typeof scriptedServer>>;
/** The foreign host: it must never be reached with the key. */
let foreign: Awaited<ReturnType<typeof scriptedServer>>;
const work = mkdtempSync(join(tmpdir(), 'cl-hostile-'));

beforeAll(async () => {
  // The chain's head is answered as a service does: the cases are about the listing.
  service = await scriptedServer((req, res, n) => answerHead(req, res, 5000) || handle(req, res, n));
  foreign = await scriptedServer((_req, res) => json(res, 200, { transactions: [], items: [], results: [], nextPageToken: undefined }));
});
afterAll(async () => {
  await service.close();
  await foreign.close();
});

function pipeline(name: string, streams: string, sources = ''): string {
  const file = join(work, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${name}
sources:
  data: { url: "${service.url}", apiKey: "\${CHAINLAKE_API_KEY}", retries: 1, timeoutMs: 20000${sources} }
  metrics: { url: "${service.url}", retries: 1 }
  node: { url: "${service.url}", retries: 1 }
streams:
${streams}
`,
  );
  return file;
}

const TRANSFERS = `  - { table: erc_transfers, chainId: "43114", contracts: ["${CONTRACT}"], startBlock: 1, endBlock: 1000, chunks: 1 }`;

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Committed Parquet files of a lake (staging and raw pages aside). */
function parquetFiles(lake: string): string[] {
  return filesUnder(lake).filter((f) => f.endsWith('.parquet') && !f.includes('_staging'));
}

function noLeak(o: Output, lake?: string): void {
  expect(leaks('stdout', o.out)).toEqual([]);
  expect(leaks('stderr', o.err)).toEqual([]);
  for (const f of lake ? filesUnder(lake) : []) expect(leaks(f, readFileSync(f))).toEqual([]);
}

/** Nothing a terminal acts on: no ESC, no C1 control, no bell. */
function inertText(s: string): void {
  expect(s).not.toMatch(/[\x07\x1b\x80-\x9f]/u);
}

/** Writes a JSON page of about `bytes` bytes a chunk at a time, as the client reads it (the server holds no more than a chunk). */
function flood(res: ServerResponse, bytes: number, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  const item = Buffer.from(JSON.stringify({ blockNumber: '5', txHash: '0x' + '11'.repeat(32), logIndex: 0, from: { address: CONTRACT }, to: { address: CONTRACT }, value: '1' }) + ',');
  const chunk = Buffer.concat(Array.from({ length: Math.ceil(65536 / item.length) }, () => item));
  let sent = 0;
  res.write('{"transactions":[');
  const more = () => {
    while (sent < bytes) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    res.end('{}]}');
  };
  res.on('close', () => (sent = Infinity));
  more();
}

describe('a service that redirects', () => {
  for (const status of [301, 302, 307, 308]) {
    it(`a ${status} to another host: the key does not follow, the run exits 4 (refused for good) naming that host and the fix`, async () => {
      const before = foreign.requests.length;
      handle = (req, res) => {
        res.writeHead(status, { location: `${foreign.url}${req.url}` });
        res.end();
      };
      const lake = join(work, `redirect-${status}`);
      const r = await here(['run', pipeline(`redirect${status}`, TRANSFERS), '--lake', lake, '--log-format', 'json'], work);
      expect(r.code, r.stderr).toBe(4);
      expect(foreign.requests.length - before).toBe(0);
      // The key was sent, to its own origin: it had something to leak.
      expect(service.requests.at(-1)!.headers['x-glacier-api-key']).toBe(KEY);
      expect(r.stderr).toContain(`redirected (${status}) to another host, ${foreign.url}`);
      expect(r.stderr).toContain('sources.data.url');
      expect(r.stderr).toContain('/v1/chains/{chainId}/tokens/{address}/transfers');
      expect(parquetFiles(lake)).toEqual([]);
      noLeak(r, lake);
    });
  }

  it('the metrics service and the node are held to their origin too', async () => {
    const before = foreign.requests.length;
    handle = (req, res) => {
      res.writeHead(307, { location: `${foreign.url}${req.url}` });
      res.end();
    };
    const streams = `  - { table: chain_metrics, chainIds: ["43114"], metrics: [txCount], timeInterval: day, startTimestamp: 1700000000 }\n  - { table: node_info }`;
    const r = await here(['run', pipeline('redirect-others', streams), '--lake', join(work, 'redirect-others'), '--log-format', 'json'], work);
    expect(r.code, r.stderr).toBe(4);
    expect(foreign.requests.length - before).toBe(0);
    expect(r.stderr).toContain('the metrics service redirected (307) to another host');
    expect(r.stderr).toContain('the node service redirected (307) to another host');
    noLeak(r);
  });

  it('export-op start: a 307 does not re-POST the body and the key to another host', async () => {
    const before = foreign.requests.length;
    handle = (req, res) => {
      res.writeHead(307, { location: `${foreign.url}${req.url}` });
      res.end();
    };
    const lake = join(work, 'redirect-op');
    const r = await here(['export-op', 'start', '--data-url', service.url, '--lake', lake, '--first-date', '2025-01-01', '--last-date', '2025-01-02', '--addresses', CONTRACT, '--include-chains', '43114'], work);
    expect(r.code, r.stderr).toBe(1);
    expect(foreign.requests.length - before).toBe(0);
    expect(r.stderr).toContain(`to another host, ${foreign.url}`);
    noLeak(r, lake);
  });
});

describe('a service that floods', () => {
  // One run: a page of 300 MB for each of eight partitions at once, each refused at the bound on
  // one answer, the bodies read together within the process's bound.
  it('pages of 300 MB, eight partitions at once: each refused at the bound, the run exits 1 in bounded memory, nothing landed', async () => {
    handle = (_req, res) => flood(res, 300 * MB);
    const contracts = Array.from({ length: 8 }, (_, i) => `"0x${String(i + 1).padStart(2, '0').repeat(20)}"`).join(', ');
    const lake = join(work, 'flood8');
    const streams = `  - { table: erc_transfers, chainId: "43114", contracts: [${contracts}], startBlock: 1, endBlock: 1000, chunks: 1 }`;
    const r = await cli(['run', pipeline('flood8', streams), '--lake', lake, '--log-format', 'json'], work);
    console.info(`8 x 300 MB pages: exit ${r.code} after ${r.ms} ms, peak RSS ${r.peakMb.toFixed(0)} MB`);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.match(/"msg":"partition failed"/g)).toHaveLength(8);
    expect(r.stderr).toContain('over 16 MiB, the bound on one answer (sources.data.maxResponseBytes)');
    expect(r.peakMb).toBeLessThan(RSS_CAP_MB);
    expect(parquetFiles(lake)).toEqual([]);
    noLeak(r, lake);
  });

  it('gzip and brotli bombs (1 MB on the wire, 1 GB decoded) stop at the bound in bounded memory', async () => {
    // Members of 16 MB of spaces, repeated: gunzip reads a gzip of many members as one body.
    const spaces = Buffer.alloc(16 * MB, 0x20);
    const member = gzipSync(spaces, { level: 9 });
    const gz = Buffer.concat([Buffer.from(gzipSync('{"transactions":[')), ...Array.from({ length: 64 }, () => member)]);
    // The least effort: the body decoded is the same, its compression in this process a fraction of the default's.
    const br = brotliCompressSync(Buffer.concat([Buffer.from('{"transactions":['), spaces]), { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
    for (const [encoding, body, lengthMb] of [
      ['gzip', gz, 1024],
      ['br', br, 16],
    ] as const) {
      handle = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding });
        res.end(body);
      };
      const lake = join(work, `bomb-${encoding}`);
      const r = await cli(['run', pipeline(`bomb${encoding}`, TRANSFERS, lengthMb === 16 ? ', maxResponseBytes: 8388608' : ''), '--lake', lake, '--log-format', 'json'], work);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/the body decoded is over (16|8) MiB/);
      console.info(`${encoding} bomb: exit ${r.code} after ${r.ms} ms, peak RSS ${r.peakMb.toFixed(0)} MB`);
      expect(r.peakMb, encoding).toBeLessThan(RSS_CAP_MB);
      expect(parquetFiles(lake)).toEqual([]);
    }
  });

  it('an answer nested 100,000 levels deep: exit 1 naming the endpoint and the cause', async () => {
    const deep = '{"transactions":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}';
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(deep);
    };
    const r = await cli(['run', pipeline('deep', TRANSFERS), '--lake', join(work, 'deep'), '--log-format', 'json'], work);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('nests deeper than 64 levels');
    expect(r.stderr).toContain('/v1/chains/{chainId}/tokens/{address}/transfers');
    expect(r.stderr).not.toContain('Maximum call stack');
  });
});

describe('a service that asks to wait', () => {
  for (const [header, label] of [
    ['1000000000', '10^9 seconds'],
    ['3600', 'an hour'],
    [new Date(Date.now() + 2 * 3_600_000).toUTCString(), 'an HTTP date two hours away'],
  ] as const) {
    it(`a Retry-After of ${label}: the partition ends at once saying when the service takes requests again (exit 1)`, async () => {
      handle = (_req, res) => json(res, 429, { statusCode: 429, message: 'Too many requests' }, { 'retry-after': header });
      const r = await cli(['run', pipeline('wait', TRANSFERS), '--lake', join(work, 'wait'), '--log-format', 'json'], work);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/answered 429 asking for no request until \d{4}-\d\d-\d\dT[\d:.]+Z \(\d+ s from now\), longer than sources\.data\.maxRetryAfterSeconds \(300 s\)/);
      expect(r.stderr).not.toContain('TimeoutOverflowWarning');
      // The run ends within the client's own backoff, not the service's wait.
      expect(r.ms).toBeLessThan(60_000);
    });
  }
});

describe('a service whose text is hostile', () => {
  it('a 404 message with escape codes reaches the terminal inert', async () => {
    const evil = '\x1b]0;pwned\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2K\r\x1b[32mrun finished: 0 errors\x1b[0m\u009b2J\u202e';
    handle = (_req, res) => json(res, 404, { statusCode: 404, message: evil });
    const r = await here(['run', pipeline('evil', TRANSFERS), '--lake', join(work, 'evil'), '--log-format', 'pretty'], work);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain('run finished: 0 errors');
    inertText(r.stderr);
    inertText(r.stdout);
  });
});

describe('export links', () => {
  /** A data service whose operation is done at once with `link` to download. */
  function withLink(link: string, file?: { body: Buffer; headers: Record<string, string> }) {
    handle = (req, res) => {
      const op = { operationId: 'op-1', operationType: 'TRANSACTION_EXPORT_EVM', operationStatus: 'COMPLETED', metadata: { downloadUrl: link }, createdAtTimestamp: 1_735_689_600, updatedAtTimestamp: 1_735_689_660 };
      if (req.url?.startsWith('/files/') && file) {
        res.writeHead(200, file.headers);
        return void res.end(file.body);
      }
      json(res, req.method === 'POST' ? 201 : 200, op);
    };
  }

  it('a file sent with Content-Encoding: gzip is stored byte for byte as sent', async () => {
    const body = gzipSync('a,b\n1,2\n');
    withLink(`${service.url}/files/x.csv.gz`, { body, headers: { 'content-type': 'application/gzip', 'content-encoding': 'gzip', 'content-length': String(body.length) } });
    const lake = join(work, 'link-gzip');
    const r = await here(['export-op', 'status', 'op-1', '--data-url', service.url, '--lake', lake], work);
    expect(r.code, r.stderr).toBe(0);
    const stored = filesUnder(join(lake, 'exports')).filter((f) => f.endsWith('x.csv.gz'));
    expect(stored).toHaveLength(1);
    expect(readFileSync(stored[0]!).equals(body)).toBe(true);
  });

  it('a file over maxDownloadBytes is refused and not kept', async () => {
    const body = Buffer.alloc(4096, 0x41);
    withLink(`${service.url}/files/big.csv.gz`, { body, headers: { 'content-type': 'application/gzip' } });
    const lake = join(work, 'link-big');
    const yaml = pipeline('linkbig', TRANSFERS, ', maxDownloadBytes: 2048');
    const r = await here(['export-op', 'status', 'op-1', '--pipeline', yaml, '--data-url', service.url, '--lake', lake], work);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('over 2048 bytes (sources.data.maxDownloadBytes)');
    expect(filesUnder(join(lake, 'exports'))).toEqual([]);
  });

  for (const [link, why] of [
    ['http://169.254.169.254/latest/meta-data/iam/credentials', 'not https'],
    ['https://169.254.169.254/latest/meta-data/iam/credentials', 'a loopback, private or link-local address'],
    ['https://10.20.30.40/export.csv.gz', 'a loopback, private or link-local address'],
    ['https://[::1]:1/export.csv.gz', 'a loopback, private or link-local address'],
    ['ftp://files.example/export.csv.gz', 'not https'],
  ] as const) {
    it(`a link to ${link} is not fetched (${why})`, async () => {
      withLink(link);
      const lake = join(work, 'link-refused');
      const r = await here(['export-op', 'status', 'op-1', '--data-url', service.url, '--lake', lake], work);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(why);
      expect(filesUnder(join(lake, 'exports'))).toEqual([]);
    });
  }

  it('a link to another loopback host than the data service (a service on localhost, a link to 127.0.0.1) is not fetched', async () => {
    const before = foreign.requests.length;
    withLink(`${foreign.url}/files/x.csv.gz`);
    const r = await here(['export-op', 'status', 'op-1', '--data-url', service.url.replace('127.0.0.1', 'localhost'), '--lake', join(work, 'link-loop')], work);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/not https|loopback, private or link-local/);
    expect(foreign.requests.length - before).toBe(0);
  });
});

describe('after every case', () => {
  it('nothing was written outside the lakes: only the pipelines, the lakes and their warehouse files', () => {
    const lakes = new Set(readdirSync(work, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name));
    const stray = filesUnder(work)
      .map((f) => f.slice(work.length + 1))
      .filter((f) => !lakes.has(f.split('/')[0]!) && !/^[\w-]+\.yaml$/.test(f) && !/^([\w-]+)\.warehouse\.duckdb(\.wal)?$/.test(f) && !/^[\w-]+\.report\.html$/.test(f));
    expect(stray).toEqual([]);
  });
});
