// `chainlake query` as an analyst meets it (issue 37): SQL from standard input as well as from the
// command line or a file, every statement's result in turn, a prompt over the lake (-i, or no SQL
// in a terminal), and a mistyped table answered with the lake's closest tables.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedDemoLake } from '../lake-fixture.js';
import { step } from '../../src/cli/shell.js';
import { closest } from '../../src/closest.js';
import { queryError } from '../../src/warehouse/names.js';

const BIN = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));
const history = join(mkdtempSync(join(tmpdir(), 'cl-shell-')), 'history');

/** The CLI as a process, `input` on its standard input (a pipe, not a terminal). */
function query(args: string[], input = '') {
  const r = spawnSync(process.execPath, [BIN, 'query', ...args], { input, env: { ...process.env, CHAINLAKE_HISTORY: history }, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}

let lake = '';
beforeAll(async () => {
  lake = await sharedDemoLake();
});

describe('the prompt, line by line', () => {
  it('runs a statement once it ends with `;`, across lines; dot commands and quitting', () => {
    expect(step('', 'SELECT 1;')).toEqual({ run: 'SELECT 1;' });
    expect(step('', 'SELECT 1')).toEqual({ more: 'SELECT 1' });
    expect(step('SELECT 1', '  + 2 ;  ')).toEqual({ run: 'SELECT 1\n  + 2 ;  ' });
    expect(step('', '   ')).toEqual({ nothing: true });
    expect(step('', '.schema erc_transfers;')).toEqual({ command: 'schema', arg: 'erc_transfers' });
    expect(step('', '.quit')).toEqual({ quit: true });
    expect(step('', '.exit')).toEqual({ quit: true });
    // Inside a statement a line starting with a dot is SQL.
    expect(step('SELECT 1', '.5;')).toEqual({ run: 'SELECT 1\n.5;' });
  });

  it('suggests the closest table, and none when nothing is near', () => {
    expect(closest('erc20_transfers', ['erc_transfers', 'erc20_balances', 'blocks'])).toBe('erc_transfers');
    expect(closest('zzzzzz', ['erc_transfers', 'blocks'])).toBeUndefined();
    expect(queryError('Catalog Error: Table with name erc20_transfers does not exist!\nDid you mean "pg_prepared_statements"?', ['erc_transfers', 'blocks'])).toBe(
      'no table erc20_transfers in the lake; did you mean erc_transfers? (`chainlake tables` lists every table; a table not fetched yet is empty)',
    );
    expect(queryError('Parser Error: syntax error at or near "SELEC"', ['blocks'])).toBe('Parser Error: syntax error at or near "SELEC"');
  });
});

describe('chainlake query', () => {
  it('reads SQL on standard input and prints every statement in turn (SET and the like print nothing)', () => {
    const r = query(['--lake', lake], "SET threads = 1;\nSELECT count(*)::INT AS n FROM erc_transfers;\nSELECT 'two' AS second;\n");
    expect(r.code, r.stderr).toBe(0);
    const n = /^n\n-+\n(\d+)\n\(1 row\)\n\nsecond\n------\ntwo\n\(1 row\)\n$/.exec(r.stdout);
    expect(n, r.stdout).not.toBeNull();
    expect(Number(n![1])).toBeGreaterThan(0);
    // The same from the command line, and as CSV: each result its own block.
    expect(query(['--lake', lake, '--format', 'csv', 'SELECT 1 AS a; SELECT 2 AS b']).stdout).toBe('a\n1\n\nb\n2\n');
  });

  it('a mistyped table: exit 2 with the lake\'s closest table, not DuckDB\'s catalog', () => {
    const r = query(['--lake', lake, 'SELECT count(*) FROM erc20_transfers']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('chainlake: query: no table erc20_transfers in the lake; did you mean erc_transfers? (`chainlake tables` lists every table; a table not fetched yet is empty)\n');
    expect(r.stderr).not.toContain('pg_prepared_statements');
  });

  it('a table the lake holds no rows of is said on stderr when the SQL reads it, not when a word of it only looks like one', () => {
    // blocks and chains: tables the demo's pipeline does not fetch.
    const read = query(['--lake', lake, '--format', 'csv', 'SELECT (SELECT count(*) FROM blocks) AS a, (SELECT count(*) FROM chains) AS b, (SELECT count(*) > 0 FROM erc_transfers) AS c']);
    expect(read).toMatchObject({ code: 0, stdout: 'a,b,c\n0,0,true\n', stderr: 'chainlake: blocks, chains: no rows in this lake (no run has fetched them), so the answer reads them as empty\n' });
    expect(query(['--lake', lake, '--format', 'csv', 'WITH blocks AS (SELECT 1 AS x) SELECT count(*) AS chains FROM blocks'])).toMatchObject({ code: 0, stdout: 'chains\n1\n', stderr: '' });
    expect(query(['--lake', lake, '--format', 'csv', 'SELECT count(*) > 0 AS blocks FROM erc_transfers'])).toMatchObject({ code: 0, stderr: '' });
  });

  it('empty SQL on standard input, or a prompt asked for with Arrow: exit 2', () => {
    expect(query(['--lake', lake], '  \n')).toMatchObject({ code: 2, stderr: 'chainlake: query: the SQL is empty\n' });
    expect(query(['--lake', lake, '-i', '--format', 'arrow'])).toMatchObject({ code: 2 });
  });

  it('-i: a prompt over the lake: multi-line statements, .tables, .schema, an error that does not end it, and history', () => {
    const r = query(['--lake', lake, '-i'], ['.tables', 'SELECT count(*)::INT AS n', '  FROM erc_transfers;', '.schema erc_tranfers', '.schema avg_tps', 'SELECT * FROM nope;', 'SELECT 42 AS answer;', '.quit', 'SELECT 0;'].join('\n') + '\n');
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout;
    expect(out).toContain(`chainlake query over ${lake}: .tables lists the tables`);
    // The tables the lake holds rows of, each with its rows as a count of the table says, then the empty ones on a line.
    const count = Number(query(['--lake', lake, '--format', 'csv', 'SELECT count(*) FROM erc_transfers']).stdout.split('\n')[1]);
    expect(out).toMatch(new RegExp(`\\nerc_transfers +${count.toLocaleString('en-US')} rows\\n`));
    expect(out).toMatch(/\n_rejects, _runs: the lake's own \(rejected rows, run reports\)\nno rows in this lake \(not fetched\): [a-z0-9_, ]+\n/);
    expect(out).toMatch(/\nn\n-+\n\d+\n\(1 row\)\n/);
    expect(out).toContain('no table erc_tranfers; did you mean erc_transfers? (.tables lists them)');
    expect(out).toMatch(/column_name +column_type[^\n]*\n[- ]+\nchain_id +VARCHAR/);
    expect(out).toContain('Error: no table nope in the lake');
    expect(out).toContain('answer\n------\n42\n(1 row)');
    // Nothing after .quit ran.
    expect(out).not.toContain('\n0\n(1 row)');
    expect(readFileSync(history, 'utf8').split('\n')).toEqual(expect.arrayContaining(['.tables', 'SELECT count(*)::INT AS n   FROM erc_transfers;', 'SELECT 42 AS answer;']));
  });
});
