// `chainlake query` of plainly valid arguments starts without yargs and the other commands'
// modules (src/cli/plain.ts): loading them and letting yargs parse was most of its start-up past
// DuckDB's own. yargs fails here: a query that went through it would fail with it.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';

vi.mock('yargs', () => ({
  default: () => {
    throw new Error('yargs loaded');
  },
}));

const lake = mkdtempSync(join(tmpdir(), 'cl-startup-'));
mkdirSync(join(lake, '_state'));

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

/** main's exit code and what it wrote. */
async function run(argv: string[]): Promise<{ code: unknown; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((stdout += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((stderr += String(s)), true));
  await main(argv);
  return { code: process.exitCode, stdout, stderr };
}

it('a query of plainly valid arguments runs without loading yargs', async () => {
  expect(await run(['query', 'SELECT 42 AS answer', '--lake', lake, '--format', 'csv', '--no-warehouse'])).toEqual({ code: 0, stdout: 'answer\n42\n', stderr: '' });
  expect(await run(['query', '--lake', lake, '-- the answer\nSELECT 42 AS answer', '--format=json'])).toEqual({ code: 0, stdout: '[\n {\n  "answer": 42\n }\n]\n', stderr: '' });
});

it('a query with a mistake in its arguments goes to yargs', async () => {
  const r = await run(['query', 'SELECT 1', '--lake', lake, '--format', 'xml']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('yargs loaded');
});
