// The run's progress display and log output: what it shows (rates, ETA, budget), how it redraws
// on a terminal with log lines above it, JSON lines off a terminal, and --quiet.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { eta, formatDuration, Progress, renderProgress, runOutput } from '../../src/cli/progress.js';
import { newStreamReport, type RunReport } from '../../src/pipeline/report.js';
import { cliHere } from '../lake-fixture.js';

function report(): RunReport {
  const transfers = { ...newStreamReport('erc_transfers'), partitions: 4, partitionsDone: 2, pages: 30, rows: 2500, requests: 30, status429: 3, retries: 4 };
  const metrics = { ...newStreamReport('chain_metrics'), partitions: 2, partitionsDone: 2, pages: 2, rows: 700, requests: 2 };
  return { runId: 'r1', pipeline: 'demo', lake: '/tmp/l', startedAt: '', status: 'running', streams: [transfers, metrics] };
}

/** A terminal that records what is written to it. */
function terminal(columns = 200) {
  const chunks: string[] = [];
  return { isTTY: true, columns, chunks, write: (s: string) => chunks.push(s), text: () => chunks.join('') };
}

describe('what the display shows', () => {
  it('ETA from the share of partitions done; none before the first or after the last', () => {
    expect(eta(1, 4, 10)).toBe(30);
    expect(eta(0, 4, 10)).toBeUndefined();
    expect(eta(4, 4, 10)).toBeUndefined();
    expect(formatDuration(42)).toBe('42s');
    expect(formatDuration(125)).toBe('2m05s');
    expect(formatDuration(3 * 3600 + 7 * 60)).toBe('3h07m');
  });

  it('per stream: partitions, pages, rows, requests per second, 429s, retries, ETA; CU per minute per service', () => {
    const r = report();
    // Samples 2 s apart: 10 more transfer requests (20 CU each), 1 more metrics request (100 CU).
    const [head, header, , transfers, metrics] = renderProgress(r, [{ t: 0, requests: { erc_transfers: 30, chain_metrics: 2 }, cu: { data: 600, metrics: 200 } }, { t: 2000, requests: { erc_transfers: 40, chain_metrics: 3 }, cu: { data: 800, metrics: 300 } }], 0, 10_000);
    expect(head).toBe('run r1 of demo: 4/6 partitions, 10s, about 5s left | data 6,000 CU/min (800 CU), metrics 3,000 CU/min (300 CU)');
    expect(header!.split(/\s+/)).toEqual(['table', 'partitions', 'pages', 'rows', 'req/s', '429s', 'retries', 'ETA']);
    expect(transfers!.split(/\s+/)).toEqual(['erc_transfers', '2/4', '30', '2500', '5', '3', '4', '~10s']);
    expect(metrics!.split(/\s+/)).toEqual(['chain_metrics', '2/2', '2', '700', '0.5', '0', '0', 'done']);
    // With a budget (pipeline tier or cuPerMinute), the share of it in use.
    expect(renderProgress(r, [{ t: 0, requests: {}, cu: { data: 600 } }, { t: 2000, requests: {}, cu: { data: 800 } }], 0, 10_000, { data: 8000 })[0]).toContain('data 6,000 of 8,000 (75%) CU/min (800 CU)');
  });

  it('a stream with failed partitions says so', () => {
    const r = report();
    r.streams[0]!.errors.push('43114/0xabc: 404 Not Found');
    const lines = renderProgress(r, [], 0, 1000);
    expect(lines[3]).toMatch(/erc_transfers.*1 failed$/);
  });
});

