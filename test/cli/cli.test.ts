import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliHere } from '../lake-fixture.js';

const BIN = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));

// The binary as a user runs it: for --help and --version; the rest runs the CLI in this process.
function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('chainlake CLI usage errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-cli-'));

  it('prints help', () => {
    const r = cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('run [pipeline]');
    expect(r.stdout).toContain('query [sql]');
  });

  it('--version prints the version of package.json, from any working folder', () => {
    const { version } = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { version: string };
    const r = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8', cwd: dir });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${version}\n`);
    expect(cli(['--help']).stdout).toContain('--version');
  });

  it('exits 2 on an unknown flag, a missing argument, or no command', async () => {
    expect(await cliHere(['status', '--bogus'])).toMatchObject({ code: 2, stderr: 'chainlake: --bogus: not an option of status (chainlake status --help lists them)\n' });
    expect(await cliHere(['run'])).toMatchObject({ code: 2, stderr: expect.stringContaining('run: missing the pipeline file') });
    expect(await cliHere(['status', '--lake'])).toMatchObject({ code: 2 });
    expect(await cliHere([])).toMatchObject({ code: 2, stderr: expect.stringContaining('give a command') });
  });

  it('--budget-db that cannot be reached fails the run before it fetches anything, its password not shown', async () => {
    const lake = join(dir, 'budget-lake');
    const r = await cliHere(['run', 'pipelines/demo.yaml', '--simulator', '--budget-db', 'postgres://u:pw-NOT-SHOWN@127.0.0.1:1/db', '--lake', lake]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("chainlake: --budget-db: the shared budget's database postgres://u:***@127.0.0.1:1/db did not answer: connect ECONNREFUSED 127.0.0.1:1; nothing was fetched (the run would not share its budgets)\n");
    expect(r.stderr).not.toContain('pw-NOT-SHOWN');
    expect(existsSync(lake)).toBe(false);
  });

  it('an s3:// lake without credentials: exit 2 saying what to set', async () => {
    const none = { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_SESSION_TOKEN: '', AWS_PROFILE: '', AWS_EC2_METADATA_DISABLED: 'true', AWS_CONFIG_FILE: join(dir, 'none'), AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'), AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9', AWS_REGION: 'us-east-1' };
    expect(await cliHere(['status', '--lake', 's3://my-bucket/lake'], none)).toEqual({ code: 2, stdout: '', stderr: 'chainlake: s3://my-bucket/lake: no credentials for the store: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (see docs/object-storage.md)\n' });
  });

  it('says when the API key is read from a variable that is not set, against a service (not the simulator)', async () => {
    const p = join(dir, 'typo.yaml');
    writeFileSync(p, 'name: t\nsources:\n  data: { url: "http://127.0.0.1:9", apiKey: "${CHAINLAKE_TEST_UNSET_KEY_VAR}" }\nstreams:\n  - { table: chains }\n');
    const r = await cliHere(['run', p, '--lake', join(dir, 'typo-lake')]);
    expect(r.stderr).toContain('sources.data.apiKey: ${CHAINLAKE_TEST_UNSET_KEY_VAR} is not set in the environment: this run sends no key (the unauthenticated budget)');
    const sim = await cliHere(['run', p, '--simulator', '--lake', join(dir, 'typo-lake-sim')]);
    expect(sim.code).toBe(0);
    expect(sim.stderr).not.toContain('CHAINLAKE_TEST_UNSET_KEY_VAR');
  });

  it('exits 2 on a value not among an option\'s choices, naming them and the closest', async () => {
    expect(await cliHere(['query', '--format', 'jsn', 'SELECT 1'])).toEqual({ code: 2, stdout: '', stderr: 'chainlake: --format "jsn": not one of table, csv, json, arrow; did you mean json?\n' });
    expect(await cliHere(['sim', '--node-shape', 'x', '--avg-tps-next-key', 'y'])).toEqual({ code: 2, stdout: '', stderr: 'chainlake: --node-shape "x": not one of avalanchego, reference\n--avg-tps-next-key "y": not one of nextPageToken, nextPageStartKey\n' });
  });

  it('exits 2 on a number option given text, quoting what was given; a seed that is not a whole number of 0 or more', async () => {
    expect(await cliHere(['sim', '--port', 'abc'])).toEqual({ code: 2, stdout: '', stderr: 'chainlake: --port "abc": not a number\n' });
    expect(await cliHere(['sim', '--port=x1', '--slow-ms', 'soon'])).toEqual({ code: 2, stdout: '', stderr: 'chainlake: --port "x1": not a number\n--slow-ms "soon": not a number\n' });
    for (const [seed, said] of [['abc', '"abc": not a number'], ['-5', '-5: a whole number, 0 or more'], ['1.5', '1.5: a whole number, 0 or more']] as const) {
      const lake = join(dir, `seed-${seed}`);
      expect(await cliHere(['run', 'pipelines/demo.yaml', '--simulator', `--seed=${seed}`, '--lake', lake])).toEqual({ code: 2, stdout: '', stderr: `chainlake: --seed ${said}\n` });
      expect(existsSync(lake)).toBe(false);
    }
  });

  it('exits 2 on an option given twice, without its values (one may hold a password); a list option takes several', async () => {
    expect(await cliHere(['status', '--lake', 'data/lake', '--lake', dir])).toEqual({ code: 2, stdout: '', stderr: 'chainlake: --lake: given 2 times; give it once\n' });
    const secret = 'postgres://u:pw-DO-NOT-SHOW@127.0.0.1:1/db';
    const twice = await cliHere(['run', 'pipelines/demo.yaml', '--simulator', '--lake', join(dir, 'twice'), '--budget-db', secret, '--budget-db', secret]);
    expect(twice).toMatchObject({ code: 2, stderr: 'chainlake: --budget-db: given 2 times; give it once\n' });
    expect(existsSync(join(dir, 'twice'))).toBe(false);
    expect(await cliHere(['query', '--format', 'csv', '--format', 'json', '--file', 'a.sql', '--file', 'b.sql', '--file', 'c.sql'])).toMatchObject({ code: 2, stderr: 'chainlake: --format: given 2 times; give it once\n--file: given 3 times; give it once\n' });
    expect(await cliHere(['warehouse', '--rows', '--no-rows', '--lake', join(dir, 'none')])).toMatchObject({ code: 2, stderr: 'chainlake: --rows and --no-rows: give one of them\n' });
    expect(await cliHere(['query', '--warehouse=x.duckdb', '--no-warehouse', 'SELECT 1'])).toMatchObject({ code: 2, stderr: 'chainlake: --warehouse and --no-warehouse: give one of them\n' });
    // SQL after -- is not read for flags.
    const lake = join(dir, 'lake-of-none');
    mkdirSync(join(lake, '_state'), { recursive: true });
    expect(await cliHere(['query', '--lake', lake, '--no-warehouse', '--format', 'csv', '--', '-- --warehouse\nSELECT 1 AS x'])).toMatchObject({ code: 0, stdout: 'x\n1\n' });
    // compact's tables are a list: the lake is what is wrong here.
    expect(await cliHere(['compact', 'erc_transfers', 'blocks', '--lake', join(dir, 'none')])).toMatchObject({ code: 2, stderr: `chainlake: --lake ${join(dir, 'none')}: no such folder\n` });
  });

  it('exits 2 on a bad pipeline, naming the place, and writes nothing', async () => {
    const p = join(dir, 'bad.yaml');
    writeFileSync(p, 'name: bad\nstreams:\n  - { table: erc_transfers, chainId: "43114", contracts: ["0x12"] }\n');
    const lake = join(dir, 'lake-bad');
    const r = await cliHere(['run', p, '--lake', lake]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${p}: streams[0].contracts[0]: "0x12" is not an EVM address (0x + 40 hex digits)`);
    expect(existsSync(lake)).toBe(false);
  });

  it('exits 2 when --lake is a file or a URL flag is not a URL', async () => {
    const f = join(dir, 'file');
    writeFileSync(f, 'x');
    expect(await cliHere(['status', '--lake', f])).toMatchObject({ code: 2, stderr: expect.stringContaining('is a file, not a folder') });
    // A lake to be made under a file: named, before anything starts.
    expect(await cliHere(['run', 'pipelines/demo.yaml', '--simulator', '--lake', join(f, 'sub', 'lake')])).toEqual({ code: 2, stdout: '', stderr: `chainlake: --lake ${join(f, 'sub', 'lake')}: ${f} is a file, not a folder\n` });
    const p = join(dir, 'ok.yaml');
    writeFileSync(p, 'name: ok\nstreams:\n  - { table: avg_tps, chainIds: ["43114"] }\n');
    expect(await cliHere(['run', p, '--data-url', 'nope', '--lake', join(dir, 'l2')])).toMatchObject({ code: 2, stderr: expect.stringContaining('--data-url "nope": not an http(s) URL') });
    // A flag that stands alone is checked before the pipeline is read: its mistake is said first.
    expect(await cliHere(['run', join(dir, 'no-such.yaml'), '--data-url', 'nope'])).toMatchObject({ code: 2, stderr: 'chainlake: --data-url "nope": not an http(s) URL\n' });
  });

  it('exits 2 on a bad number flag, quoting it, and writes nothing', async () => {
    const p = join(dir, 'ok2.yaml');
    writeFileSync(p, 'name: ok\nstreams:\n  - { table: avg_tps, chainIds: ["43114"] }\n');
    const lake = join(dir, 'l3');
    expect(await cliHere(['run', p, '--flush-rows', '1.5', '--lake', lake])).toMatchObject({ code: 2, stderr: expect.stringContaining('--flush-rows "1.5": must be a whole number >= 1') });
    expect(existsSync(lake)).toBe(false);
    expect(await cliHere(['compact', '--target-rows', 'abc', '--lake', dir])).toMatchObject({ code: 2, stderr: expect.stringContaining('--target-rows "abc": must be a whole number >= 2') });
    expect(await cliHere(['compact', 'nope', '--lake', dir])).toMatchObject({ code: 2, stderr: expect.stringContaining('"nope" is not a table (erc_transfers, ') });
    // A name close to a table's is answered with it, as a pipeline's and a query's are, not with every table.
    for (const command of [['compact'], ['rebuild']])
      expect(await cliHere([...command, 'erc_transfer', '--lake', dir])).toMatchObject({ code: 2, stderr: `chainlake: ${command[0]}: "erc_transfer" is not a table; did you mean erc_transfers? (\`chainlake tables\` lists them)\n` });
    expect(await cliHere(['compact', '--lake', join(dir, 'missing')])).toMatchObject({ code: 2, stderr: expect.stringContaining('no such folder') });
  });

  it('exits 2 on SQL that does not run', async () => {
    const lake = join(dir, 'empty');
    mkdirSync(join(lake, '_state'), { recursive: true });
    const r = await cliHere(['query', '--lake', lake, 'SELECT nope FROM erc_transfers']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/nope/);
  });
});

