import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { withDictionary } from '../src/cli/docs.js';
import { STREAMS } from '../src/streams/index.js';

describe('README table dictionary', () => {
  it('is the one generated from the declarations (run `make docs` after changing a stream)', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme).toBe(withDictionary(readme));
    for (const s of STREAMS) expect(readme).toContain(`### ${s.table}`);
  });
});
