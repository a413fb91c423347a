// `chainlake tables [name]`: the table reference from the declarations, in a terminal.
import { describe, expect, it } from 'vitest';
import { STREAMS } from '../../src/streams/index.js';
import { landedColumns } from '../../src/transform/columns.js';
import { cliHere } from '../lake-fixture.js';

const squash = (s: string) => s.replace(/\s+/g, ' ');

describe('chainlake tables', () => {
  it('lists every table with its service, in lines of at most 100 columns', async () => {
    const r = await cliHere(['tables']);
    expect(r.code).toBe(0);
    for (const d of STREAMS) expect(r.stdout).toMatch(new RegExp(`^${d.table} +${d.service} `, 'm'));
    for (const line of r.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('prints one table from its declaration: columns with their types, key and refresh', async () => {
    const d = STREAMS.find((s) => s.table === 'erc_transfers')!;
    const r = await cliHere(['tables', d.table]);
    expect(r.code).toBe(0);
    const columns = landedColumns(d);
    expect(columns.length).toBeGreaterThan(0);
    const escape = (s: string) => s.replace(/[()]/g, '\\$&');
    for (const [name, type] of columns) expect(r.stdout).toMatch(new RegExp(`^${name} +${escape(type)}( |$)`, 'm'));
    const text = squash(r.stdout);
    expect(text).toContain(`key ${d.key.join(', ')}`);
    expect(text).toContain(`refresh ${d.refresh}`);
    expect(text).toContain(`GET ${d.endpoint}`);
    for (const c of d.columns) expect(text).toContain(c.doc);
    for (const line of r.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('exits 2 on an unknown table, naming it and the one meant, not every table', async () => {
    const r = await cliHere(['tables', 'erc_transfer']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('chainlake: tables erc_transfer: no such table; did you mean erc_transfers? (`chainlake tables` lists them)\n');
  });
});
