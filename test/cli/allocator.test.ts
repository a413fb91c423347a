import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cl-allocator-'));
// Loaded before the binary: at exit, it says what DuckDB's allocator setting the command left.
const hook = join(dir, 'hook.mjs');
writeFileSync(hook, `process.on('exit', () => process.stderr.write('\\nsetting=' + (process.env.DUCKDB_JE_MALLOC_CONF ?? 'none') + '\\n'));\n`);

/** DuckDB's allocator setting `chainlake <args>` runs with (each command fails early: no lake). */
function settingOf(args: string[], env: Record<string, string> = {}): string {
  // The suite's own setting (tmpdir.setup.ts) is not the user's.
  const { DUCKDB_JE_MALLOC_CONF: _suite, ...inherited } = process.env;
  const r = spawnSync(process.execPath, ['--import', hook, BIN, ...args], { encoding: 'utf8', env: { ...inherited, ...env }, timeout: 120_000, cwd: dir });
  return /setting=(.*)/.exec(r.stderr)?.[1] ?? `no setting: ${r.stderr}`;
}

describe("DuckDB's allocator, set per command by bin/chainlake.js", () => {
  const lake = join(dir, 'none');
  it('keeps freed pages a little while for a rebuild, hands them back at once for a run and a compact, and leaves queries alone', () => {
    expect(settingOf(['rebuild', 'erc_transfers', '--lake', lake])).toBe('dirty_decay_ms:50,muzzy_decay_ms:50');
    expect(settingOf(['run', join(dir, 'nope.yaml'), '--lake', lake])).toBe('dirty_decay_ms:0,muzzy_decay_ms:0');
    expect(settingOf(['compact', 'erc_transfers', '--lake', lake])).toBe('dirty_decay_ms:0,muzzy_decay_ms:0');
    expect(settingOf(['query', 'SELECT 1', '--lake', lake])).toBe('none');
  }, 300_000);

  it("leaves a user's setting as it is", () => {
    expect(settingOf(['rebuild', 'erc_transfers', '--lake', lake], { DUCKDB_JE_MALLOC_CONF: 'dirty_decay_ms:7' })).toBe('dirty_decay_ms:7');
  }, 120_000);
});
