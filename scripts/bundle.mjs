// Bundles the command line (dist/cli/main.js, as tsc compiled it) into dist/bin/, the code
// bin/chainlake.js runs: a command's process then reads and compiles a handful of files instead of
// hundreds (chainlake's own modules, yargs, apache-arrow, the AWS SDK, pg), which was about half of
// a short command's CPU and a fifth of a demo run's. The library (dist/index.js) stays as tsc wrote
// it. `npm run build` runs this after tsc.
//
// Left outside the bundle: DuckDB (a native addon, loaded by require from its package), pino and
// its transports (it starts them in worker threads by module name) and pg's optional native
// binding. dist/bin/ sits as deep as dist/cli/, so that a path a module finds from its own place
// (the bundled SQL in sql/) is found from the bundle too.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = `${ROOT}dist/bin`;
const EXTERNAL = /^@duckdb\/|^pino(-pretty|-abstract-transport|-std-serializers)?(\/|$)|^thread-stream(\/|$)|^pg-native$|\.node$/;

rmSync(OUT, { recursive: true, force: true });
await build({
  input: { main: `${ROOT}dist/cli/main.js` },
  platform: 'node',
  external: (id) => EXTERNAL.test(id),
  logLevel: 'warn',
  output: { dir: OUT, format: 'esm', sourcemap: true, chunkFileNames: '[name]-[hash].js' },
});
