// A mistyped name is answered with the name meant, as a user meets it: the CLI as a process.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closest, editDistance } from '../../src/closest.js';
import { cliHere } from '../lake-fixture.js';

describe('closeness of names', () => {
  it('counts a swap of neighbours as one edit, and case as none', () => {
    expect(editDistance('tabel', 'table')).toBe(1);
    expect(editDistance('erc20_transfers', 'erc_transfers')).toBe(2);
    expect(editDistance('Contracts', 'contracts')).toBe(0);
    expect(editDistance('', 'run')).toBe(3);
  });

  it('offers a name only when it is close, the closest first', () => {
    expect(closest('rn', ['run', 'worker', 'query'])).toBe('run');
    expect(closest('contract', ['chainId', 'contracts', 'startBlock'])).toBe('contracts');
    expect(closest('erc20_transfers', ['erc20_balances', 'erc_transfers'])).toBe('erc_transfers');
    expect(closest('zzzz', ['run', 'query'])).toBeUndefined();
    // Part of a name is as good as a slip.
    expect(closest('transfers', ['blocks', 'erc_transfers'])).toBe('erc_transfers');
  });
});

describe('a mistyped name gets the fix', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-mistakes-'));
  const pipeline = (name: string, body: string) => {
    const f = join(dir, name);
    writeFileSync(f, `name: p\nstreams:\n${body}`);
    return f;
  };

  it('a command, a flag: exit 2, the one meant, nothing else', async () => {
    expect(await cliHere(['rn', 'pipelines/demo.yaml'])).toEqual({ code: 2, stdout: '', stderr: 'chainlake: rn: not a command; did you mean run? (chainlake --help lists them)\n' });
    expect(await cliHere(['stauts'])).toMatchObject({ code: 2, stderr: 'chainlake: stauts: not a command; did you mean status? (chainlake --help lists them)\n' });
    const lake = join(dir, 'never');
    expect(await cliHere(['run', 'pipelines/demo.yaml', '--lak', lake])).toEqual({ code: 2, stdout: '', stderr: 'chainlake: --lak: not an option of run; did you mean --lake? (chainlake run --help lists them)\n' });
    expect(existsSync(lake)).toBe(false);
    expect(await cliHere(['run', 'pipelines/demo.yaml', '--dry-rn'])).toMatchObject({ code: 2, stderr: 'chainlake: --dry-rn: not an option of run; did you mean --dry-run? (chainlake run --help lists them)\n' });
    expect(await cliHere(['check', '--formt=json'])).toMatchObject({ code: 2, stderr: 'chainlake: --formt: not an option of check; did you mean --format? (chainlake check --help lists them)\n' });
    // Nothing close: where the list is, not the list.
    expect(await cliHere(['frobnicate'])).toMatchObject({ code: 2, stderr: 'chainlake: frobnicate: not a command (chainlake --help lists them)\n' });
  });

  it('a pipeline key or table: the key as written and the one meant, not the 62 tables', async () => {
    const tabel = await cliHere(['run', pipeline('tabel.yaml', '  - tabel: erc_transfers\n    chainId: "43114"\n'), '--dry-run']);
    expect(tabel).toMatchObject({ code: 2, stdout: '' });
    expect(tabel.stderr).toBe(`chainlake: ${join(dir, 'tabel.yaml')}: streams[0].tabel: unknown key; did you mean table?\n`);
    const contract = await cliHere(['run', pipeline('contract.yaml', '  - table: erc_transfers\n    chainId: "43114"\n    contract: ["0xb10644cea485f69a5F8859e127911157A0d6D30d"]\n'), '--dry-run']);
    expect(contract.code).toBe(2);
    expect(contract.stderr).toContain(`${join(dir, 'contract.yaml')}: streams[0].contract: unknown key for erc_transfers; did you mean contracts?\n`);
    const table = await cliHere(['run', pipeline('table.yaml', '  - table: erc20_transfers\n    chainId: "43114"\n'), '--dry-run']);
    expect(table).toMatchObject({ code: 2, stderr: `chainlake: ${join(dir, 'table.yaml')}: streams[0].table: "erc20_transfers" is not a table; did you mean erc_transfers? (\`chainlake tables\` lists them)\n` });
    // No table key at all, nothing like one: where the tables are.
    expect((await cliHere(['run', pipeline('none.yaml', '  - chainId: "43114"\n'), '--dry-run'])).stderr).toBe(
      `chainlake: ${join(dir, 'none.yaml')}: streams[0].table: is required: the table this entry lands (\`chainlake tables\` lists them)\n`,
    );
    const top = await cliHere(['run', pipeline('top.yaml', '  - { table: avg_tps, chainIds: ["43114"] }\nsoruces: {}\n'), '--dry-run']);
    expect(top.stderr).toBe(`chainlake: ${join(dir, 'top.yaml')}: soruces: unknown key; did you mean sources?\n`);
  });
});
