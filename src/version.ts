// The package's version, from its package.json (one folder up from src/ and from dist/): what
// `chainlake --version` prints and what a warehouse file records as its writer.
import { readFileSync } from 'node:fs';

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
