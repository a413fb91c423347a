// scripts/demo-cluster.mjs (`make demo-cluster`): its own PostgreSQL, three workers and the demo
// pipeline through the queue give the tables of one process; and whatever happens (the run
// succeeds, fails, or the script is interrupted) no PostgreSQL, worker or run is left running, its
// temporary folder is gone, and the database's password is in none of its output.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive } from '../../src/state/process.js';
import { demoOf } from '../helpers.js';
import { leakFinder } from '../leaks.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/demo-cluster.mjs', import.meta.url));

let root: string;
/** A few small streams of the demo: the pipeline of the runs through the queue. */
let pipeline: string;

interface Outcome {
  code: number | null;
  out: string;
  /** The pids the script printed: PostgreSQL's, the workers', the run's. */
  pids: number[];
  /** The password the workers were given, read from their environment while they ran. */
  passwords: string[];
  /** What stayed in the script's TMPDIR. */
  left: string[];
}

/** Runs the script with its own TMPDIR; `onLine` may act on a line of its output as it comes. */
function demo(name: string, args: string[], onLine: (line: string, kill: (sig: NodeJS.Signals) => void) => void = () => {}): Promise<Outcome> {
  const tmp = join(root, `${name}-tmp`);
  mkdirSync(tmp);
  // As root, PostgreSQL runs as a `postgres` user that must pass through the folder.
  if (userInfo().uid === 0) chmodSync(tmp, 0o711);
  const child = spawn(process.execPath, [SCRIPT, ...args], { env: { ...process.env, TMPDIR: tmp } });
  let out = '';
  let partial = '';
  const passwords = new Set<string>();
  const onData = (c: Buffer) => {
    out += c.toString();
    const lines = (partial + c.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const worker = /^demo-cluster: worker \d+ \(pid (\d+)\) started/.exec(line);
      if (worker) {
        // Given in the environment, not on the command line (where any user's `ps` shows it).
        const url = readFileSync(`/proc/${worker[1]}/cmdline`, 'utf8').split('\0').find((a) => a.startsWith('postgres://'));
        expect(url && new URL(url).password).toBe('');
        const env = readFileSync(`/proc/${worker[1]}/environ`, 'utf8').split('\0').find((a) => a.startsWith('PGPASSWORD='));
        if (env) passwords.add(env.slice('PGPASSWORD='.length));
      }
      onLine(line, (sig) => child.kill(sig));
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      const pids = [...out.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1]));
      resolve({ code, out, pids: [...new Set(pids)], passwords: [...passwords], left: readdirSync(tmp) });
    });
  });
}

/** Nothing of the demo outlives it, and its password was printed nowhere. */
function expectNothingLeft(r: Outcome, workers: number): void {
  // The URL shown has no password: the children get it as PGPASSWORD.
  expect(r.out).toMatch(/PostgreSQL \(pid \d+\) at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres/);
  // PostgreSQL, the workers and the run.
  expect(r.pids.length, r.out).toBe(workers + 2);
  expect(r.pids.filter(alive)).toEqual([]);
  expect(r.left).toEqual([]);
  expect(r.passwords.length).toBe(1);
  expect(leakFinder(r.passwords)('output', Buffer.from(r.out))).toEqual([]);
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'cl-democ-'));
  pipeline = demoOf(['contracts', 'delegators', 'blocks']);
  // As root, PostgreSQL's user must pass through these folders to reach its data.
  if (userInfo().uid === 0) for (const d of [root, dirname(root)]) chmodSync(d, 0o711);
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('scripts/demo-cluster.mjs', () => {
  it('runs a pipeline through the queue with three workers: the tables equal one process, nothing left running', async () => {
    const lake = join(root, 'lake');
    // What the script does around the run is the subject, not the demo's streams (queue.test
    // compares each refresh kind through the queue): a few small streams, several jobs for the
    // workers (one per contract's partition).
    const r = await demo('ok', ['--lake', lake, '--compare', '--pipeline', pipeline]);
    expect(r.code, r.out.slice(-3000)).toBe(0);
    const equal = /demo-cluster: (\d+) tables, (\d+) rows: equal to one process/.exec(r.out);
    expect(equal, r.out.slice(-3000)).not.toBeNull();
    expect(Number(equal![2])).toBeGreaterThan(0);
    // Every worker stopped on SIGTERM with exit 0, and the run's report was shown.
    expect(r.out.match(/worker \d+ \(pid \d+\): \d+ jobs? done, exit 0/g)?.length).toBe(3);
    expect(r.out).toMatch(/run \S+ of demo: ok/);
    expect(existsSync(join(lake, 'contracts'))).toBe(true);
    expectNothingLeft(r, 3);
    // Nor in the lake the workers wrote.
    const find = leakFinder(r.passwords);
    const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
    expect(walk(lake).flatMap((f) => find(f, readFileSync(f)))).toEqual([]);
  });

  it("passes on a failed run's exit code, and stops everything", async () => {
    // With --queue a run refuses a pipeline with its API key written in it (exit 2).
    const file = join(root, 'written-key.yaml');
    writeFileSync(file, readFileSync('pipelines/demo.yaml', 'utf8').replace('"${CHAINLAKE_API_KEY}"', '"written-in-the-file"'));
    const r = await demo('failed', ['--lake', join(root, 'failed-lake'), '--workers', '1', '--pipeline', file]);
    expect(r.code, r.out.slice(-3000)).toBe(2);
    expect(r.out).toContain('sources.data.apiKey');
    expect(r.out).toContain('the run exited 2');
    expectNothingLeft(r, 1);
  });

  it('on SIGINT during the run stops the run, the workers and PostgreSQL, and exits non-zero', async () => {
    let sent = false;
    const r = await demo('interrupted', ['--lake', join(root, 'interrupted-lake'), '--compare', '--pipeline', pipeline], (line, kill) => {
      // The run has handed its partitions to the queue.
      if (!sent && line.includes('run queued')) {
        sent = true;
        kill('SIGINT');
      }
    });
    expect(sent, r.out.slice(-3000)).toBe(true);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('SIGINT: stopping the run and the workers');
    expect(r.out).not.toContain('equal to one process');
    expectNothingLeft(r, 3);
  });

  it('refuses a bad flag with exit 2, starting nothing', async () => {
    const r = await demo('bad-flag', ['--workers', '0']);
    expect(r.code).toBe(2);
    expect(r.out).toContain('--workers 0: a whole number from 1 to 99');
    expect(r.pids).toEqual([]);
    expect(r.left).toEqual([]);
  });
});
