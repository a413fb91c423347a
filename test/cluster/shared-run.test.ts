// Two `chainlake run` processes on one API key share its budget through PostgreSQL (--budget-db):
// the demo pipeline into two lakes at once, against one simulator with its rate limit on (short
// windows, a small budget, so both are hungry for several windows). Each process reaches the data
// service through its own loopback proxy, which records when each answer came and the
// `ratelimit-remaining` it carried: the CU the service counted in a window is its quota less the
// least remaining seen in it. The connection string's password (and the key) never reach an
// output or a file of the lake.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/server.js';
import { demoOfEachKind, runCli } from '../helpers.js';
import { leakFinder } from '../leaks.js';
import type { PgFixture } from '../pg-fixture.js';
import { limitedCluster, type Sent } from './fixture.js';

const KEY = 'shared-budget-key-DO-NOT-LEAK-5f1c';
const WINDOW_S = 2;
/** 400 CU a window of 2 s: the data streams of a table of each kind take several windows even for one process. */
const CU_PER_MINUTE = 12000;
const QUOTA = (CU_PER_MINUTE * WINDOW_S) / 60;

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));
}

let cluster: Awaited<ReturnType<typeof limitedCluster>>;
let pgdb: PgFixture;
let sim: Simulator;
let proxies: typeof cluster.proxies;
let root: string;
let runs: Array<{ code: number | null; stdout: string; stderr: string }>;
let badPassword: { code: number | null; stdout: string; stderr: string };
let malformed: { code: number | null; stdout: string; stderr: string };
const WRONG = 'wrong-pg-password-DO-NOT-LEAK-93ad';

beforeAll(async () => {
  cluster = await limitedCluster({ key: KEY, cuPerMinute: CU_PER_MINUTE, windowSeconds: WINDOW_S, runs: 2 });
  ({ pgdb, sim, proxies, root } = cluster);
  // A table of each kind, not the whole demo: the budget's windows, not the number of tables, are
  // what this measures.
  const pipeline = demoOfEachKind();
  const run = (i: number, db: string, lake = join(root, `lake${i}`)) =>
    runCli(
      ['run', pipeline, '--lake', lake, '--data-url', proxies[i]!.url, '--metrics-url', sim.url, '--node-url', sim.url, '--budget-db', db, '--log-level', 'trace', '--log-format', 'json'],
      { CHAINLAKE_API_KEY: KEY },
    );
  runs = await Promise.all([run(0, pgdb.url), run(1, pgdb.url)]);
  const wrong = new URL(pgdb.url);
  wrong.password = WRONG;
  badPassword = await run(0, wrong.toString(), join(root, 'lake-bad'));
  malformed = await runCli(['run', 'pipelines/demo.yaml', '--lake', join(root, 'lake-malformed'), '--simulator', '--budget-db', `postgres://u:${WRONG}@`], { CHAINLAKE_API_KEY: KEY });
}, 300_000);

afterAll(async () => {
  await cluster?.close();
});

/** The CU the service counted in each window (by its index), from both processes' answers. */
function counted(answers: Sent[]): Map<number, number> {
  const least = new Map<number, number>();
  for (const a of answers) {
    if (a.remaining === undefined || a.status === 429) continue;
    const w = Math.floor(a.answeredAt / (WINDOW_S * 1000));
    least.set(w, Math.min(least.get(w) ?? QUOTA, a.remaining));
  }
  return new Map([...least].map(([w, r]) => [w, QUOTA - r]));
}

describe('two runs on one key with --budget-db', () => {
  it('both finish, and together they get few 429s and spend the budget', () => {
    for (const r of runs) expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const all = proxies.flatMap((p) => p.sent);
    const limited = all.filter((a) => a.status === 429).length;
    const windows = counted(all);
    const first = Math.max(...proxies.map((p) => Math.floor(p.sent[0]!.answeredAt / (WINDOW_S * 1000))));
    const last = Math.min(...proxies.map((p) => Math.floor(p.sent.at(-1)!.answeredAt / (WINDOW_S * 1000))));
    // Whole windows in which both processes were at work.
    const both = [...windows].filter(([w]) => w > first && w < last);
    const each = proxies.map((p) => p.sent.filter((a) => a.status !== 429 && a.remaining !== undefined).length);
    console.log(
      `shared budget: ${all.length} data requests, ${limited} 429s (${((100 * limited) / all.length).toFixed(2)}%), requests per process ${each.join(' / ')}, ` +
        `CU of ${QUOTA} in the windows both ran: ${both.map(([, cu]) => cu).join(', ')}; 429s (answer, ms into its window when sent on) ${proxies.map((p) => p.sent.flatMap((a, i) => (a.status === 429 ? [`${i} at ${a.at % (WINDOW_S * 1000)}`] : [])).join(', ')).join(' / ')}`,
    );
    // Without the shared budget each learns the whole quota alone and they 429 each other; with
    // it, even before the budget is known (the first request goes alone), at most 1%.
    expect(limited / all.length).toBeLessThanOrEqual(0.01);
    expect(both.length).toBeGreaterThan(0);
    // Both got a clear share of the requests.
    for (const n of each) expect(n).toBeGreaterThan(0.2 * (each[0]! + each[1]!));
  });

  it('writes the budget the service announced for every process of the key, and no window carries more', async () => {
    const pg = (await import('pg')).default;
    const c = new pg.Client({ connectionString: pgdb.url });
    await c.connect();
    try {
      const { rows } = await c.query(`SELECT learnt_cu::int AS cu, learnt_window_ms::int AS ms FROM chainlake.budget_state WHERE service = 'data'`);
      // The quota announced, or a little less if a 429 taught one of them so since.
      expect(rows).toHaveLength(1);
      expect(rows[0].ms).toBe(WINDOW_S * 1000);
      expect(rows[0].cu).toBeGreaterThan(0.9 * QUOTA);
      expect(rows[0].cu).toBeLessThanOrEqual(QUOTA);
      const { rows: windows } = await c.query(`SELECT count(*)::int AS n, max(used)::int AS most FROM chainlake.budget_windows WHERE service = 'data'`);
      expect(windows[0].n).toBeGreaterThan(1);
      expect(windows[0].most).toBeLessThanOrEqual(QUOTA);
    } finally {
      await c.end();
    }
  });

  it('a database that refuses the password fails the run without showing it', () => {
    expect(badPassword.code).toBe(1);
    expect(badPassword.stdout + badPassword.stderr).toMatch(/the shared budget's database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres/);
  });

  it('a malformed connection string is a usage error that does not show it', () => {
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('--budget-db postgres://(unreadable connection string): not a postgres://');
  });

  it('the passwords and the key reach no output and no file of the lakes', () => {
    const password = new URL(pgdb.url).password;
    const leaks = leakFinder([password, WRONG, KEY]);
    const found: string[] = [];
    for (const [i, r] of [...runs, badPassword, malformed].entries()) {
      found.push(...leaks(`run ${i} stdout`, Buffer.from(r.stdout)), ...leaks(`run ${i} stderr`, Buffer.from(r.stderr)));
    }
    const files = walk(root);
    expect(files.some((f) => f.endsWith('.parquet'))).toBe(true);
    for (const f of files) found.push(...leaks(f, readFileSync(f)));
    expect(found).toEqual([]);
  });
});