describe('every reader of a lake, on a folder that does not exist or holds no lake', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-cli-no-lake-'));
  const missing = join(dir, 'lak');
  // A mistyped --lake naming the lake's parent, or some other folder: a table folder is no lake.
  const other = join(dir, 'other');
  mkdirSync(join(other, 'erc_transfers'), { recursive: true });
  const readers = (lake: string) => [
    ['query', '--lake', lake, 'SELECT count(*) FROM erc_transfers'],
    ['query', '--lake', lake, '--format', 'json', '--no-warehouse', 'SELECT 1 AS one'],
    ['status', '--lake', lake],
    ['status', '--lake', lake, '--format', 'json'],
    ['report', '--lake', lake],
    ['warehouse', '--lake', lake],
    ['export', 'erc_transfers', '--lake', lake, '--to', join(dir, 'out.csv')],
    ['check', '--lake', lake],
  ];

  it("exits 2 with check's words, printing and writing nothing; a lake without the table asked for reads it as empty", async () => {
    for (const [lake, why] of [
      [missing, 'no such folder'],
      [other, 'no lake there (no partition state and no run report in this folder)'],
    ] as const) {
      for (const args of readers(lake)) expect(await cliHere(args), args.join(' ')).toEqual({ code: 2, stdout: '', stderr: `chainlake: --lake ${lake}: ${why}\n` });
    }
    expect(readdirSync(dir).sort()).toEqual(['other']);
    expect(readdirSync(other)).toEqual(['erc_transfers']);
    // A lake without the table asked for (a run report, no partition yet) reads it as an empty table, and says so.
    const lake = join(dir, 'new');
    mkdirSync(join(lake, '_runs'), { recursive: true });
    expect(await cliHere(['query', '--lake', lake, '--format', 'csv', 'SELECT count(*) AS n FROM erc_transfers'])).toEqual({ code: 0, stdout: 'n\n0\n', stderr: 'chainlake: erc_transfers: no rows in this lake (no run has fetched it), so the answer reads it as empty\n' });
    expect(await cliHere(['status', '--lake', lake])).toMatchObject({ code: 0, stdout: `no partitions in ${lake} yet\n` });
  });

  it('openLake rejects either, in the same words', async () => {
    const { openLake } = await import('../../src/warehouse/lake.js');
    await expect(openLake(missing)).rejects.toThrow(`openLake: ${missing}: no such folder`);
    await expect(openLake(other)).rejects.toThrow(`openLake: ${other}: no lake there (no partition state and no run report in this folder)`);
  });
});
