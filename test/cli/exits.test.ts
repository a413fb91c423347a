// What a run ends with, as a user (or a script) meets it: an exit code of its own for each outcome,
// the line that says whether a rerun helps only where it does, and output in proportion: an address
// that refuses connections fails at once naming it, an interrupt says one line per table.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cli } from '../lake-fixture.js';
import { json, scriptedServer } from '../helpers.js';
import { cliHere } from '../lake-fixture.js';
import { fileRefusal } from '../../src/cli/main.js';

const BIN = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cl-exits-'));
const CONTRACTS = ['0xb10644cea485f69a5F8859e127911157A0d6D30d', '0x56d1c618EE8c89834395105104F801592420d94b', '0x0e64ACe989f5423f0b152992e604f979315aaf55'];
const pipeline = join(dir, 'p.yaml');
writeFileSync(
  pipeline,
  [
    'name: p',
    'streams:',
    `  - { table: erc_transfers, chainId: "43114", contracts: [${CONTRACTS.map((c) => `"${c}"`).join(', ')}], startBlock: 1, endBlock: 1000 }`,
    '  - { table: chain_metrics, chainIds: ["43114"], metrics: [txCount, gasUsed], timeInterval: day, startTimestamp: 1700000000 }',
    '',
  ].join('\n'),
);

/** The error lines of a run report (stdout), after its `errors:` heading. */
function errorLines(stdout: string): string[] {
  const lines = stdout.split('\n');
  const at = lines.indexOf('errors:');
  return at < 0 ? [] : lines.slice(at + 1).filter((l) => l.startsWith('  '));
}

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers) await c();
  closers = [];
});

