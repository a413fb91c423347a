import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lakeTypes, tablesDoc } from '../../src/cli/docs.js';
import { STREAMS } from '../../src/streams/index.js';
import { LAKE_TABLES } from '../../src/warehouse/views.js';

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
    // An amount is Utf8 of its exact digits in the library (BIGNUM in its SQL), and says what to sum.
    expect(generated).toContain("Exact in chainlake's SQL (BIGNUM): sum(value) as it is; in the Parquet files DECIMAL(38,0), NULL over 38 digits: sum value_raw::BIGNUM there */\n    value: Utf8;\n    /** exact digits of value as received (text) */\n    value_raw: Utf8;");
  });
});

/** GitHub's anchor of a heading: lowercased, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The lines of a markdown file outside fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (line.startsWith('```')) fenced = !fenced;
    return !fenced && !line.startsWith('```');
  });
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  for (const line of prose(readFileSync(file, 'utf8'))) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const a = anchor(m[1]!);
    const n = seen.get(a) ?? 0;
    seen.set(n ? `${a}-${n}` : a, 0);
    seen.set(a, n + 1);
  }
  return new Set(seen.keys());
}

describe('links of README.md and docs/*.md', () => {
  it('every relative link names a file that exists and, into a markdown file, one of its headings', () => {
    const files = ['README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const line of prose(readFileSync(file, 'utf8'))) {
        for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
          const link = m[1]!;
          if (/^[a-z]+:/.test(link)) continue;
          checked++;
          const [path, hash] = link.split('#') as [string, string | undefined];
          const target = path ? join(dirname(file), path) : file;
          if (!existsSync(target)) broken.push(`${file}: ${link} (no file ${target})`);
          else if (hash !== undefined && target.endsWith('.md') && !anchorsOf(target).has(hash)) broken.push(`${file}: ${link} (no heading #${hash} in ${target})`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(files.length);
  });
});