describe('on a terminal', () => {
  it('redraws in place, prints log lines above the block, and removes it when done', () => {
    const out = terminal();
    const p = new Progress({ out, live: true, now: () => 0 });
    p.start(report());
    const n = p.lines().length;
    expect(out.chunks).toHaveLength(1);
    expect(out.chunks[0]!.split('\n')).toHaveLength(n + 1);
    p.tick();
    expect(out.chunks[1]).toBe(`\x1b[${n}A\r\x1b[J`);
    p.write('WARN: a log line\n');
    // Clear the block, the line, the block again below it.
    expect(out.chunks.slice(3, 6)).toEqual([`\x1b[${n}A\r\x1b[J`, 'WARN: a log line\n', out.chunks[2]]);
    p.stop();
    expect(out.chunks.at(-1)).toBe(`\x1b[${n}A\r\x1b[J`);
    const after = out.chunks.length;
    p.tick();
    expect(out.chunks.length).toBe(after);
  });

  it('cuts lines to the terminal width, so that counting lines to redraw stays right', () => {
    const out = terminal(40);
    const p = new Progress({ out, live: true, now: () => 0 });
    p.start(report());
    p.stop();
    for (const line of out.chunks[0]!.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(39);
  });

  it('log lines go through the display, at warn by default', () => {
    const out = terminal();
    const { logger, progress } = runOutput({}, out, {});
    expect(progress?.live).toBe(true);
    expect(logger.level).toBe('warn');
    expect(runOutput({ logLevel: 'debug' }, terminal(), {}).logger.level).toBe('debug');
    expect(runOutput({ logFormat: 'json' }, terminal(), {}).progress?.live).toBe(false);
    expect(runOutput({}, terminal(), { TERM: 'dumb' }).progress?.live).toBe(false);
  });
});

describe('off a terminal', () => {
  it('logs a progress line now and then, as JSON', () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (s: string) => lines.push(s) });
    let now = 0;
    const p = new Progress({ out: { write: () => undefined, isTTY: false }, live: false, now: () => now });
    const r = report();
    p.start(r, logger);
    now = 30_000;
    r.streams[0]!.rows = 2600;
    p.tick();
    p.stop();
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line.msg).toBe('progress');
    expect(line.streams[0]).toEqual({ table: 'erc_transfers', partitions: 4, partitionsDone: 2, pages: 30, rows: 2600, requests: 30, status429: 3 });
  });

  it('--quiet: no display and a silent logger', () => {
    const { logger, progress } = runOutput({ quiet: true }, terminal(), {});
    expect(progress).toBeUndefined();
    expect(logger.level).toBe('silent');
  });
});

describe('chainlake run output', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-progress-'));
  const pipeline = join(dir, 'p.yaml');
  writeFileSync(pipeline, 'name: p\nstreams:\n  - { table: avg_tps, chainIds: ["43114"] }\n');

  // In this process, with its standard streams as pipes (cliHere): what is written to them is
  // the subject, not the process; the terminal's case below keeps a process of its own.
  it('off a terminal: pino JSON lines on stderr, the report on stdout', async () => {
    const r = await cliHere(['run', pipeline, '--simulator', '--lake', join(dir, 'a')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^run \S+ of p: ok/);
    const lines = r.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    expect(lines.map((l) => JSON.parse(l).msg)).toContain('run finished');
  });

  it('--quiet: nothing on stderr; --quiet with --log-level is a usage error', async () => {
    const r = await cliHere(['run', pipeline, '--simulator', '--quiet', '--lake', join(dir, 'b')]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^run \S+ of p: ok/);
    expect(await cliHere(['run', pipeline, '--quiet', '--log-level', 'info', '--lake', join(dir, 'c')])).toMatchObject({ code: 2, stderr: expect.stringContaining('mutually exclusive') });
  });

  // util-linux `script` gives the run a pseudo-terminal, as a person at a shell has.
  it.skipIf(!existsSync('/usr/bin/script'))('on a terminal: the live block, then the report', () => {
    const cmd = [process.execPath, 'bin/chainlake.js', 'run', pipeline, '--simulator', '--lake', join(dir, 'd')].map((a) => `'${a}'`).join(' ');
    const r = spawnSync('script', ['-qefc', `stty cols 160; ${cmd}`, '/dev/null'], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/table\s+partitions\s+pages\s+rows\s+req\/s\s+429s\s+retries\s+ETA/);
    expect(r.stdout).toMatch(/avg_tps\s+0\/1/);
    // Redrawn in place, and cleared before the report.
    expect(r.stdout).toMatch(/\x1b\[\d+A\r\x1b\[J(\r\n)?run \S+ of p: ok/);
    // No JSON log lines on a terminal.
    expect(r.stdout).not.toContain('"level":');
  });
});
