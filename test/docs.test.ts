import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lakeTypes, withDictionary } from '../src/cli/docs.js';
import { STREAMS } from '../src/streams/index.js';
import { LAKE_TABLES } from '../src/warehouse/views.js';

describe('README table dictionary', () => {
  it('is the one generated from the declarations (run `make docs` after changing a stream)', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme).toBe(withDictionary(readme));
    for (const s of STREAMS) expect(readme).toContain(`### ${s.table}`);
  });
});

describe('src/tables.ts (the library\'s row types)', () => {
  it('is the one generated from the declarations (run `make docs` after changing a stream)', async () => {
    const generated = await lakeTypes();
    expect(readFileSync('src/tables.ts', 'utf8')).toBe(generated);
    for (const d of LAKE_TABLES) expect(generated).toContain(`  ${d.table}: {\n`);
    expect(generated).toContain('    value: Decimal;\n    /** exact digits of value as received */\n    value_raw: Utf8;');
  });
});
