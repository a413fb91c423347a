// address_transactions_v2's sortOrder: the listing is landed newest first only (its block ranges are
// split, resumed and committed from the newest block down), so `asc` is refused when the pipeline
// is checked, with the reason, exit 2 and nothing written; `desc` is taken.
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pipelineProblem as check, runCli } from '../helpers.js';

const ADDRESS = '0x00000000000000000000000000000000000000aa';

describe('address_transactions_v2 sortOrder', () => {
  it('refuses asc naming the place and why, takes desc, and refuses what is neither', () => {
    const entry = { table: 'address_transactions_v2', chainId: '43114', addresses: [ADDRESS], startBlock: 0 };
    expect(check([{ ...entry, sortOrder: 'asc' }])).toMatch(/^x\.yaml: streams\[0\]\.sortOrder: asc is not supported: .*newest first/);
    expect(check([{ ...entry, sortOrder: 'desc' }])).toBe('');
    expect(check([{ ...entry, sortOrder: 'sideways' }])).toContain('streams[0].sortOrder');
    // The block range's own check still applies beside it.
    expect(check([{ ...entry, sortOrder: 'desc', startTimestamp: 1_700_000_000 }])).toContain('streams[0].startTimestamp: give startBlock or startTimestamp, not both');
  });

  it('a run asked for asc exits 2 before anything is fetched or written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-v2order-'));
    const file = join(dir, 'p.yaml');
    writeFileSync(file, [
      'name: v2order',
      'sources:',
      '  data: { url: "http://127.0.0.1:1", apiKey: "k" }',
      'streams:',
      `  - { table: address_transactions_v2, chainId: "43114", addresses: ["${ADDRESS}"], startBlock: 0, sortOrder: asc }`,
      '',
    ].join('\n'));
    const lake = join(dir, 'lake');
    const r = await runCli(['run', file, '--lake', lake, '--quiet', '--no-warehouse']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('streams[0].sortOrder: asc is not supported');
    expect(existsSync(lake) ? readdirSync(lake) : []).toEqual([]);
  });
});
