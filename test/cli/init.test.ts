// `chainlake init` as a user meets it: in an empty folder it writes pipelines/my.yaml, which
// `chainlake run pipelines/my.yaml --simulator` runs as it is, landing rows in every table it
// names; an existing file is kept unless --force is given.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/pipeline.js';

const BIN = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));

/** The built CLI run in `cwd`, with no API key in its environment. */
function cli(cwd: string, args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, CHAINLAKE_API_KEY: '' }, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('chainlake init', () => {
  it('writes pipelines/my.yaml, which runs on the simulator as it is, with rows in every table', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-init-'));
    const init = cli(dir, ['init']);
    expect(init).toEqual({ code: 0, stderr: '', stdout: "wrote pipelines/my.yaml: a starter pipeline (a token's transfers, an address's activity, a validator's rewards, chain metrics)\nnext: chainlake run pipelines/my.yaml --simulator --lake data/my\n" });
    const file = join(dir, 'pipelines', 'my.yaml');
    const pipeline = loadPipeline(file);
    expect(pipeline.name).toBe('my');
    const tables = [...new Set(pipeline.streams.map((s) => s.table))];
    expect(tables).toEqual(['erc_transfers', 'address_transactions', 'address_token_transfers', 'erc20_balances', 'historical_rewards', 'pending_rewards', 'delegators', 'chain_metrics']);
    // Each placeholder says what goes there against the production services.
    expect(readFileSync(file, 'utf8').match(/# production: /g)?.length).toBeGreaterThanOrEqual(tables.length);

    const run = cli(dir, ['run', 'pipelines/my.yaml', '--simulator', '--lake', 'lake', '--quiet']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^run \S+ of my: ok in /);
    // The run report's table: every partition done and rows in every table (an id the simulator
    // does not know answers 404, or an empty listing).
    const landed = Object.fromEntries(
      [...run.stdout.matchAll(/^(\w+) +(\d+)\/(\d+) +\d+ +\d+ +(\d+) /gm)].map((m) => [m[1], { done: m[2] === m[3], rows: Number(m[4]) }]),
    );
    expect(Object.keys(landed)).toEqual(tables);
    for (const table of tables) expect(landed[table], table).toEqual({ done: true, rows: expect.toSatisfy((n: number) => n > 0) });
  });

  it('keeps a file that exists unless --force is given (exit 2, the file untouched), and refuses a folder or a path through a file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-init-'));
    mkdirSync(join(dir, 'pipelines'));
    writeFileSync(join(dir, 'pipelines', 'my.yaml'), 'mine\n');
    expect(cli(dir, ['init'])).toEqual({ code: 2, stdout: '', stderr: 'chainlake: pipelines/my.yaml: exists; give --force to overwrite it, or another file name\n' });
    expect(readFileSync(join(dir, 'pipelines', 'my.yaml'), 'utf8')).toBe('mine\n');
    expect(cli(dir, ['init', '--force'])).toMatchObject({ code: 0, stderr: '' });
    expect(loadPipeline(join(dir, 'pipelines', 'my.yaml')).name).toBe('my');
    expect(cli(dir, ['init', 'pipelines'])).toEqual({ code: 2, stdout: '', stderr: `chainlake: pipelines: is a folder; give a file name (e.g. ${join('pipelines', 'my.yaml')})\n` });
    expect(cli(dir, ['init', 'pipelines/my.yaml/more/x.yaml'])).toEqual({ code: 2, stdout: '', stderr: 'chainlake: pipelines/my.yaml/more/x.yaml: pipelines/my.yaml is a file, not a folder\n' });
    expect(cli(dir, ['init', 'pipelines/a\nb.yaml'])).toEqual({ code: 2, stdout: '', stderr: 'chainlake: "pipelines/a\\nb.yaml": a file name with a control character\n' });
    expect(readdirSync(join(dir, 'pipelines'))).toEqual(['my.yaml']);
  });

  it('writes another file, making its folder, named after it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-init-'));
    expect(cli(dir, ['init', 'jobs/tokens.yaml'])).toMatchObject({ code: 0, stderr: '', stdout: expect.stringContaining('next: chainlake run jobs/tokens.yaml --simulator --lake data/tokens\n') });
    expect(loadPipeline(join(dir, 'jobs', 'tokens.yaml')).name).toBe('tokens');
    expect(readFileSync(join(dir, 'jobs', 'tokens.yaml'), 'utf8')).toContain('npx chainlake run jobs/tokens.yaml --simulator');
    expect(existsSync(join(dir, 'pipelines'))).toBe(false);
  });
});
