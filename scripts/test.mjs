// `npm test` after the build: the type check of the tests (tsc, one core) beside the suite
// (vitest), not before it, on a machine whose cores the suite does not always fill. Arguments go to
// vitest (`npm test -- test/cli`); the command fails if either does.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
/** A package's command, where its package.json names it (`bin`). */
const bin = (pkg, name) => {
  const manifest = require.resolve(`${pkg}/package.json`);
  return join(dirname(manifest), require(manifest).bin[name]);
};
const run = (file, args) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [file, ...args], { stdio: 'inherit' });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });

const [types, tests] = await Promise.all([
  run(bin('typescript', 'tsc'), ['-p', 'tsconfig.json', '--noEmit']),
  run(bin('vitest', 'vitest'), ['run', ...process.argv.slice(2)]),
]);
if (types !== 0) console.error('npm test: the type check failed (tsc -p tsconfig.json --noEmit)');
process.exitCode = tests || types;