describe('exit codes', () => {
  it('--help says each exit code', () => {
    const help = cli(['--help']).stdout;
    for (const line of ['  0    done', '  2    bad usage or configuration', '  3    the lake is in use by another writer', '  4    a service refused a request for good', '  130  stopped by SIGINT (Ctrl-C), 143 by SIGTERM'])
      expect(help).toContain(line);
  });

  it('a service that refuses for good (404): exit 4, no promise that a rerun resumes; one a rerun gets past (5xx): exit 1, saying so', async () => {
    const notFound = await scriptedServer((_req, res) => json(res, 404, { statusCode: 404, message: 'no such chain' }));
    const unavailable = await scriptedServer((_req, res) => json(res, 503, { statusCode: 503, message: 'unavailable' }));
    closers.push(notFound.close, unavailable.close);
    const transfers = join(dir, 'transfers.yaml');
    writeFileSync(transfers, `name: t\nstreams:\n  - { table: erc_transfers, chainId: "43114", contracts: ["${CONTRACTS[0]}", "${CONTRACTS[1]}"], startBlock: 1, endBlock: 1000 }\n`);
    const refused = await cliHere(['run', transfers, '--quiet', '--lake', join(dir, 'refused'), '--data-url', notFound.url]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/^chainlake: the run failed: a service refused 2 partitions for good .* committed work is kept\n$/);
    expect(refused.stderr).not.toContain('resumes');
    const tps = join(dir, 'tps.yaml');
    writeFileSync(tps, 'name: tps\nsources:\n  metrics: { retries: 0 }\nstreams:\n  - { table: avg_tps, chainIds: ["43114"] }\n');
    const failed = await cliHere(['run', tps, '--quiet', '--lake', join(dir, 'unavailable'), '--metrics-url', unavailable.url]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe('chainlake: the run failed; committed work is kept and rerunning the same command resumes\n');
  });
});

describe('an address that refuses connections', () => {
  it('fails the run at once, without retries, naming the address, the flag it came from and the service, a line per table', async () => {
    const s = await scriptedServer(() => undefined);
    await s.close();
    const origin = s.url;
    const r = await cliHere(['run', pipeline, '--quiet', '--lake', join(dir, 'refused-port'), '--data-url', origin, '--metrics-url', origin]);
    expect(r.code).toBe(1);
    const errors = errorLines(r.stdout);
    const fix = 'refused the connection (ECONNREFUSED: nothing listens there); start the service there or correct the URL, then rerun';
    // Which partition of a table is named first is the order they failed in.
    expect(errors.map((l) => l.replace(/\(\d partitions: \S+ and/, '(N partitions: first and'))).toEqual([
      `  erc_transfers: the data service at ${origin} (--data-url) ${fix} (N partitions: first and 2 more)`,
      `  chain_metrics: the metrics service at ${origin} (--metrics-url) ${fix} (N partitions: first and 1 more)`,
    ]);
    // No retries in the report's table (requests, pages, rows, retries: the fourth number).
    for (const table of ['erc_transfers', 'chain_metrics']) expect(r.stdout).toMatch(new RegExp(`^${table} +0/\\d +\\d+ +0 +0 +0 `, 'm'));
  });
});

describe('an interrupt', () => {
  it('SIGINT: exit 130, one line saying the stop and what stays, one line per table in the report, no line per partition on stderr', async () => {
    // A service that never answers: the run cannot end before the signal.
    let third = () => {};
    const underWay = new Promise<void>((r) => (third = r));
    const s = await scriptedServer((_req, _res, n) => n === 3 && third());
    closers.push(s.close);
    const child = spawn(process.execPath, [BIN, 'run', pipeline, '--lake', join(dir, 'interrupted'), '--log-format', 'json', '--data-url', s.url, '--metrics-url', s.url]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Every partition's first request is under way (the three listings ask the chain's head first, one of them).
    await underWay;
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    expect(code, stderr).toBe(130);
    expect(stderr.endsWith('chainlake: stopped by SIGINT; committed work stays, a rerun resumes\n')).toBe(true);
    expect(stderr).not.toContain('the run failed');
    expect(stderr).not.toContain('"msg":"partition failed"');
    const errors = errorLines(stdout);
    expect(errors.map((l) => l.split(':')[0]!.trim())).toEqual(['erc_transfers', 'chain_metrics']);
    for (const l of errors) expect(l).toMatch(/: stopped by SIGINT \(\d partitions: .* and \d more\)$/);
  });
});

describe('an interrupt of a command that waits on one request', () => {
  it('export-op start and aggregate-signatures: SIGTERM exits 143 with the line that says the stop', async () => {
    let arrived = () => {};
    const s = await scriptedServer(() => arrived());
    closers.push(s.close);
    const commands = [
      ['export-op', 'start', '--lake', join(dir, 'export-stopped'), '--data-url', s.url, '--first-date', '2024-01-01', '--last-date', '2024-01-02', '--addresses', '0x' + '1'.repeat(40), '--include-chains', '43114', '--no-wait'],
      ['aggregate-signatures', '--network', 'mainnet', '--data-url', s.url, '--message', '0x' + 'ab'.repeat(40)],
    ];
    for (const args of commands) {
      const request = new Promise<void>((r) => (arrived = r));
      const child = spawn(process.execPath, [BIN, ...args]);
      const exited = new Promise<void>((r) => child.on('exit', () => r()));
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      // The request is under way: the service holds it unanswered until the signal.
      await Promise.race([request, exited]);
      child.kill('SIGTERM');
      const code = await new Promise<number | null>((r) => (child.exitCode !== null ? r(child.exitCode) : child.on('close', (c) => r(c))));
      expect(code, `${args[0]}: ${stderr}`).toBe(143);
      expect(stderr, args[0]).toContain('chainlake: stopped by SIGTERM; what was recorded stays in the lake');
    }
  });
});

describe("a file system's refusal", () => {
  const refused = (code: string, syscall: string, path: string) => Object.assign(new Error(`${code}: refused, ${syscall} '${path}'`), { code, syscall, path });
  it('is one line naming the path and why (exit 2 in main), not a stack; other errors are not taken for one', () => {
    expect(fileRefusal(refused('EROFS', 'open', '/srv/lake/_lock/.tmp-1'))).toBe('cannot open /srv/lake/_lock/.tmp-1: a read-only file system; give a folder this user can write (--lake)');
    expect(fileRefusal(refused('EACCES', 'open', '/srv/lake/_lock/.tmp-1'))).toBe('cannot open /srv/lake/_lock/.tmp-1: permission denied; give a folder this user can write (--lake)');
    // A recursive mkdir on a read-only mount says ENOENT.
    expect(fileRefusal(refused('ENOENT', 'mkdir', '/ro/lake'))).toBe('cannot mkdir /ro/lake: it cannot be made there (a read-only file system, or a parent that is not a folder); give a folder this user can write (--lake)');
    expect(fileRefusal(refused('ENOENT', 'open', '/srv/lake/x'))).toBeUndefined();
    expect(fileRefusal(refused('ECONNREFUSED', 'connect', '127.0.0.1'))).toBeUndefined();
    expect(fileRefusal(new Error('EACCES without a path'))).toBeUndefined();
  });
});
