// `chainlake status`: a table that fits a 100-column terminal (ids shortened, never dropped), and
// every partition whole as JSON for scripts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, beforeAll } from 'vitest';
import { slug, StateStore } from '../../src/state/store.js';
import { isTableData } from '../../src/state/names.js';
import { shortenId, statusTable } from '../../src/cli/status.js';
import { cliHere, DEMO_TABLES, demoLake } from '../lake-fixture.js';

let lake: string;

beforeAll(async () => {
  ({ lake } = await demoLake([...DEMO_TABLES, 'utxos', 'address_chains']));
});

describe('chainlake status', () => {
  it('off a terminal, the table fits 100 columns with a line per partition', async () => {
    const states = new StateStore(lake).all();
    // The lake has ids far wider than a terminal: rewards queries listing validators.
    expect(Math.max(...states.map((s) => `${s.table}/${s.partition}`.length))).toBeGreaterThan(100);
    const r = await cliHere(['status', '--lake', lake]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBe(2 + states.length);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);
    expect(lines[0]).toMatch(/^partition\s+cursor\s+rows\s+files\s+last run \(UTC\)$/);
    // Each row starts with its table, and holds its rows and its cursor's block or time.
    states.forEach((s, i) => {
      const row = lines[2 + i]!;
      expect(row.startsWith(`${s.table}/`)).toBe(true);
      expect(row).toMatch(new RegExp(`\\s${s.rows}\\s+${s.files.filter((f) => isTableData(s.table, f)).length}\\s`));
      if (s.cursor.nextBlock !== undefined) expect(row).toContain(`next block ${s.cursor.nextBlock}`);
    });
  });

  it('--format json: every partition whole, as the state store holds it', async () => {
    const r = await cliHere(['status', '--lake', lake, '--format', 'json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    const states = new StateStore(lake).all();
    expect(doc.lake).toBe(new StateStore(lake).lake);
    expect(doc.partitions).toEqual(
      states.map((s) => ({ table: s.table, partition: s.partition, ...(s.values ? { values: s.values } : {}), cursor: s.cursor, ...(s.from !== undefined ? { from: s.from } : {}), rows: s.rows, rejects: s.rejects, files: s.files.length, dataFiles: s.files.filter((f) => isTableData(s.table, f)).length, rawFiles: s.files.filter((f) => f.startsWith('_raw/')).length, lastRun: s.lastRun, ...(s.head ? { head: s.head } : {}) })),
    );
    const longest = states.map((s) => s.partition).sort((a, b) => b.length - a.length)[0]!;
    expect(doc.partitions.map((p: { partition: string }) => p.partition)).toContain(longest);
  });

  it('a lake without partitions (a run report only): a sentence, or an empty list as JSON; a folder that is missing or holds no lake: exit 2', async () => {
    const empty = `${lake}-none`;
    mkdirSync(join(empty, '_runs'), { recursive: true });
    expect(await cliHere(['status', '--lake', empty])).toEqual({ code: 0, stdout: `no partitions in ${empty} yet\n`, stderr: '' });
    expect(JSON.parse((await cliHere(['status', '--lake', empty, '--format', 'json'])).stdout)).toMatchObject({ partitions: [] });
    rmSync(join(empty, '_runs'), { recursive: true });
    expect(await cliHere(['status', '--lake', empty])).toMatchObject({ code: 2, stderr: `chainlake: --lake ${empty}: no lake there (no partition state and no run report in this folder)\n` });
    expect(await cliHere(['status', '--lake', `${lake}-missing`, '--format', 'json'])).toEqual({ code: 2, stdout: '', stderr: `chainlake: --lake ${lake}-missing: no such folder\n` });
  });

  it('a wide terminal gets everything whole; a narrow one shortens ids and cursors to fit', () => {
    const states = new StateStore(lake).all();
    const wide = statusTable(states, 1000).split('\n');
    states.forEach((s, i) => expect(wide[2 + i]!.startsWith(`${s.table}/${s.partition} `)).toBe(true));
    for (const width of [80, 120]) for (const l of statusTable(states, width).split('\n')) expect(l.length).toBeLessThanOrEqual(width);
  });
});

describe('no two partitions alike', () => {
  it('ids that would be cut alike (validator lists that differ in the middle) show where they differ', async () => {
    const lake = mkdtempSync(join(tmpdir(), 'cl-status-alike-'));
    const nodes = (middle: string) => `mainnet/currency=usd/nodeIds=NodeID-A6onFGyJjA37EZ7kYHANMR1PFRT8NmXrF,${middle},NodeID-6SwnPJLH8cWfrJ162JjZekbmzaFpjPcf`;
    const partitions = [nodes('NodeID-7Xhw2mDxuDS44j42TCB6U5579esbSt3Lg'), nodes('NodeID-MFrZFVCXPv5iCn6M9K6XduxGTYp891xXZ')];
    mkdirSync(join(lake, '_state', 'historical_rewards'), { recursive: true });
    for (const partition of partitions)
      writeFileSync(join(lake, '_state', 'historical_rewards', `${slug(partition)}.json`), JSON.stringify({ table: 'historical_rewards', partition, files: [], rows: 7, rejects: 0, cursor: {} }));
    const r = await cliHere(['status', '--lake', lake]);
    expect(r.code).toBe(0);
    const rows = r.stdout.trimEnd().split('\n').slice(2);
    expect(rows).toHaveLength(2);
    expect(rows[0]).not.toBe(rows[1]);
    expect(rows[0]).toContain('7Xhw2mDxuDS44j42TCB6U5579esbSt3Lg');
    expect(rows[1]).toContain('MFrZFVCXPv5iCn6M9K6XduxGTYp891xXZ');
    for (const l of rows) expect(l.startsWith('historical_rewards/')).toBe(true);
  });
});

describe('shortenId', () => {
  const address = 'erc_transfers/43114/0xb97ef9ef8734c71904d8002f8b6bc66dd9c48a6e';

  it('cuts the long parts in the middle, keeping the table, the chain and both ends of the address', () => {
    const s = shortenId(address, 30);
    expect(s.length).toBe(30);
    expect(s).toMatch(/^erc_transfers\/43114\/0xb97\w*…\w*a6e$/);
    expect(shortenId(address, address.length)).toBe(address);
  });

  it('cuts the id after the table as a whole when its parts would be cut to nothing', () => {
    const id = 'historical_rewards/mainnet/currency=usd/nodeIds=NodeID-A6onFGyJjA37EZ7kYHANMR1PFRT8NmXrF,NodeID-6SwnPJLH8cWfrJ162JjZekbmzaFpjPcf';
    const s = shortenId(id, 44);
    expect(s.length).toBe(44);
    expect(s.startsWith('historical_rewards/mainnet/')).toBe(true);
    expect(s.endsWith('FpjPcf')).toBe(true);
  });
});
