import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lakeTypes, tablesDoc } from '../src/cli/docs.js';
import { STREAMS } from '../src/streams/index.js';
import { LAKE_TABLES } from '../src/warehouse/views.js';

describe('docs/tables.md (the table reference)', () => {
  it('is the one generated from the declarations (run `make docs` after changing a stream)', () => {
    const file = readFileSync('docs/tables.md', 'utf8');
    const generated = tablesDoc();
    expect(file).toBe(generated);
    for (const s of STREAMS) {
      expect(generated).toContain(`\n## ${s.table}\n\n${s.doc}.\n`);
      expect(generated).toContain(`| [${s.table}](#${s.table}) | ${s.service} |`);
    }
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
