// The package's version, from its package.json: what `chainlake --version` prints and what a
// warehouse file records as its writer. The file is one folder up from src/ and dist/, two from
// the bundled command line (dist/bin/).
import { existsSync, readFileSync } from 'node:fs';

function packageVersion(): string {
  for (const up of ['../package.json', '../../package.json']) {
    const file = new URL(up, import.meta.url);
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version: string };
    if (pkg.name === 'chainlake') return pkg.version;
  }
  throw new Error(`chainlake: no package.json of chainlake above ${import.meta.url}`);
}

export const VERSION: string = packageVersion();
